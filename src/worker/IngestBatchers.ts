// The push endpoint's path into IngestStore: concurrent requests share statements. A few batchers,
// one supervised component of readiness (`ingest_batchers`), take whatever queued while the
// previous statements ran; nothing waits to fill a batch. Its freshness rule: SMS queued with no
// batch answered for INGEST_STALE_AFTER is stale (readiness false); idle is never stale.
import { Cause, Context, Deferred, Duration, Effect, Exit, Layer, Option, Queue } from "effect"
import type { SqlError } from "effect/sql"
import { Components } from "../health/Components.ts"
import { isDatabaseAway } from "../db/Database.ts"
import { HealthRegistry } from "../health/HealthRegistry.ts"
import { currentTraceparent } from "../observability/Tracing.ts"
import { type Incoming, IngestStore, type NewSms, type Replay, type StoredSms } from "../loops/IngestStore.ts"

/** SMS stored by one statement; copies waiting meanwhile go into the next one. */
const MAX_BATCH = 64
/** Statements in flight at once (each holds one pooled connection). */
const BATCHERS = 4
/** SMS queued this long with no batch answered: the batchers are stale (readiness false). */
export const INGEST_STALE_AFTER = Duration.seconds(10)

const NAME = "ingest_batchers"

interface Pending extends Incoming {
  readonly done: Deferred.Deferred<StoredSms | Replay, SqlError.SqlError>
}

export class IngestBatchers extends Context.Service<IngestBatchers, {
  /**
   * One SMS from a request, stored together with whatever other requests are storing now, and
   * reported (see IngestStore's `storeMany` for a signature's replay).
   */
  ingestShared(sms: NewSms): Effect.Effect<StoredSms | Replay, SqlError.SqlError>
}>()("recon/worker/IngestBatchers") {
  static readonly layer = Layer.effect(IngestBatchers, Effect.gen(function*() {
    const store = yield* IngestStore
    const components = yield* Components
    const registry = yield* HealthRegistry
    const queue = yield* Queue.unbounded<Pending>()
    // SMS queued or in a statement; the component's work waits while there are any.
    let pending = 0
    const settled = (count: number) =>
      Effect.suspend(() => {
        pending -= count
        return Effect.andThen(registry.reportProgress(NAME), pending === 0 ? registry.reportWaiting(NAME, false) : Effect.void)
      })

    const runBatch = (batch: ReadonlyArray<Pending>) =>
      store.storeMany(batch).pipe(
        Effect.flatMap((stored) => Effect.forEach(batch, (pending, i) => Deferred.succeed(pending.done, stored[i]!), { discard: true })),
        Effect.catchCause((cause) => {
          const error = Cause.findErrorOption(cause)
          // The database away: every request of the batch gets it (503). Anything else, e.g. one SMS
          // the database refuses: each is tried alone, so one bad SMS fails only its own request.
          if (batch.length === 1 || (Option.isSome(error) && isDatabaseAway(error.value))) {
            return Effect.forEach(batch, (pending) => Deferred.failCause(pending.done, cause), { discard: true })
          }
          return Effect.forEach(batch, (pending) =>
            Effect.exit(Effect.map(store.storeMany([pending]), (stored) => stored[0]!)).pipe(
              Effect.flatMap((exit) => Deferred.done(pending.done, exit))
            ), { discard: true })
        })
      )
    const batcher = Effect.forever(Effect.flatMap(Queue.takeBetween(queue, 1, MAX_BATCH), (batch) =>
      runBatch(batch).pipe(
        Effect.ensuring(settled(batch.length)),
        // A batcher that stops mid-batch (killed, or a defect) answers its requests rather than
        // leaving them waiting; the SMS still queued wait for the restarted batchers.
        Effect.onExit((exit) =>
          Exit.isSuccess(exit)
            ? Effect.void
            : Effect.forEach(batch, (pending) => Deferred.die(pending.done, new Error("the ingest batcher stopped")), { discard: true })
        )
      )))
    // One component: a batcher that exits takes the others down with it, and all are restarted together.
    yield* components.run(NAME, Effect.all(Array.from({ length: BATCHERS }, () => batcher), { concurrency: "unbounded", discard: true }), {
      staleAfter: INGEST_STALE_AFTER
    })

    return IngestBatchers.of({
      ingestShared: (sms) =>
        Effect.gen(function*() {
          const done = yield* Deferred.make<StoredSms | Replay, SqlError.SqlError>()
          const incoming = { sms, traceParent: yield* currentTraceparent, done }
          // Counted and queued together: each SMS counted is settled by the batch that takes it.
          yield* Effect.uninterruptible(Effect.suspend(() =>
            Effect.andThen(pending++ === 0 ? registry.reportWaiting(NAME, true) : Effect.void, Queue.offer(queue, incoming))
          ))
          return yield* Deferred.await(done).pipe(Effect.tap(store.report))
        })
    })
  }))
}
