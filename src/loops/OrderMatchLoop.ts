// order_match_loop: parsed SMS matched to pending deposits (DESIGN section 6). Exactly one
// candidate: `approving` committed first, then wallet_service; several players or deposits:
// manual review and an admin_service sync after the commit; none: unmatched, decided again when a
// deposit of that name and amount appears, for 24 h. A pass decides and hands its approvals to the
// wallet calls (WalletCalls.ts), which run continuously beside the passes and record each answer as
// it arrives; a wallet outage leaves SMS approving, re-sent with backoff per SMS, and the pass
// still succeeds (DESIGN section 8).
import { Clock, Duration, Effect, Exit, Fiber, Queue, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { AdminClient } from "../clients/AdminClient.ts"
import { DEFAULT_WALLET_TIMEOUT, WalletClient } from "../clients/WalletClient.ts"
import * as DepositExpiry from "../db/DepositExpiry.ts"
import { MatchStore } from "./MatchStore.ts"
import { HealthRegistry } from "../health/HealthRegistry.ts"
import { AGREE_BATCH_MAX } from "../api/WalletApi.ts"
import { smsTraces } from "../observability/Tracing.ts"
import * as Supervisor from "../actors/Supervisor.ts"
import { Kicks, type Loop, Worker } from "./Loop.ts"
import * as WalletCalls from "./WalletCalls.ts"

/** SMS decided per pass at most: a backlog is many short passes. */
export const BATCH = 200
/** Wallet calls answering at once; each takes up to AGREE_BATCH_MAX SMS (what waits when it starts). */
export const WALLET_CONCURRENCY = 8
/** A call the wallet holds longer gives its place to the next: a held call delays only its own SMS. */
export const SLOW_CALL = Duration.millis(500)
/** SMS handed to the wallet calls and not yet recorded, at most: a pass leases no more than the room left. */
export const OUTSTANDING = WALLET_CONCURRENCY * AGREE_BATCH_MAX
/**
 * How long an approving SMS is this process's once leased: its short wait for a call and the
 * call itself, past the client's timeout (a call is only started while the lease outlasts it). A
 * process that died (its owner's lock free) has its leases taken over by the next pass of another;
 * one alive but cut off from the server loses them to others the same way, and its own calls end
 * within the lease.
 */
export const LEASE = Duration.sum(DEFAULT_WALLET_TIMEOUT, Duration.seconds(3))
/** A retry falls due this long after another pass at the earliest: no pass is woken for one SMS at a time. */
const WAKE_MIN_MILLIS = 100
/** This process's lease owners kept to exclude from takeover: the current one and those lost before it. */
const OWNERS_KEPT = 16

/**
 * The lease owner of this loop (MatchStore.ownerSession), for as long as the loop runs, and the
 * owners it had before: their leases may still be in a call here, so this process never takes them
 * over (they run out). `renew` takes a new owner once the current one's session is lost.
 */
const leaseOwner = (store: MatchStore["Service"]) =>
  Effect.gen(function*() {
    let session: Scope.Closeable | undefined
    let owners: ReadonlyArray<number> = []
    const renew = Effect.gen(function*() {
      // The lost session's connection goes back first: a small pool must not need a second one
      // for the new session while the dead one is still counted.
      const lost = session
      session = undefined
      if (lost !== undefined) yield* Scope.close(lost, Exit.void)
      const scope = yield* Scope.make()
      const { owner } = yield* Scope.provide(store.ownerSession(), scope).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
      session = scope
      owners = [owner, ...owners].slice(0, OWNERS_KEPT)
    })
    yield* Effect.addFinalizer(() => session === undefined ? Effect.void : Scope.close(session, Exit.void))
    yield* renew
    return { owners: () => owners, renew }
  })

/** Pending deposits past SVC_DEPOSIT_TTL_H are expired by the first pass after this long (not by every pass). */
export const EXPIRY_EVERY = Duration.minutes(1)
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
  yield* Supervisor.fork({ name: "admin syncer", answer: { endsOwner: loop } }, Effect.forever(Effect.gen(function*() {
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
  })))
  return Effect.asVoid(Queue.offer(requests, undefined))
})

/** One timer: a pass (`kick`) when the earliest approving SMS falls due (a backoff ends, a lease runs out). */
const wakeTimer = (kick: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const loop = yield* Effect.fiber
    let wake: Fiber.Fiber<void> | undefined
    let wakeAt: number | undefined
    return (at: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const when = Math.max(at, now + WAKE_MIN_MILLIS)
        if (wakeAt !== undefined && wakeAt <= when) return
        wakeAt = when
        // A sooner wake replaces this one (interrupted: a task's cancel, not a failure).
        if (wake !== undefined) yield* Fiber.interrupt(wake)
        wake = yield* Supervisor.fork({ name: "wake timer", answer: { endsOwner: loop }, lifetime: "task", scope }, Effect.sleep(when - now).pipe(
          Effect.andThen(Effect.sync(() => void (wakeAt = undefined))),
          Effect.andThen(kick)
        ))
      })
  })

