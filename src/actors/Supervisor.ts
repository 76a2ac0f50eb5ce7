// One-for-one supervision of named, forever-running children: restart with backoff when a child
// exits, and escalate past the restart intensity (OTP-style) so the process can exit with code 1.
import { Cause, Clock, Deferred, Duration, Effect, Exit, Fiber, FiberMap, FiberSet, Option, Pull, Schedule, Schema, type Scope } from "effect"

export interface Child<R = never> {
  readonly name: string
  /** Meant to run forever: any exit (defect, failure, interruption, completion) is restarted. */
  readonly run: Effect.Effect<unknown, unknown, R>
}

export interface SupervisorOptions<R> {
  readonly children: ReadonlyArray<Child<R>>
  /** Restarts allowed within `within` before escalating; default 5. */
  readonly maxRestarts?: number | undefined
  /** The intensity window; default 60 seconds. */
  readonly within?: Duration.Input | undefined
  /** Delay before each restart of one child (input: the exit); default exponential with jitter. */
  readonly backoff?: Schedule.Schedule<unknown, Exit.Exit<unknown, unknown>> | undefined
  /** Runs in the same tick the child's fiber exits, before any restart decision. */
  readonly onChildExit?: ((name: string, exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>) | undefined
  /** Runs just before a restarted child starts; `restarts` counts this child's restarts so far. */
  readonly onChildRestart?: ((name: string, restarts: number) => Effect.Effect<void>) | undefined
  /** Escalation goes here rather than to a deferred of its own (several supervisors, one `await`). */
  readonly escalateTo?: Deferred.Deferred<never, SupervisorEscalated> | undefined
}

export interface Supervisor {
  readonly names: ReadonlyArray<string>
  /** The current fiber of a child, if it is running (not between exit and restart). */
  readonly fiber: (name: string) => Effect.Effect<Option.Option<Fiber.Fiber<unknown, unknown>>>
  /** Waits forever; fails once the restart intensity is exceeded. */
  readonly await: Effect.Effect<never, SupervisorEscalated>
}

export class SupervisorEscalated extends Schema.TaggedError<SupervisorEscalated>()("SupervisorEscalated", {
  child: Schema.String,
  restarts: Schema.Number,
  withinMillis: Schema.Number
}) {
  override get message() {
    return `child ${this.child} exited after ${this.restarts} restarts within ${this.withinMillis} ms`
  }
}

/** 200 ms, 400 ms, 800 ms … capped at 10 s, each ±20 %. */
export const defaultBackoff: Schedule.Schedule<unknown> = Schedule.min([
  Schedule.exponential("200 millis"),
  Schedule.spaced("10 seconds")
]).pipe(Schedule.jittered)

/**
 * Starts every child and keeps it running until the scope closes. Closing the scope (shutdown)
 * interrupts the children without counting it as a crash or firing the hooks.
 */
export const make = Effect.fnUntraced(function*<R>(options: SupervisorOptions<R>) {
  const names = options.children.map((child) => child.name)
  // Children are keyed by name: a duplicate would silently replace its twin.
  if (new Set(names).size !== names.length) return yield* Effect.die(new Error(`duplicate child names: ${names.join(", ")}`))
  const maxRestarts = options.maxRestarts ?? 5
  const withinMillis = Duration.toMillis(Duration.fromInputUnsafe(options.within ?? "60 seconds"))
  const backoff = options.backoff ?? defaultBackoff
  const onChildExit = options.onChildExit ?? (() => Effect.void)
  const onChildRestart = options.onChildRestart ?? (() => Effect.void)

  // Created before the keepers, so the scope (closing in reverse order) stops keepers first.
  const children = yield* FiberMap.make<string, unknown, unknown>()
  const keepers = yield* FiberSet.make<void, never>()
  const escalated = options.escalateTo ?? (yield* Deferred.make<never, SupervisorEscalated>())
  // Restart times of all children: intensity is supervisor-wide, as in OTP.
  let recentRestarts: Array<number> = []

  const keep = Effect.fnUntraced(function*(child: Child<R>) {
    let step = yield* Schedule.toStep(backoff)
    let restarts = 0
    while (true) {
      const startedAt = yield* Clock.currentTimeMillis
      const fiber = yield* FiberMap.run(children, child.name, child.run)
      // A keeper interrupted while waiting (shutdown) takes its child down with it.
      const exit = yield* Fiber.await(fiber).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber)))
      yield* onChildExit(child.name, exit)
      yield* Effect.logWarning(`child ${child.name} exited`, exit)

      const now = yield* Clock.currentTimeMillis
      // A child that stayed up for a whole window starts its backoff afresh.
      if (now - startedAt >= withinMillis) step = yield* Schedule.toStep(backoff)
      recentRestarts = recentRestarts.filter((at) => now - at < withinMillis)
      const allowed = recentRestarts.length < maxRestarts
      // Counted in the same step as the check, before anything can yield: a twin that exited in
      // the same tick sees this restart, so two exits together never pass the intensity by one.
      if (allowed) recentRestarts.push(now)
      const delay = !allowed
        ? Option.none()
        : yield* step(now, exit).pipe(
          Effect.map(([, delay]) => Option.some(delay)),
          Pull.catchDone(() => Effect.succeed(Option.none()))
        )
      if (Option.isNone(delay)) {
        const error = new SupervisorEscalated({ child: child.name, restarts: recentRestarts.length, withinMillis })
        yield* Effect.logError(error.message)
        return yield* Deferred.fail(escalated, error)
      }
      yield* Effect.sleep(delay.value)
      restarts += 1
      // Before the new fiber starts, so its first success is reported after the restart.
      yield* onChildRestart(child.name, restarts)
    }
  })

  for (const child of options.children) {
    yield* FiberSet.run(
      keepers,
      keep(child).pipe(
        // A keeper that dies (a defect in a hook) must not leave its child unsupervised.
        Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.void : Deferred.failCause(escalated, cause)),
        Effect.asVoid,
        Effect.annotateLogs({ child: child.name })
      )
    )
  }

  const supervisor: Supervisor = {
    names,
    fiber: (name) => FiberMap.get(children, name),
    await: Deferred.await(escalated)
  }
  return supervisor
})

