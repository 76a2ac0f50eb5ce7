// Deposit expiry (DESIGN section 11): pending deposits older than SVC_DEPOSIT_TTL_H hours become
// `expired` and are never matched again (matching, sms/resolve and the wallet take only pending
// ones); their review flags go with them. A manual review left holding only expired deposits
// cannot be approved to any of them any more: its SMS goes back to `unmatched`, still a person's
// to look at and matched again if a deposit of its payer and amount appears in its window.
// order_match_loop calls `expire` at the start of a pass, once a minute (EXPIRY_EVERY).
import { Clock, Duration, Effect } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { sourceText } from "./SourceText.ts"

/** Deposits expired per call: a backlog (a first run, a long outage) is worked off over several passes. */
export const EXPIRY_BATCH = 5000
const EXPIRE = sourceText(import.meta.url, "./DepositExpiry.expire.sql")
const REOPEN = sourceText(import.meta.url, "./DepositExpiry.reopen.sql")

export interface Expired {
  /** Deposits now expired. */
  readonly deposits: number
  /** manual_review SMS back to unmatched (the counters changed: ask admin_service to sync). */
  readonly reopened: number
}

/** order_match_loop's expiry, made on the loop's own SqlClient. */
export interface DepositExpiry {
  /**
   * Expires the pending deposits created more than `ttl` ago (by the Effect clock), except one that
   * an SMS is being approved against right now: the wallet decides that one.
   */
  readonly expire: (ttl: Duration.Input) => Effect.Effect<Expired, SqlError.SqlError>
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const expire = Effect.fn("DepositExpiry.expire")(function*(ttl: Duration.Input) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      const cutoff = new Date((yield* Clock.currentTimeMillis) - Duration.toMillis(Duration.fromInputUnsafe(ttl)))
      const expired = yield* sql.unsafe<{ id: bigint }>(EXPIRE, [cutoff, EXPIRY_BATCH])
      if (expired.length === 0) return { deposits: 0, reopened: 0 }
      const ids = JSON.stringify(expired.map((row) => Number(row.id)))
      const reopened = yield* sql.unsafe(REOPEN, [ids])
      yield* Effect.logInfo(`${expired.length} pending deposits expired${reopened.length > 0 ? `; ${reopened.length} manual reviews back to unmatched` : ""}`)
      return { deposits: expired.length, reopened: reopened.length }
    }))
  })

  return { expire } satisfies DepositExpiry
})
