// recon_worker: every loop as a supervised actor reporting to the health registry, kicked by
// PostgreSQL LISTEN/NOTIFY, with the heartbeat file and the push/health port beside them; the
// fibers that are not loops run as supervised components of the same readiness.
import { ingestPool } from "../db/Database.ts"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { PgClient } from "@effect/sql-pg"
import { Cause, Context, Effect, Layer, Queue, Schedule } from "effect"
import { FetchHttpClient } from "effect/http"
import { AdminClient } from "../clients/AdminClient.ts"
import { WalletClient } from "../clients/WalletClient.ts"
import * as Actor from "../actors/Actor.ts"
import * as Supervisor from "../actors/Supervisor.ts"
import type { HttpSettings } from "../config/AppConfig.ts"
import type { WorkerSettings } from "../loops/Settings.ts"
import { Fatal } from "../commands/Lifecycle.ts"
import { IngestBatchers } from "./IngestBatchers.ts"
import { IngestStore } from "../loops/IngestStore.ts"
import { CHANGES_CHANNEL } from "../db/Sms.ts"
import { Components } from "../health/Components.ts"
import * as Heartbeat from "../health/Heartbeat.ts"
import { memoryTrim } from "../health/MemoryTrim.ts"
import { HealthRegistry } from "../health/HealthRegistry.ts"
import { PushServerLive } from "./PushServer.ts"
import { timeLoopPass, WorkerFamiliesLive } from "../observability/Metrics.ts"
import { loops as allLoops } from "../loops/index.ts"
import { Kicks, type Loop, type LoopName, loopStores, type Requirements, Worker } from "../loops/Loop.ts"
import { ParseInbox } from "../loops/ParseLoop.ts"

/** The running worker: its supervisor, components and loops (tests and the benchmark reach the fibers through it). */
export class WorkerRuntime extends Context.Service<WorkerRuntime, {
  readonly supervisor: Supervisor.Supervisor
  readonly components: Components["Service"]
  readonly loops: ReadonlyArray<Loop<unknown>>
}>()("recon/worker/Runtime/WorkerRuntime") {}

export interface RuntimeOptions {
  /** Restart intensity (DESIGN section 8: 5 in 60 s), of the loops and of each component; tests may shrink the backoff. */
  readonly maxRestarts?: number | undefined
  readonly backoff?: Supervisor.SupervisorOptions<never>["backoff"]
}

/** The loops under one supervisor; needs the services the loops need and the health registry. */
const supervised = <L extends Loop<any>>(loops: ReadonlyArray<L>, options: RuntimeOptions) =>
  Layer.effect(WorkerRuntime, Effect.gen(function*() {
    const registry = yield* HealthRegistry
    const components = yield* Components
    const fatal = yield* Fatal
    const kicks = yield* Kicks

    const context = yield* Effect.context<Requirements<L>>()
    const child = (loop: L) => ({
      name: loop.name,
      run: Effect.scoped(Effect.gen(function*() {
        const pass = yield* (loop.start as Effect.Effect<Effect.Effect<void, unknown>, unknown, Requirements<L>>)
        const actor = yield* Actor.make({
          name: loop.name,
          every: loop.every,
          pass: timeLoopPass(loop.name)(pass),
          // DESIGN section 8: a pass still running at the TTL is hung; the loop's fiber exits and is restarted.
          hungAfter: loop.ttl,
          onSuccess: registry.reportSuccess(loop.name)
        })
        yield* kicks.register(loop.name, actor.kick)
        return yield* actor.run
      }).pipe(
        // In the dying fiber and before the loop's own clean-up (which may wait on the database),
        // so readiness is false before anyone can observe the exit.
        Effect.onExit(() => registry.reportExit(loop.name))
      )).pipe(
        Effect.provideContext(context),
        Effect.annotateLogs({ loop: loop.name })
      )
    })

    const supervisor = yield* Supervisor.make({
      children: loops.map(child),
      maxRestarts: options.maxRestarts,
      backoff: options.backoff,
      onChildRestart: (name) => registry.reportRestart(name)
    })
    // A loop or a component past its restart intensity.
    const escalated = Effect.raceFirst(supervisor.await, components.await)
    yield* Supervisor.fork({ name: "escalation watcher", answer: "restart", lifetime: "task" }, escalated.pipe(Effect.catch(fatal.stop)))
    yield* components.run("change_listener", listenForChanges(loops, kicks, registry))
    yield* components.run("memory_trim", memoryTrim)
    return { supervisor, components, loops }
  }))