/** Pending deposits past SVC_DEPOSIT_TTL_H expired, by the first pass after EXPIRY_EVERY; true when reviews went back to unmatched. */
const expiryEvery = Effect.gen(function*() {
  const expiry = yield* DepositExpiry.make
  const { depositTtlHours } = yield* Worker
  let dueAt = 0
  return (now: number) =>
    Effect.gen(function*() {
      if (now < dueAt) return false
      const expired = yield* expiry.expire(Duration.hours(depositTtlHours))
      dueAt = now + Duration.toMillis(EXPIRY_EVERY)
      return expired.reopened > 0
    })
})

/** What a pass works with: the store, the wallet calls beside it, and the ways it asks for more. */
interface Matcher {
  readonly store: MatchStore["Service"]
  readonly owner: { readonly owners: () => ReadonlyArray<number>; readonly renew: Effect.Effect<void, unknown> }
  readonly calls: WalletCalls.WalletCalls
  readonly expire: (now: number) => Effect.Effect<boolean, unknown>
  readonly requestSync: Effect.Effect<void>
  readonly wakeBy: (at: number) => Effect.Effect<void>
  readonly kick: Effect.Effect<void>
  /** Set by a pass that stopped for want of room: the calls ask for another once they have made some. */
  readonly waiting: { forRoom: boolean }
}

/** After the calls recorded answers: a sync and a pass for freed deposits, the next retry's timer, the room a pass waited for. */
const afterRecorded = (m: Omit<Matcher, "calls" | "store" | "expire" | "owner">) => (recorded: WalletCalls.Recorded) =>
  Effect.gen(function*() {
    // A review freed its deposit (match_recheck): another SMS may take it.
    if (recorded.reviews > 0) yield* Effect.andThen(m.requestSync, m.kick)
    if (recorded.retryAt !== undefined) yield* m.wakeBy(recorded.retryAt)
    if (m.waiting.forRoom && recorded.room >= AGREE_BATCH_MAX) {
      m.waiting.forRoom = false
      yield* m.kick
    }
  })

/** One pass: expiry when due, one decision statement, its approvals handed to the wallet calls. */
const matchPass = (m: Matcher) =>
  Effect.gen(function*() {
    const room = yield* m.calls.room
    // Every place taken: the calls ask for the next pass when they have made room.
    if (room === 0) {
      m.waiting.forRoom = true
      return
    }
    const now = yield* Clock.currentTimeMillis
    // Manual reviews back to unmatched: the counters moved.
    if (yield* m.expire(now)) yield* m.requestSync
    const decided = yield* m.store.decide(now, now + Duration.toMillis(LEASE), room, BATCH, m.owner.owners())
    if (decided === "owner_lost") {
      // Every other process takes this owner's leases over now: lease nothing more under it.
      yield* Effect.logWarning(`order_match_loop: the session holding lease owner ${m.owner.owners()[0]} was lost ` +
        "(the database restarted or closed the connection); its leases go to other workers; taking a new owner")
      yield* m.owner.renew
      return yield* m.kick
    }
    if (decided.reviews > 0 || decided.unmatchedChanged > 0) yield* m.requestSync
    yield* m.calls.send([...decided.due, ...decided.approving])
    if (decided.nextDueAt !== undefined) yield* m.wakeBy(decided.nextDueAt)
    if (decided.claimed > 0) {
      yield* Effect.logInfo(`matched ${decided.claimed} SMS: ${decided.approving.length} approving, ${decided.reviews} to review; ` +
        `${decided.due.length} approving SMS sent again`)
    }
    // More may be waiting: the next pass comes at once (this one reports its success first), or
    // when the calls have made room for it.
    if (decided.more) {
      if ((yield* m.calls.room) > 0) yield* m.kick
      else m.waiting.forRoom = true
    }
  })

export const OrderMatchLoop: Loop<SqlClient.SqlClient | MatchStore | WalletClient | AdminClient | Kicks | Worker | HealthRegistry> = {
  name: "order_match_loop",
  ttl: "90 seconds",
  every: "5 seconds",
  // New or changed pending deposits (triggers of migrations 0009 and 0017), SMS reset or resolved through recon_service.
  kickedBy: ["deposit", "shooter_sms"],
  start: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* MatchStore
    const owner = yield* leaseOwner(store)
    const expire = yield* expiryEvery
    const wallet = yield* WalletClient
    const kick = (yield* Kicks).kick("order_match_loop")
    const requestSync = yield* adminSyncer
    const wakeBy = yield* wakeTimer(kick)
    const waiting = { forRoom: false }
    const calls = yield* WalletCalls.make({
      store,
      wallet,
      traces: (ids) => smsTraces(sql, ids),
      timeout: DEFAULT_WALLET_TIMEOUT,
      concurrency: WALLET_CONCURRENCY,
      slowAfter: SLOW_CALL,
      batch: AGREE_BATCH_MAX,
      limit: OUTSTANDING,
      onRecorded: afterRecorded({ requestSync, wakeBy, kick, waiting })
    })
    return matchPass({ store, owner, calls, expire, requestSync, wakeBy, kick, waiting })
  })
}
