// The worker's long-lived fibers that are not loops (the LISTEN fiber, the heartbeat writer, the
// ingest batchers): each restarted by a supervisor and a named component of readiness, so that
// any exit makes the worker not ready at once, as a loop's does (DESIGN section 8).
import { Context, Deferred, Effect, type Fiber, Layer, type Option, type Scope } from "effect"
import * as Supervisor from "../actors/Supervisor.ts"
import { HealthRegistry, type WorkRule } from "./HealthRegistry.ts"

export interface ComponentsOptions {
  /** Restarts of one component allowed within 60 s before it escalates (default 5, as the loops'). */
  readonly maxRestarts?: number | undefined
  readonly backoff?: Supervisor.SupervisorOptions<never>["backoff"]
}

export class Components extends Context.Service<Components, {
  /**
   * Runs `effect` (meant to run forever) as the component `name` until the scope closes: ready
   * from its start, not ready from the moment it exits until it has been started again; with a
   * `rule`, also not ready while its work waits past the rule without progress.
   */
  run<R>(name: string, effect: Effect.Effect<unknown, unknown, R>, rule?: WorkRule): Effect.Effect<void, never, R | Scope.Scope>
  /** The component's current fiber, if it is running (tests kill it through this). */
  fiber(name: string): Effect.Effect<Option.Option<Fiber.Fiber<unknown, unknown>>>
  /** Fails once a component has exceeded its restart intensity (the worker then exits with code 1). */
  readonly await: Effect.Effect<never, Supervisor.SupervisorEscalated>
}>()("recon/health/Components") {
  static layer(options: ComponentsOptions = {}): Layer.Layer<Components, never, HealthRegistry> {
    return Layer.effect(Components, make(options))
  }
}

const make = Effect.fnUntraced(function*(options: ComponentsOptions) {
  const registry = yield* HealthRegistry
  const escalated = yield* Deferred.make<never, Supervisor.SupervisorEscalated>()
  const supervisors = new Map<string, Supervisor.Supervisor>()

  const run = <R>(name: string, effect: Effect.Effect<unknown, unknown, R>, rule?: WorkRule) =>
    Effect.gen(function*() {
      yield* registry.registerComponent(name, rule)
      const context = yield* Effect.context<R>()
      const supervisor = yield* Supervisor.make({
        children: [{
          name,
          run: registry.reportSuccess(name).pipe(
            Effect.andThen(effect),
            // In the dying fiber, before its own clean-up: readiness is false before anyone can observe the exit.
            Effect.onExit(() => registry.reportExit(name)),
            Effect.provideContext(context),
            Effect.annotateLogs({ component: name })
          )
        }],
        maxRestarts: options.maxRestarts,
        backoff: options.backoff,
        onChildRestart: (child) => registry.reportRestart(child),
        escalateTo: escalated
      })
      supervisors.set(name, supervisor)
    })

  return Components.of({
    run,
    fiber: (name) => {
      const supervisor = supervisors.get(name)
      return supervisor === undefined ? Effect.die(new Error(`no component ${name}`)) : supervisor.fiber(name)
    },
    await: Deferred.await(escalated)
  })
})
