// order_match_loop: parsed SMS matched to pending deposits (DESIGN section 6). Exactly one
// candidate: `approving` committed first, then wallet_service; several players or deposits:
// manual review and an admin_service sync after the commit; none: unmatched, looked at again on
// every pass for 24 h. A wallet outage leaves SMS approving, re-sent with backoff per SMS; the
// pass still succeeds (DESIGN section 8).
import { Cause, Clock, DateTime, Duration, Effect, Exit, Queue, Random } from "effect"
import { SqlClient } from "effect/sql"
import { AdminClient } from "../clients/AdminClient.ts"
import { type AgreeOutcome, DEFAULT_WALLET_TIMEOUT, WalletClient } from "../clients/WalletClient.ts"
import * as MatchStore from "../db/MatchStore.ts"
import { reviewReason, statusAfter, walletAnswer, walletBackoffMillis } from "../domain/Matching.ts"
import { smsTraces } from "../observability/Tracing.ts"
import { Kicks, type Loop } from "./Loop.ts"

/** SMS decided per pass, and approving SMS sent per pass: a backlog is many short passes. */
export const BATCH = 200
/** Wallet calls in flight at once. */
export const WALLET_CONCURRENCY = 16
/**
 * How long an approving SMS is this process's while its call is in flight: past the client's
 * timeout, so only a process that died mid-call leaves one for another to send again.
 */
export const LEASE = Duration.sum(DEFAULT_WALLET_TIMEOUT, Duration.seconds(10))
/** No new wallet call is started after this much of a pass: the pass ends well inside the 90 s TTL. */
export const WALLET_BUDGET = Duration.seconds(20)
/** admin_service sync retries: 500 ms, 1 s, 2 s … at most 30 s apart; after this many, its own 10 s tick catches up. */
const SYNC_RETRY_CAP = Duration.seconds(30)
const SYNC_ATTEMPTS = 12

/**
 * Asks admin_service to push fresh counters, after the commit and off the pass: requests coalesce,
 * a failure is retried with backoff and never touches the reviews. Lives as long as the loop, and
 * the loop no longer than it: its fiber dying (a defect) ends the loop's fiber, which the
 * supervisor restarts with readiness false meanwhile, rather than syncs stopping unseen.
 */
const adminSyncer = Effect.gen(function*() {
  const admin = yield* AdminClient
  const requests = yield* Queue.dropping<void>(1)
  const loop = yield* Effect.fiber
  yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
    yield* Queue.take(requests)
    let delay = Duration.millis(500)
    for (let attempt = 1; attempt <= SYNC_ATTEMPTS; attempt++) {
      // This call covers every request made so far.
      yield* Queue.clear(requests)
      const outcome = yield* admin.sync
      if (outcome._tag === "Synced") return
      if (attempt === SYNC_ATTEMPTS) {
        return yield* Effect.logWarning(`admin_service sync failed ${attempt} times (${outcome.reason}); giving up until the next change`)
      }
      yield* Effect.logWarning(`admin_service sync failed (${outcome.reason}); retrying in ${Duration.format(delay)}`)
      yield* Effect.sleep(delay)
      delay = Duration.min(Duration.times(delay, 2), SYNC_RETRY_CAP)
    }
  })).pipe(
    // Not when it is interrupted: that is the loop's scope closing, the loop ending already.
    Effect.onExit((exit) => Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause) ? Effect.sync(() => loop.interruptUnsafe()) : Effect.void)
  ))
  return Effect.asVoid(Queue.offer(requests, undefined))
})

export const OrderMatchLoop: Loop<SqlClient.SqlClient | WalletClient | AdminClient | Kicks> = {
  name: "order_match_loop",
  ttl: "90 seconds",
  every: "5 seconds",
  // New or changed pending deposits (trigger of migration 0009), SMS reset or resolved through recon_service.
  kickedBy: ["deposit", "shooter_sms"],
  start: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* MatchStore.make
    const wallet = yield* WalletClient
    const kicks = yield* Kicks
    const requestSync = yield* adminSyncer

    const send = (due: MatchStore.Due, deadline: number) =>
      Effect.gen(function*() {
        // Out of time for this pass: the SMS is given back and sent by the next one.
        if ((yield* Clock.currentTimeMillis) > deadline) return undefined
        const outcome: AgreeOutcome = yield* wallet.agree({ depositId: due.deposit_id, smsId: due.id })
        const now = yield* Clock.currentTimeMillis
        const attempts = due.attempts + 1
        const status = statusAfter(outcome)
        const nextAt = status === "approving"
          ? new Date(now + walletBackoffMillis(attempts, yield* Random.nextBetween(0.8, 1.2)))
          : null
        const result: MatchStore.Outcome = {
          id: due.id,
          depositId: due.deposit_id,
          status,
          wallet: walletAnswer(outcome, due.deposit_id, attempts, new Date(now).toISOString()),
          nextAt,
          reason: reviewReason(outcome)
        }
        return result
      })

    return Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const leaseUntil = new Date(start + Duration.toMillis(LEASE))
      const decided = yield* store.decideBatch(BATCH, DateTime.makeUnsafe(start), leaseUntil)
      if (decided.reviews > 0 || decided.unmatchedChanged > 0) yield* requestSync
      const leased = yield* store.leaseDue(BATCH - decided.approving.length, new Date(start), leaseUntil)
      const due = [...decided.approving, ...leased]

      let reviews = 0
      let approved = 0
      let waiting = 0
      if (due.length > 0) {
        const deadline = start + Duration.toMillis(WALLET_BUDGET)
        const within = yield* smsTraces(sql, due.map((d) => d.id))
        const outcomes = yield* Effect.forEach(due, (d) => within(d.id)(send(d, deadline)), { concurrency: WALLET_CONCURRENCY }).pipe(
          // Interrupted mid-call (a hung pass, a shutdown): whatever the wallet did, the SMS stays
          // approving and is sent again at once; a replay credits nothing.
          Effect.onInterrupt(() => store.release(due.map((d) => d.id)).pipe(Effect.timeout("2 seconds"), Effect.ignore))
        )
        const done = outcomes.filter((o): o is MatchStore.Outcome => o !== undefined)
        yield* store.record(done)
        const answered = new Set(done.map((o) => o.id))
        yield* store.release(due.filter((d) => !answered.has(d.id)).map((d) => d.id))
        for (const o of done) {
          if (o.status === "approved") approved++
          else if (o.status === "manual_review") reviews++
          else waiting++
        }
        if (reviews > 0) yield* requestSync
        // One line per pass, however many SMS an outage holds back.
        const unavailable = done.find((o) => o.status === "approving")
        if (unavailable !== undefined) {
          yield* Effect.logWarning(`${waiting} approving SMS wait for wallet_service (${unavailable.wallet.detail}); each is sent again after its backoff`)
        }
      }
      if (decided.claimed > 0 || due.length > 0) {
        yield* Effect.logInfo(
          `matched ${decided.claimed} SMS: ${decided.approving.length} approving, ${decided.reviews} to review; ` +
            `wallet: ${approved} approved, ${reviews} to review, ${waiting} waiting for the wallet`
        )
      }
      // More may be waiting: the next pass starts at once, this one reports its success first.
      if (decided.claimed >= BATCH || (leased.length > 0 && leased.length >= BATCH - decided.approving.length)) {
        yield* kicks.kick("order_match_loop")
      }
    })
  })
}
