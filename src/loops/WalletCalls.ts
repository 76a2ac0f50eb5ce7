// order_match_loop's wallet calls, in flight continuously: a pass hands its leased approving SMS
// over and ends. A call takes its share of what waits (one SMS when traffic is light, up to a batch
// under load: one agree_batch request, one wallet transaction); up to `concurrency` calls answer at once,
// and one the wallet holds past `slowAfter` gives its place to the next, so a held call delays only
// its own SMS. Each answer is recorded as it arrives, with whatever others arrived meanwhile, in
// one statement. Lives in the loop's scope: a call, the dispatcher or the recorder dying ends the
// loop's fiber (readiness false, the supervisor restarts it), and so does a watchdog when a call or
// a recording runs far past its own timeout (stuck). Closing the scope records the answers
// received and gives the other leases back, so those SMS are sent again at once (a replay credits
// nothing). Its freshness rule (component wallet_calls): answers waiting WALLET_CALLS_STALE_AFTER with
// none recorded (the database away while recording) is stale; no answers waiting is never stale.
import { Clock, Duration, Effect, Queue, Random, Schedule, Semaphore } from "effect"
import * as Supervisor from "../actors/Supervisor.ts"
import { SqlError } from "effect/sql"
import type { WalletClient } from "../clients/WalletClient.ts"
import { isDatabaseAway } from "../db/Database.ts"
import { HealthRegistry } from "../health/HealthRegistry.ts"
import type { Due, MatchStore, Outcome } from "./MatchStore.ts"
import { type AgreeOutcome, reviewReason, statusAfter, walletAnswer, walletBackoffMillis } from "../domain/Matching.ts"
import type { WithinSms } from "../observability/Tracing.ts"

/** Answers recorded by one statement at most. */
const RECORD_GROUP = 64
/** One recording statement is given up (and tried again) after this long. */
const RECORD_TIMEOUT = Duration.seconds(10)
/** A call or a recording still running this long past its own timeout is stuck. */
const STUCK_GRACE = Duration.seconds(10)
/** At most one warning this often while the wallet is unavailable. */
const WARN_EVERY_MILLIS = 10_000
/** How often the watchdog looks. */
const WATCH_EVERY = Duration.seconds(1)
/** The component of readiness for the recording of answers. */
export const WALLET_CALLS = "wallet_calls"
/** Answers waiting this long with none recorded: the wallet calls are stale (readiness false). */
export const WALLET_CALLS_STALE_AFTER = Duration.seconds(30)

/** A call or a recording ran far past its own timeout: the dispatcher no longer moves. */
export class DispatcherStuck extends Error {
  constructor(what: string, millis: number) {
    super(`order_match_loop: ${what} has been running for ${Math.round(millis / 1000)} s, far past its timeout; restarting the loop`)
  }
}

export interface WalletCallsOptions {
  readonly store: MatchStore["Service"]
  readonly wallet: WalletClient["Service"]
  /** The wallet client's own timeout: a call never runs longer unless something is broken. */
  readonly timeout: Duration.Input
  /** Calls answering at once. */
  readonly concurrency: number
  /** A call still unanswered after this long no longer counts against `concurrency`. */
  readonly slowAfter: Duration.Input
  /** SMS per call at most. */
  readonly batch: number
  /** SMS handed over and not yet recorded, at most (the room a pass may fill). */
  readonly limit: number
  /** The traces of these SMS (Tracing.smsTraces): a call carrying one SMS continues its trace. */
  readonly traces: (smsIds: ReadonlyArray<number>) => Effect.Effect<WithinSms>
  /** After each recorded group: what it held, and the earliest time one of them is due again. */
  readonly onRecorded: (recorded: Recorded) => Effect.Effect<void>
}

export interface Recorded {
  readonly approved: number
  readonly reviews: number
  readonly waiting: number
  /** The earliest backoff end of the SMS left approving (ms since the epoch). */
  readonly retryAt: number | undefined
  /** Room now free. */
  readonly room: number
}

export interface WalletCalls {
  /** How many more SMS may be handed over now. */
  readonly room: Effect.Effect<number>
  /** Hands leased SMS over (at most `room`); they are sent in order, retries first as given. */
  readonly send: (due: ReadonlyArray<Due>) => Effect.Effect<void>
}

/** One SMS's result: the outcome to record, or none (not sent: its lease would have run out first). */
interface Answer {
  readonly due: Due
  readonly outcome: Outcome | undefined
}

