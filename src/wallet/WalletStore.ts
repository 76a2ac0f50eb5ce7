// The queries of wallet_service (DESIGN section 7): approving a pending deposit and crediting its
// player in one transaction (wallet.agree, migration 0008, whose keys back every rule), several
// such approvals in one transaction (wallet.agree_batch, src/db/sql/agree_batch.sql), and reading a balance.
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { amountText, decodeRows } from "../db/Codecs.ts"
import { DepositNotFound } from "../db/DepositStore.ts"
import { DbId } from "../domain/PgValues.ts"

/** No player has this id. */
export class PlayerNotFound extends Schema.TaggedError<PlayerNotFound>()("PlayerNotFound", {
  playerId: Schema.Int
}) {}

/** The approval would credit twice or fund two deposits with one SMS; `detail` says which. */
export class AgreeConflict extends Schema.TaggedError<AgreeConflict>()("AgreeConflict", {
  detail: Schema.String
}) {}

/** What a WalletStore method can fail with besides the SqlError. */
export type WalletStoreError = DepositNotFound | PlayerNotFound | AgreeConflict

export interface Agreed {
  readonly depositId: number
  /** True when the deposit had been approved before: nothing was credited now. */
  readonly replayed: boolean
}

const Outcome = Schema.Literals(["approved", "replayed", "conflict", "not_found"])
const AgreeRow = Schema.Struct({ outcome: Outcome, detail: Schema.NullOr(Schema.String) })
const AgreeBatchRow = Schema.Struct({ ord: DbId, outcome: Outcome, detail: Schema.NullOr(Schema.String) })

/** One approval of a batch, as wallet.agree decided it. */
export interface AgreedItem {
  readonly depositId: number
  readonly outcome: typeof Outcome.Type
  readonly detail: string | null
}

/** One approval of a batch as the caller names it. */
export interface AgreeItem {
  readonly depositId: number
  readonly smsId: number | null
}

export interface WalletStoreShape {
  /**
   * Approves pending deposit `depositId` (funded by SMS `smsId`, when given) and credits its
   * player once, all in one transaction; a deposit approved before is a replay. A concurrent
   * approval that links the same SMS first loses the unique key race here: a conflict too.
   */
  readonly agree: (depositId: number, smsId: number | null) => Effect.Effect<Agreed, DepositNotFound | AgreeConflict | SqlError.SqlError>
  /**
   * Several approvals in one transaction and one commit (wallet.agree_batch): each item exactly
   * as `agree` decides it, a conflict or an unknown deposit answered for that item alone.
   * Answers the items in the order given.
   */
  readonly agreeBatch: (items: ReadonlyArray<AgreeItem>) => Effect.Effect<ReadonlyArray<AgreedItem>, SqlError.SqlError>
  /** The player's balance as a decimal string; "0" when never credited. */
  readonly balance: (playerId: number) => Effect.Effect<string, PlayerNotFound | SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const decodeAgree = Schema.decodeUnknownEffect(AgreeRow)
  const decodeBatch = decodeRows(AgreeBatchRow)

  // No span of its own: the handler's wallet.agree.transaction is this transaction's span, its
  // statement directly beneath it (test/observability/SmsTrace.test.ts reads the trace so).
  const agree = Effect.fnUntraced(
    function*(depositId: number, smsId: number | null) {
      const [raw] = yield* sql`SELECT outcome, detail FROM wallet.agree(${depositId}, ${smsId})`
      const row = yield* Effect.orDie(decodeAgree(raw))
      switch (row.outcome) {
        case "approved":
          return { depositId, replayed: false }
        case "replayed":
          return { depositId, replayed: true }
        case "not_found":
          return yield* new DepositNotFound({ depositId })
        case "conflict":
          return yield* new AgreeConflict({ detail: row.detail ?? "conflict" })
      }
    },
    (effect, _depositId, smsId) =>
      effect.pipe(Effect.catchIf(
        (error) => SqlError.isSqlError(error) && error.reason instanceof SqlError.UniqueViolation,
        () => Effect.fail(new AgreeConflict({ detail: smsId === null ? "the SMS already funds another deposit" : `SMS ${smsId} already funds another deposit` }))
      ))
  )

  const agreeBatch = Effect.fn("WalletStore.agreeBatch")(function*(items: ReadonlyArray<AgreeItem>) {
    const rows = yield* sql`SELECT ord, outcome, detail FROM wallet.agree_batch(${
      JSON.stringify(items.map((item) => ({ deposit_id: item.depositId, sms_id: item.smsId })))
    }::jsonb)`.pipe(Effect.flatMap(decodeBatch))
    const byOrd = new Map(rows.map((row) => [row.ord, row]))
    if (byOrd.size !== items.length) return yield* Effect.die(new Error(`wallet.agree_batch answered ${byOrd.size} of ${items.length} items`))
    return items.map((item, i): AgreedItem => ({ depositId: item.depositId, outcome: byOrd.get(i + 1)!.outcome, detail: byOrd.get(i + 1)!.detail }))
  })

  const balance = Effect.fn("WalletStore.balance")(function*(playerId: number) {
    const [row] = yield* sql<{ balance: string }>`SELECT COALESCE(${sql.literal(amountText("b.balance"))}, '0') AS balance
      FROM recon.player AS p LEFT JOIN wallet.balance AS b ON b.player_id = p.id WHERE p.id = ${playerId}`
    if (row === undefined) return yield* new PlayerNotFound({ playerId })
    return row.balance
  })

  return { agree, agreeBatch, balance } satisfies WalletStoreShape
})

export class WalletStore extends Context.Service<WalletStore, WalletStoreShape>()("recon/wallet/WalletStore") {
  static readonly layer = Layer.effect(WalletStore, make)
}
