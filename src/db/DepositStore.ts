// Pending deposits as the platform writes them (docs/API.md, "Pending deposits"): a player found by name
// or created, and a pending deposit for it; and the list of deposits, newest first.
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { amountText, decodeRows } from "./Codecs.ts"
import { DbId, DbTime, DbTimeOrNull } from "../domain/PgValues.ts"

export const DEPOSIT_STATUSES = ["pending", "approved", "rejected", "expired"] as const
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number]

/** No deposit has this id (recon_service resolving a review, wallet_service agreeing). */
export class DepositNotFound extends Schema.TaggedError<DepositNotFound>()("DepositNotFound", { depositId: Schema.Int }) {}

/** Several players have this exact name: which one a new deposit is for is not clear. */
export class AmbiguousPlayer extends Schema.TaggedError<AmbiguousPlayer>()("AmbiguousPlayer", {
  name: Schema.String,
  count: Schema.Int
}) {}

export const DepositRow = Schema.Struct({
  id: DbId,
  player_id: DbId,
  player: Schema.String,
  from_bank_owner: Schema.String,
  amount: Schema.String,
  status: Schema.String,
  task_status: Schema.NullOr(Schema.Number),
  sms_id: Schema.NullOr(DbId),
  created_at: DbTime,
  approved_at: DbTimeOrNull
})
export type DepositRow = typeof DepositRow.Type

export interface NewDeposit {
  readonly player: string
  /** A decimal string, > 0. */
  readonly amount: string
  /** The account holder's name the bank SMS will show; the player's name when absent. */
  readonly owner?: string | undefined
}

export interface DepositStoreShape {
  /** Creates a pending deposit (and its player when no player has the name); answers the deposit's and player's ids. */
  readonly create: (
    input: NewDeposit
  ) => Effect.Effect<{ readonly depositId: number; readonly playerId: number; readonly playerCreated: boolean }, AmbiguousPlayer | SqlError.SqlError>
  /** Deposits newest first, optionally of one status. */
  readonly list: (filter: { readonly status?: DepositStatus | undefined; readonly limit: number }) => Effect.Effect<ReadonlyArray<DepositRow>, SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const decodeDeposits = decodeRows(DepositRow)

  const create = Effect.fn("DepositStore.create")(function*(input: NewDeposit) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      // Two creations for a new name at once would make two players: one at a time per name.
      yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`player-name:${input.player}`}, 0))`
      const players = yield* sql<{ id: bigint; n: bigint }>`SELECT id, count(*) OVER () AS n
        FROM recon.player WHERE name = ${input.player} ORDER BY id LIMIT 1`
      if (players.length > 0 && Number(players[0]!.n) > 1) {
        return yield* new AmbiguousPlayer({ name: input.player, count: Number(players[0]!.n) })
      }
      const created = players.length === 0
      const playerId = created
        ? Number((yield* sql<{ id: bigint }>`INSERT INTO recon.player (name) VALUES (${input.player}) RETURNING id`)[0]!.id)
        : Number(players[0]!.id)
      const [deposit] = yield* sql<{ id: bigint }>`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
        VALUES (${playerId}, ${input.owner ?? input.player}, ${input.amount}::numeric) RETURNING id`
      return { depositId: Number(deposit!.id), playerId, playerCreated: created }
    }))
  })

  const list = Effect.fn("DepositStore.list")(function*(filter: { readonly status?: DepositStatus | undefined; readonly limit: number }) {
    return yield* decodeDeposits(yield* sql`SELECT d.id, d.player_id, p.name AS player, d.from_bank_owner, ${sql.literal(amountText("d.amount"))} AS amount, d.status,
        d.task_status, d.sms_id, d.created_at, d.approved_at
      FROM recon.deposit AS d JOIN recon.player AS p ON p.id = d.player_id
      WHERE ${filter.status === undefined ? sql`true` : sql`d.status = ${filter.status}`}
      ORDER BY d.created_at DESC, d.id DESC LIMIT ${filter.limit}`)
  })

  return { create, list } satisfies DepositStoreShape
})

export class DepositStore extends Context.Service<DepositStore, DepositStoreShape>()("recon/db/DepositStore") {
  static readonly layer = Layer.effect(DepositStore, make)
}
