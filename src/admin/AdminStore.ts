// The queries of admin_service: its own two top-info counters, the operators, and the key that
// signs their session tokens (the queues and decisions are ReviewStore's). A query fails with its
// SqlError (src/http answers the database away as 503).
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { randomBytes } from "node:crypto"

/** admin's own part of top-info (DESIGN section 7). */
export const OwnCounters = Schema.Struct({
  pending_deposit_cnt: Schema.Int,
  manual_review_cnt: Schema.Int
})
export type OwnCounters = typeof OwnCounters.Type

export interface Operator {
  readonly id: number
  readonly account: string
  readonly password_hash: string
}

export class AccountExists extends Schema.TaggedError<AccountExists>()("AccountExists", {
  account: Schema.String
}) {}

export interface AdminStoreShape {
  /** Two scalar subqueries, so each count can use its partial index on recon.deposit. */
  readonly counters: () => Effect.Effect<OwnCounters, SqlError.SqlError>
  readonly findOperator: (account: string) => Effect.Effect<Operator | undefined, SqlError.SqlError>
  /** Answers the new operator's id. */
  readonly createOperator: (account: string, passwordHash: string) => Effect.Effect<number, AccountExists | SqlError.SqlError>
  /** The first process to ask writes a fresh random key; every later one (and every restart) reads it. */
  readonly signingKey: () => Effect.Effect<string, SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const counters = Effect.fn("AdminStore.counters")(function*() {
    const [row] = yield* sql<{ pending: bigint; manual: bigint }>`SELECT
      (SELECT count(*) FROM recon.deposit WHERE status = 'pending') AS pending,
      (SELECT count(*) FROM recon.deposit WHERE task_status = 6) AS manual`
    return { pending_deposit_cnt: Number(row?.pending ?? 0), manual_review_cnt: Number(row?.manual ?? 0) }
  })

  const findOperator = Effect.fn("AdminStore.findOperator")(function*(account: string) {
    const [row] = yield* sql<{ id: bigint; account: string; password_hash: string }>`SELECT id, account, password_hash
      FROM admin.operator WHERE account = ${account}`
    return row === undefined ? undefined : { id: Number(row.id), account: row.account, password_hash: row.password_hash }
  })

  const createOperator = Effect.fn("AdminStore.createOperator")(function*(account: string, passwordHash: string) {
    const rows = yield* sql<{ id: bigint }>`INSERT INTO admin.operator (account, password_hash)
      VALUES (${account}, ${passwordHash}) ON CONFLICT (account) DO NOTHING RETURNING id`
    if (rows.length === 0) return yield* new AccountExists({ account })
    return Number(rows[0]!.id)
  })

  const signingKey = Effect.fn("AdminStore.signingKey")(function*() {
    yield* sql`INSERT INTO admin.signing_key (id, secret) VALUES (1, ${randomBytes(32).toString("base64url")})
      ON CONFLICT (id) DO NOTHING`
    const [row] = yield* sql<{ secret: string }>`SELECT secret FROM admin.signing_key WHERE id = 1`
    return row!.secret
  })

  return { counters, findOperator, createOperator, signingKey } satisfies AdminStoreShape
})

export class AdminStore extends Context.Service<AdminStore, AdminStoreShape>()("recon/admin/AdminStore") {
  static readonly layer = Layer.effect(AdminStore, make)
}