/**
 * Kicks the loops a table's change concerns (NOTIFY recon_changes, payload = table). After every
 * (re)subscription all of them are kicked once: changes made while the connection was down
 * would otherwise wait for the schedule. The component `change_listener` is up only while
 * subscribed: a lost LISTEN makes the worker not ready until it is subscribed again.
 */
const listenForChanges = (loops: ReadonlyArray<Loop<unknown>>, kicks: Kicks["Service"], registry: HealthRegistry["Service"]) =>
  Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    const byTable = new Map<string, Array<LoopName>>()
    for (const loop of loops) {
      for (const table of loop.kickedBy ?? []) byTable.set(table, [...(byTable.get(table) ?? []), loop.name])
    }
    const subscribed = Effect.scoped(Effect.gen(function*() {
      const notifications = yield* pg.listen(CHANGES_CHANNEL)
      yield* registry.reportSuccess("change_listener")
      yield* Effect.forEach(new Set([...byTable.values()].flat()), kicks.kick, { discard: true })
      while (true) {
        const notification = yield* Queue.take(notifications)
        yield* Effect.forEach(byTable.get(notification.payload) ?? [], kicks.kick, { discard: true })
      }
    }))
    return yield* subscribed.pipe(
      Effect.tapCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.void
          : Effect.andThen(Effect.logWarning("LISTEN recon_changes lost; resubscribing", cause), registry.reportRestart("change_listener"))),
      Effect.retry(Schedule.min([Schedule.exponential("500 millis"), Schedule.spaced("10 seconds")]))
    )
  })

/** The clients of the services the worker calls, on the HttpClient of the layer graph. */
export const clientsLayer = (settings: WorkerSettings) => {
  const token = settings.callerToken
  return Layer.mergeAll(
    WalletClient.layer({ baseUrl: settings.walletUrl, token }),
    AdminClient.layer({ baseUrl: settings.adminUrl, token })
  )
}

/**
 * The worker without its HTTP port: loops, supervisor, health registry, the components (LISTEN,
 * heartbeat file, ingest batchers), the one IngestStore the push port and chatbot_poll_loop share
 * (the push port's requests through the batchers), the loops' stores, and the inbox through which
 * the push port hands stored SMS to parse_loop.
 */
export const workerCore = <L extends Loop<any> = (typeof allLoops)[number]>(
  settings: WorkerSettings,
  loops: ReadonlyArray<L> = allLoops as unknown as ReadonlyArray<L>,
  options: RuntimeOptions = {}
) => withWorkerServices(supervised(loops, options), settings, loops, options)

/** `layer` (the supervised loops, with or without the push port) on everything of the core but the loops. */
const withWorkerServices = <A, E, R, L extends Loop<any>>(layer: Layer.Layer<A, E, R>, settings: WorkerSettings, loops: ReadonlyArray<L>, options: RuntimeOptions) =>
  layer.pipe(
    Layer.provideMerge(WorkerFamiliesLive),
    Layer.provideMerge(Heartbeat.layer({ path: settings.heartbeatFile })),
    Layer.provideMerge(IngestBatchers.layer),
    Layer.provideMerge(Layer.provide(IngestStore.layer, ingestPool)),
    Layer.provideMerge(Components.layer(options)),
    Layer.provideMerge(HealthRegistry.layer(loops.map((loop) => ({ name: loop.name, ttl: loop.ttl })))),
    Layer.provideMerge(ParseInbox.layer),
    Layer.provideMerge(Kicks.layer),
    Layer.provideMerge(loopStores),
    Layer.provide(clientsLayer(settings)),
    Layer.provide([Worker.layer(settings), FetchHttpClient.layer, NodeServices.layer])
  )

/**
 * `worker`: the core, the push/health port, and exit 1 once the supervisor gives up. The port
 * listens before the loops start: a worker restarted on a busy machine stores SMS (and answers
 * /health/live) as soon as its ingest can, while its loops' start-up (templates compiled, first
 * passes) follows; /health/ready stays false until every loop has reported.
 */
export const WorkerLive = (settings: WorkerSettings, http: HttpSettings) =>
  withWorkerServices(supervised(allLoops, {}).pipe(Layer.provideMerge(PushServerLive(settings.port, http))), settings, allLoops, {})
