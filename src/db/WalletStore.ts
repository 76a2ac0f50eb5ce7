// The queries of wallet_service (DESIGN section 7): approving a pending deposit and crediting its
// player in one transaction, and reading a balance. Migration 0008's keys back every rule here.
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { DbId } from "./Codecs.ts"

/** No deposit has this id. */
export class DepositNotFound extends Schema.TaggedError<DepositNotFound>()("DepositNotFound", {
  depositId: Schema.Int
}) {}

/** No player has this id. */
export class PlayerNotFound extends Schema.TaggedError<PlayerNotFound>()("PlayerNotFound", {
  playerId: Schema.Int
}) {}

/** The approval would credit twice or fund two deposits with one SMS; `detail` says which. */
export class AgreeConflict extends Schema.TaggedError<AgreeConflict>()("AgreeConflict", {
  detail: Schema.String
}) {}

export interface Agreed {
  readonly depositId: number
  /** True when the deposit had been approved before: nothing was credited now. */
  readonly replayed: boolean
}

const DepositRow = Schema.Struct({
  id: DbId,
  player_id: DbId,
  amount: Schema.String,
  status: Schema.String,
  sms_id: Schema.NullOr(DbId)
})

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const decodeDeposit = Schema.decodeUnknownEffect(DepositRow)

  const approve = (depositId: number, smsId: number | null) =>
    Effect.gen(function*() {
      const [raw] = yield* sql`SELECT id, player_id, amount::text AS amount, status, sms_id
        FROM recon.deposit WHERE id = ${depositId} FOR UPDATE`
      if (raw === undefined) return yield* new DepositNotFound({ depositId })
      const deposit = yield* Effect.orDie(decodeDeposit(raw))
      if (deposit.status === "approved") {
        if (smsId !== null && deposit.sms_id !== smsId) {
          return yield* new AgreeConflict({ detail: `deposit ${depositId} was approved with another SMS` })
        }
        return { depositId, replayed: true }
      }
      if (deposit.status !== "pending") {
        return yield* new AgreeConflict({ detail: `deposit ${depositId} is ${deposit.status}, not pending` })
      }
      if (smsId !== null && deposit.sms_id !== null && deposit.sms_id !== smsId) {
        return yield* new AgreeConflict({ detail: `deposit ${depositId} is linked to another SMS` })
      }
      const sms = smsId ?? deposit.sms_id
      if (sms !== null) {
        const [other] = yield* sql<{ id: unknown }>`SELECT id FROM recon.deposit WHERE sms_id = ${sms} AND id <> ${depositId}`
        if (other !== undefined) return yield* new AgreeConflict({ detail: `SMS ${sms} already funds another deposit` })
      }
      yield* sql`UPDATE recon.deposit SET status = 'approved', approved_at = now(), sms_id = ${sms} WHERE id = ${depositId}`
      yield* sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount)
        VALUES (${deposit.player_id}, ${depositId}, ${sms}, ${deposit.amount}::numeric)`
      yield* sql`INSERT INTO wallet.balance (player_id, balance) VALUES (${deposit.player_id}, ${deposit.amount}::numeric)
        ON CONFLICT (player_id) DO UPDATE SET balance = wallet.balance.balance + EXCLUDED.balance, updated_at = now()`
      return { depositId, replayed: false }
    })

  return {
    /**
     * Approves pending deposit `depositId` (funded by SMS `smsId`, when given) and credits its
     * player once, all in one transaction; a deposit approved before is a replay. A concurrent
     * approval that links the same SMS first loses the unique key race here: a conflict too.
     */
    agree: (depositId: number, smsId: number | null): Effect.Effect<Agreed, DepositNotFound | AgreeConflict | SqlError.SqlError> =>
      sql.withTransaction(approve(depositId, smsId)).pipe(
        Effect.catchIf(
          (error) => SqlError.isSqlError(error) && error.reason instanceof SqlError.UniqueViolation,
          () => Effect.fail(new AgreeConflict({ detail: `SMS ${smsId} already funds another deposit` }))
        )
      ),

    /** The player's balance as a decimal string; "0" when never credited. */
    balance: (playerId: number): Effect.Effect<string, PlayerNotFound | SqlError.SqlError> =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ balance: string }>`SELECT COALESCE(b.balance::text, '0') AS balance
          FROM recon.player AS p LEFT JOIN wallet.balance AS b ON b.player_id = p.id WHERE p.id = ${playerId}`
        if (row === undefined) return yield* new PlayerNotFound({ playerId })
        return row.balance
      })
  }
})

export class WalletStore extends Context.Service<WalletStore, Effect.Success<typeof make>>()("recon/db/WalletStore") {
  static readonly layer = Layer.effect(WalletStore, make)
}
