// Keeps one child fiber per key in step with a desired set (e.g. one listener per enabled push
// registration): each reconcile starts new keys, stops removed ones and restarts crashed or changed ones.
import { Equal, Effect, type Fiber, FiberMap, Option, Semaphore } from "effect"
import * as Supervisor from "./Supervisor.ts"

export interface DynamicSupervisorOptions<K, S, R> {
  /** The child for one key; meant to run until it is stopped. */
  readonly run: (key: K, spec: S) => Effect.Effect<unknown, unknown, R>
  /** When a key's spec is no longer the same, its child is restarted; default `Equal.equals`. */
  readonly isSame?: ((previous: S, next: S) => boolean) | undefined
}

export interface ReconcileResult<K> {
  readonly started: ReadonlyArray<K>
  readonly stopped: ReadonlyArray<K>
  /** Keys whose child had exited on its own since the previous reconcile. */
  readonly restarted: ReadonlyArray<K>
  /** Keys whose spec changed. */
  readonly replaced: ReadonlyArray<K>
}

export interface DynamicSupervisor<K, S> {
  readonly reconcile: (desired: ReadonlyMap<K, S>) => Effect.Effect<ReconcileResult<K>>
  /** Keys with a running child. */
  readonly running: Effect.Effect<ReadonlyArray<K>>
  readonly fiber: (key: K) => Effect.Effect<Option.Option<Fiber.Fiber<unknown, unknown>>>
}

/** Children live until reconcile drops their key or the scope closes. */
export const make = Effect.fnUntraced(function*<K, S, R>(options: DynamicSupervisorOptions<K, S, R>) {
  const isSame = options.isSame ?? ((previous: S, next: S) => Equal.equals(previous, next))
  const children = yield* FiberMap.make<K, unknown, unknown>()
  // Captured now, so reconcile can start children without requirements of its own.
  const context = yield* Effect.context<R>()
  const scope = yield* Effect.scope
  // The spec each started key was last started with; a key here but absent from `children` crashed.
  const specs = new Map<K, S>()
  // Two overlapping reconciles could both start the same missing key.
  const lock = yield* Semaphore.make(1)

  const start = (key: K, spec: S) => {
    specs.set(key, spec)
    return Supervisor.fork(
      // Interruption is how reconcile and shutdown stop a child: a task's cancel, not worth a warning.
      { name: `child ${String(key)} (restarted at the next reconcile)`, answer: "reconcile", lifetime: "task", scope, startImmediately: true },
      Effect.provideContext(options.run(key, spec), context)
    ).pipe(Effect.flatMap((fiber) => FiberMap.set(children, key, fiber)))
  }

  const reconcile = (desired: ReadonlyMap<K, S>) =>
    lock.withPermit(Effect.gen(function*() {
      const started: Array<K> = []
      const stopped: Array<K> = []
      const restarted: Array<K> = []
      const replaced: Array<K> = []
      for (const key of specs.keys()) {
        if (desired.has(key)) continue
        specs.delete(key)
        yield* FiberMap.remove(children, key)
        stopped.push(key)
      }
      for (const [key, spec] of desired) {
        const previous = specs.get(key)
        const running = FiberMap.hasUnsafe(children, key)
        if (previous === undefined) started.push(key)
        else if (!isSame(previous, spec)) replaced.push(key)
        else if (!running) restarted.push(key)
        else continue
        // Wait for the old child to finish stopping, so old and new never hold the same resource.
        if (running) yield* FiberMap.remove(children, key)
        yield* start(key, spec)
      }
      return { started, stopped, restarted, replaced }
    }))

  const supervisor: DynamicSupervisor<K, S> = {
    reconcile,
    running: Effect.sync(() => Array.from(children, ([key]) => key)),
    fiber: (key) => FiberMap.get(children, key)
  }
  return supervisor
})
