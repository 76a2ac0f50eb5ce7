// The actor primitive: a loop that runs a pass at start, on its schedule and whenever it is
// kicked, retrying failed passes with backoff without ever leaving the loop; only a hung pass
// (one still running past `hungAfter`) ends it, for its supervisor to restart.
import { Cause, Duration, Effect, Queue, Schedule } from "effect"

export interface Actor {
  readonly name: string
  /** Ask for a pass as soon as possible; kicks sent while a pass runs coalesce into one more pass. */
  readonly kick: Effect.Effect<void>
  /** The loop itself: never returns; run it under a Supervisor. */
  readonly run: Effect.Effect<never>
}

export interface ActorOptions<E, R> {
  readonly name: string
  /** Time from the end of one pass to the next scheduled pass; keep it well inside the loop's TTL. */
  readonly every: Duration.Input
  readonly pass: Effect.Effect<void, E, R>
  /** Retry policy for a failed pass (input: the failure's Cause); default: capped, jittered exponential backoff. */
  readonly retry?: Schedule.Schedule<unknown, Cause.Cause<E>> | undefined
  /** Runs after every successful pass (e.g. report freshness to the health registry). */
  readonly onSuccess?: Effect.Effect<void> | undefined
  /** A pass attempt still running after this long is hung: it is interrupted and `run` dies with {@link HungPass}. */
  readonly hungAfter?: Duration.Input | undefined
  /** Runs after every failed attempt, before the retry waits. */
  readonly onFailure?: ((cause: Cause.Cause<E>) => Effect.Effect<void>) | undefined
}

/** A pass outlived its time limit: not a failure to retry, the actor's end. */
export class HungPass extends Error {
  readonly actor: string
  readonly after: Duration.Duration
  constructor(actor: string, after: Duration.Duration) {
    super(`${actor}: a pass ran for more than ${Duration.format(after)}; interrupted`)
    this.actor = actor
    this.after = after
  }
}

/** Capped exponential backoff with jitter: 1 s, 2 s, 4 s … never longer than the loop's own period. */
export const defaultRetry = (every: Duration.Input): Schedule.Schedule<unknown> =>
  Schedule.min([Schedule.exponential("1 second"), Schedule.spaced(every)]).pipe(Schedule.jittered)

/** Builds an actor; the pass's requirements are captured here so `run` needs nothing. */
export const make = Effect.fnUntraced(function*<E, R>(options: ActorOptions<E, R>) {
  const context = yield* Effect.context<R>()
  // Capacity 1, dropping: a pending kick is a flag, so any number of kicks means one more pass.
  const mailbox = yield* Queue.dropping<void>(1)
  const every = Duration.fromInputUnsafe(options.every)
  const retry = options.retry ?? defaultRetry(every)

  // Defects are retried like failures: a thrown exception in one pass should not count as a crash.
  const attempt = options.pass.pipe(
    Effect.sandbox,
    Effect.tapError((cause) =>
      Effect.logWarning("pass failed", cause).pipe(
        Effect.andThen(options.onFailure ? options.onFailure(cause) : Effect.void)
      )
    )
  )

  const hungAfter = options.hungAfter === undefined ? undefined : Duration.fromInputUnsafe(options.hungAfter)
  // Outside the sandbox: a defect, so neither the retry nor the catch below takes it for a failed pass.
  const bounded = hungAfter === undefined ? attempt : attempt.pipe(
    Effect.timeoutOrElse({
      duration: hungAfter,
      orElse: () => {
        const hung = new HungPass(options.name, hungAfter)
        return Effect.logError(hung.message).pipe(Effect.andThen(Effect.die(hung)))
      }
    })
  )

  const pass = bounded.pipe(
    Effect.retry(retry),
    Effect.andThen(options.onSuccess ?? Effect.void),
    // Retries exhausted: wait for the next tick or kick instead of leaving the loop.
    Effect.catch(() => Effect.logWarning("pass retries exhausted; waiting for the next tick"))
  )

  const loop = Effect.gen(function*() {
    while (true) {
      // The pass about to start covers every kick received so far.
      yield* Queue.clear(mailbox)
      yield* pass
      yield* Effect.race(Queue.take(mailbox), Effect.sleep(every))
    }
  })

  const actor: Actor = {
    name: options.name,
    kick: Effect.asVoid(Queue.offer(mailbox, undefined)),
    run: loop.pipe(
      Effect.andThen(Effect.never),
      Effect.provideContext(context),
      Effect.annotateLogs({ actor: options.name })
    )
  }
  return actor
})