/** Runs the children until the restart intensity is exceeded; interrupt it to shut down. */
export const run = <R>(options: SupervisorOptions<R>): Effect.Effect<never, SupervisorEscalated, R> =>
  Effect.scoped(Effect.flatMap(make(options), (supervisor) => supervisor.await))

/**
 * Who answers for a fiber that ends unexpectedly (see {@link fork}): there is no third way.
 * - `endsOwner`: the fiber lives beside its owner (a loop's or a component's own fiber); its
 *   unexpected end interrupts the owner, whose supervisor restarts it with readiness false meanwhile.
 * - `"restart"`: restarted here, after the default backoff, without end (a process without a
 *   readiness to turn false: admin's feeds, the demo; and the worker's escalation watcher).
 * - `"reconcile"`: a {@link DynamicSupervisor} child: its owner's next reconcile starts it again.
 */
export type Answer =
  | { readonly endsOwner: Fiber.Fiber<unknown, unknown> }
  | "restart"
  | "reconcile"

export interface ForkOptions {
  /** For the logs. */
  readonly name: string
  readonly answer: Answer
  /**
   * `"forever"` (default): any end but its scope closing is unexpected, interruption by anyone
   * else included. `"task"`: ending by itself is expected, and so is its starter interrupting it
   * (a cancelled timer); failing or dying is not.
   */
  readonly lifetime?: "forever" | "task" | undefined
  /** The scope it lives in; default the current one. */
  readonly scope?: Scope.Scope | undefined
  /** Runs at once in the caller's stack up to its first wait (a timer armed before the caller goes on). */
  readonly startImmediately?: boolean | undefined
}

/**
 * The one way a fiber is started in src/ (test/actors/Forks.test.ts holds this): forked into its
 * scope, interrupted when the scope closes, and answered for by `answer` when it ends otherwise.
 */
export function fork<A, E, R>(options: ForkOptions & { readonly scope: Scope.Scope }, effect: Effect.Effect<A, E, R>): Effect.Effect<Fiber.Fiber<A, E>, never, R>
export function fork<A, E, R>(options: ForkOptions, effect: Effect.Effect<A, E, R>): Effect.Effect<Fiber.Fiber<A, E>, never, R | Scope.Scope>
export function fork<A, E, R>(options: ForkOptions, effect: Effect.Effect<A, E, R>): Effect.Effect<Fiber.Fiber<A, E>, never, R | Scope.Scope> {
  return Effect.gen(function*() {
    const scope = options.scope ?? (yield* Effect.scope)
    const task = options.lifetime === "task"
    const unexpected = (exit: Exit.Exit<unknown, unknown>): boolean => {
      if (Exit.isSuccess(exit)) return !task
      if (!Cause.hasInterruptsOnly(exit.cause)) return true
      return !task && scope.state._tag !== "Closed"
    }
    const answered = (exit: Exit.Exit<A, E>): Effect.Effect<void> => {
      if (!unexpected(exit)) return Effect.void
      const logged = Effect.logError(`fiber ${options.name} ended unexpectedly`, exit)
      const answer = options.answer
      return typeof answer === "object" ? Effect.andThen(logged, Effect.sync(() => answer.endsOwner.interruptUnsafe())) : logged
    }
    const forkOptions = { startImmediately: options.startImmediately }
    if (options.answer !== "restart") return yield* Effect.forkIn(Effect.onExit(effect, answered), scope, forkOptions)
    // Restarted in the same fiber: its handle stays good for the caller.
    const restarting = Effect.gen(function*() {
      let step = yield* Schedule.toStep(defaultBackoff)
      while (true) {
        const exit = yield* Effect.exit(effect)
        if (!unexpected(exit)) return yield* exit
        yield* answered(exit)
        const now = yield* Clock.currentTimeMillis
        const [, delay] = yield* step(now, exit).pipe(Pull.catchDone(() => Effect.succeed([undefined, Duration.seconds(10)] as const)))
        yield* Effect.sleep(delay)
      }
    })
    return yield* Effect.forkIn(restarting, scope, forkOptions)
  })
}