export const make = Effect.fnUntraced(function*(options: WalletCallsOptions) {
  const { store, wallet } = options
  const registry = yield* HealthRegistry
  // Answers received and not yet recorded make the work wait; a group recorded is progress.
  yield* registry.registerWork(WALLET_CALLS, { staleAfter: WALLET_CALLS_STALE_AFTER })
  const timeoutMillis = Duration.toMillis(Duration.fromInputUnsafe(options.timeout))
  const graceMillis = Duration.toMillis(STUCK_GRACE)
  const slots = yield* Semaphore.make(options.concurrency)
  let free = options.concurrency
  const queue = yield* Queue.unbounded<Due>()
  const answers = yield* Queue.unbounded<Answer>()
  // Handed over and not yet recorded or given back, by SMS id.
  const outstanding = new Map<number, Due>()
  // Each call in flight and the recorder at work, since when (for the watchdog).
  const busy = new Map<string, { readonly since: number; readonly limit: number }>()
  let callsMade = 0
  // The group being recorded: recorded again on close if the statement was cut off.
  let recording: ReadonlyArray<Answer> = []
  let lastWarning = -Infinity
  const loop = yield* Effect.fiber

  const outcomeOf = (due: Due, outcome: AgreeOutcome, now: number) =>
    Effect.gen(function*() {
      const attempts = due.attempts + 1
      const status = statusAfter(outcome)
      const result: Outcome = {
        id: due.id,
        depositId: due.depositId,
        owner: due.owner,
        status,
        wallet: walletAnswer(outcome, due.depositId, attempts, new Date(now).toISOString()),
        nextAt: status === "approving" ? new Date(now + walletBackoffMillis(attempts, yield* Random.nextBetween(0.8, 1.2))) : null,
        reason: reviewReason(outcome)
      }
      return result
    })

  /** One call for `batch`, holding a slot until it is answered or has been slow for `slowAfter`. */
  const call = (batch: ReadonlyArray<Due>) =>
    Effect.gen(function*() {
      const name = `wallet call ${++callsMade}`
      let released = false
      const release = Effect.suspend(() => {
        if (released) return Effect.void
        released = true
        free++
        return Semaphore.release(slots, 1)
      })
      // Beside the call (no fiber of its own to die unseen): the race ends with the call.
      const slow = Effect.andThen(Effect.andThen(Effect.sleep(options.slowAfter), release), Effect.never)
      yield* Effect.raceFirst(answered(batch, name), slow)
      yield* release
    })

  const answered = (batch: ReadonlyArray<Due>, name: string) =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      // Another process may take an SMS once its lease runs out: never call past it.
      const late = batch.filter((due) => started + timeoutMillis >= due.leaseUntil)
      const sent = batch.filter((due) => started + timeoutMillis < due.leaseUntil)
      yield* Queue.offerAll(answers, late.map((due) => ({ due, outcome: undefined })))
      if (sent.length > 0) {
        busy.set(name, { since: started, limit: timeoutMillis + graceMillis })
        const agreeing = wallet.agreeBatch(sent.map((due) => ({ depositId: due.depositId, smsId: due.id })))
        const outcomes = yield* (sent.length === 1 ? Effect.flatMap(options.traces([sent[0]!.id]), (within) => within(sent[0]!.id)(agreeing)) : agreeing)
        busy.delete(name)
        const now = yield* Clock.currentTimeMillis
        yield* Queue.offerAll(answers, yield* Effect.forEach(sent, (due, i) => Effect.map(outcomeOf(due, outcomes[i]!, now), (outcome) => ({ due, outcome }))))
      }
    })

  // Takes a slot, then its share of what waits (spread over the free slots: one SMS per call when
  // traffic is light, whole batches once every slot is busy), and starts its call.
  const dispatcher = Effect.forever(Effect.gen(function*() {
    yield* Semaphore.take(slots, 1)
    free--
    const waiting = yield* Queue.size(queue)
    const share = Math.min(options.batch, Math.max(1, Math.ceil(waiting / (free + 1))))
    const batch = yield* Queue.takeBetween(queue, 1, share)
    yield* startCall(batch)
  }))

  /** One group written: answers in one statement, leases not used given back in another. */
  const write = (group: ReadonlyArray<Answer>) =>
    Effect.gen(function*() {
      yield* store.record(group.flatMap((a) => a.outcome === undefined ? [] : [a.outcome]))
      yield* store.release(group.flatMap((a) => a.outcome === undefined ? [a.due] : []))
    })

  const recordGroup = (group: ReadonlyArray<Answer>) =>
    Effect.gen(function*() {
      recording = group
      // The database away: the answers wait here (their SMS stay approving) and are tried again;
      // any other failure of these statements is a defect.
      yield* Effect.gen(function*() {
        busy.set("recorder", { since: yield* Clock.currentTimeMillis, limit: Duration.toMillis(RECORD_TIMEOUT) + graceMillis })
        yield* write(group).pipe(Effect.timeout(RECORD_TIMEOUT))
      }).pipe(
        Effect.ensuring(Effect.sync(() => busy.delete("recorder"))),
        Effect.tapError((error) => Effect.logWarning(`recording ${group.length} wallet answers failed; trying again`, error)),
        Effect.retry({
          while: (error) => !SqlError.isSqlError(error) || isDatabaseAway(error),
          schedule: Schedule.min([Schedule.exponential("200 millis"), Schedule.spaced("5 seconds")])
        }),
        Effect.orDie
      )
      recording = []
      for (const answer of group) outstanding.delete(answer.due.id)
      let approved = 0
      let reviews = 0
      let retryAt: number | undefined
      const waiting: Array<Outcome> = []
      for (const { outcome } of group) {
        if (outcome === undefined) continue
        if (outcome.status === "approved") approved++
        else if (outcome.status === "manual_review") reviews++
        else {
          waiting.push(outcome)
          retryAt = Math.min(retryAt ?? Infinity, outcome.nextAt!.getTime())
        }
      }
      yield* Effect.logDebug(`recorded ${group.length} wallet answers: ${approved} approved, ${reviews} to review, ${waiting.length} waiting for the wallet`)
      const now = yield* Clock.currentTimeMillis
      if (waiting.length > 0 && now - lastWarning >= WARN_EVERY_MILLIS) {
        lastWarning = now
        // One line per interval, however many SMS an outage holds back.
        yield* Effect.logWarning(`${waiting.length} approving SMS wait for wallet_service (${waiting[0]!.wallet.detail}); each is sent again after its backoff`)
      }
      yield* options.onRecorded({ approved, reviews, waiting: waiting.length, retryAt, room: options.limit - outstanding.size })
    })

  const recorder = Effect.forever(Effect.gen(function*() {
    const group = yield* Queue.takeBetween(answers, 1, RECORD_GROUP)
    yield* registry.reportWaiting(WALLET_CALLS, true)
    yield* recordGroup(group)
    yield* registry.reportProgress(WALLET_CALLS)
    if ((yield* Queue.size(answers)) === 0) yield* registry.reportWaiting(WALLET_CALLS, false)
  }))

  // Registered before the fibers are forked into the same scope, so it runs after they are
  // stopped (a scope closes in reverse order): what they left is written down.
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      const received = [...recording, ...(yield* Queue.clear(answers))]
      yield* store.record(received.flatMap((a) => a.outcome === undefined ? [] : [a.outcome])).pipe(Effect.timeout("2 seconds"), Effect.ignore)
      const answered = new Set(received.flatMap((a) => a.outcome === undefined ? [] : [a.due.id]))
      // Interrupted mid-call or never sent: whatever the wallet did, the SMS stays approving and
      // is due again at once.
      yield* store.release([...outstanding.values()].filter((due) => !answered.has(due.id))).pipe(Effect.timeout("2 seconds"), Effect.ignore)
      outstanding.clear()
    })
  )
  // Dies with DispatcherStuck, and so ends the loop's fiber, when a call or a recording has run far
  // past its own timeout: nothing moves any more, and readiness must say so.
  const watchdog = Effect.forever(Effect.gen(function*() {
    yield* Effect.sleep(WATCH_EVERY)
    const now = yield* Clock.currentTimeMillis
    for (const [what, { since, limit }] of busy) {
      if (now - since > limit) {
        const stuck = new DispatcherStuck(what, now - since)
        yield* Effect.logError(stuck.message)
        return yield* Effect.die(stuck)
      }
    }
  }))

  const scope = yield* Effect.scope
  const startCall = (batch: ReadonlyArray<Due>) =>
    Supervisor.fork({ name: "wallet call", answer: { endsOwner: loop }, lifetime: "task", scope }, call(batch))
  yield* Supervisor.fork({ name: "wallet dispatcher", answer: { endsOwner: loop } }, dispatcher)
  yield* Supervisor.fork({ name: "wallet recorder", answer: { endsOwner: loop } }, recorder)
  yield* Supervisor.fork({ name: "wallet watchdog", answer: { endsOwner: loop } }, watchdog)

  const calls: WalletCalls = {
    room: Effect.sync(() => Math.max(0, options.limit - outstanding.size)),
    send: (due) =>
      Effect.suspend(() => {
        for (const d of due) outstanding.set(d.id, d)
        return Queue.offerAll(queue, due)
      }).pipe(Effect.asVoid)
  }
  return calls
})
