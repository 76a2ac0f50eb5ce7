// Deposit expiry (DESIGN section 11): pending deposits older than SVC_DEPOSIT_TTL_H hours become
// `expired` and are never matched again (matching, sms/resolve and the wallet take only pending
// ones); their review flags go with them. A manual review left holding only expired deposits
// cannot be approved to any of them any more: its SMS goes back to `unmatched`, still a person's
// to look at and matched again if a deposit of its payer and amount appears in its window.
// order_match_loop calls `expire` at the start of a pass, once a minute (EXPIRY_EVERY).
import { Clock, Duration, Effect } from "effect"
import { SqlClient, type SqlError } from "effect/sql"

/** Deposits expired per call: a backlog (a first run, a long outage) is worked off over several passes. */
export const EXPIRY_BATCH = 5000

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
      const expired = yield* sql<{ id: bigint }>`
        WITH due AS (
          SELECT d.id FROM recon.deposit AS d
          -- The last clause is the index's (migration 0018): without it the index is not used.
          WHERE d.status = 'pending' AND d.created_at < ${cutoff} AND d.created_at < 'infinity'
            AND NOT EXISTS (SELECT 1 FROM recon.shooter_sms AS a WHERE a.status = 'approving' AND a.deposit_id = d.id)
          ORDER BY d.created_at, d.id LIMIT ${EXPIRY_BATCH}
          FOR UPDATE SKIP LOCKED)
        UPDATE recon.deposit AS d SET status = 'expired', task_status = NULL FROM due WHERE d.id = due.id
        RETURNING d.id`
      if (expired.length === 0) return { deposits: 0, reopened: 0 }
      const ids = JSON.stringify(expired.map((row) => Number(row.id)))
      // Candidates as order_match_loop records them: objects with deposit_id (plain ids accepted too).
      const reopened = yield* sql`
        WITH review AS (
          SELECT s.id, ARRAY(SELECT COALESCE(c ->> 'deposit_id', CASE WHEN jsonb_typeof(c) = 'number' THEN c #>> '{}' END)::bigint
            FROM jsonb_array_elements(s.match_detail -> 'candidates') AS c) AS candidates
          FROM recon.shooter_sms AS s
          WHERE s.status = 'manual_review' AND jsonb_typeof(s.match_detail -> 'candidates') = 'array')
        UPDATE recon.shooter_sms AS s SET status = 'unmatched', deposit_id = NULL, updated_at = now(),
          match_detail = s.match_detail || jsonb_build_object('decision', 'unmatched',
            'reason', 'every candidate deposit expired before a person decided', 'expired_deposits', to_jsonb(review.candidates))
        FROM review
        WHERE s.id = review.id
          AND review.candidates && ARRAY(SELECT jsonb_array_elements_text(${ids}::jsonb)::bigint)
          AND NOT EXISTS (SELECT 1 FROM recon.deposit AS d WHERE d.id = ANY (review.candidates) AND d.status = 'pending')
        RETURNING s.id`
      yield* Effect.logInfo(`${expired.length} pending deposits expired${reopened.length > 0 ? `; ${reopened.length} manual reviews back to unmatched` : ""}`)
      return { deposits: expired.length, reopened: reopened.length }
    }))
  })

  return { expire } satisfies DepositExpiry
})
