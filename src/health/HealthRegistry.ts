// The worker's health registry: per-loop freshness, exits and restarts, the components (long-lived
// fibers that are not loops) that are up or not, and the readiness derived from them (DESIGN
// section 8), with a stream of readiness changes for the heartbeat writer.
import { Clock, Context, DateTime, Duration, Effect, type Fiber, Layer, Option, Stream, SubscriptionRef } from "effect"
import * as Supervisor from "../actors/Supervisor.ts"
import type { LoopState } from "../domain/HeartbeatJson.ts"
import { exposeLoops } from "../observability/Metrics.ts"

export interface LoopSpec {
  readonly name: string
  /** The loop is stale once this long has passed since its last successful pass. */
  readonly ttl: Duration.Input
}

export interface LoopHealth {
  readonly name: string
  readonly state: LoopState
  readonly ttl: Duration.Duration
  readonly lastSuccessAt: Option.Option<DateTime.Utc>
  readonly fresh: boolean
  readonly restarts: number
}

/**
 * A component's own freshness rule, for one that takes work (a batcher, the hand-over, the wallet
 * answers' recorder): with work waiting, it is stale once `staleAfter` has passed without progress
 * (since the work began waiting, or since its last progress, whichever is later); idle, it is
 * never stale. Without a rule, a component is fresh for as long as it is up.
 */
export interface WorkRule {
  readonly staleAfter: Duration.Input
}

/** What the rule reads: when the work began waiting (undefined: idle) and the last progress. */
export interface WorkState {
  readonly staleAfterMillis: number
  readonly waitingSince: number | undefined
  readonly lastProgressAt: number | undefined
}

/** When the work goes stale if nothing moves (Infinity when idle). */
export const workStaleAt = (work: WorkState): number =>
  work.waitingSince === undefined ? Infinity : Math.max(work.waitingSince, work.lastProgressAt ?? -Infinity) + work.staleAfterMillis

/** The rule: idle is fresh; waiting work is fresh until `staleAfter` without progress. */
export const workIsFresh = (work: WorkState, now: number): boolean => now < workStaleAt(work)

/** A long-lived fiber of the worker that is not a loop: up from its start until it exits, no TTL (unless it has a {@link WorkRule}). */
export interface ComponentHealth {
  readonly name: string
  readonly state: LoopState
  readonly restarts: number
  /** With a {@link WorkRule}: whether work waits, and since when it has made no progress. */
  readonly work?: {
    readonly waiting: boolean
    readonly staleAfter: Duration.Duration
    readonly lastProgressAt: Option.Option<DateTime.Utc>
  } | undefined
}

export interface HealthSnapshot {
  readonly ready: boolean
  readonly at: DateTime.Utc
  readonly loops: ReadonlyArray<LoopHealth>
  /** Absent or empty when the registry has none. */
  readonly components?: ReadonlyArray<ComponentHealth> | undefined
}

export class HealthRegistry extends Context.Service<HealthRegistry, {
  /** A pass of the loop succeeded now. */
  reportSuccess(name: string): Effect.Effect<void>
  /** The loop's fiber exited: not ready from this very moment until its next success. */
  reportExit(name: string): Effect.Effect<void>
  /** The supervisor started the loop again. */
  reportRestart(name: string): Effect.Effect<void>
  /**
   * Adds a component: not ready from now until it reports its start with `reportSuccess`; then
   * `reportExit`/`reportRestart` as for a loop. A name already registered is a defect.
   */
  registerComponent(name: string, rule?: WorkRule): Effect.Effect<void>
  /**
   * Adds a fiber that lives inside a loop (the hand-over, the wallet calls), with its rule: up for
   * as long as its loop is (the loop's entry shows its exits). Registering it again (the loop
   * restarted) starts its work afresh.
   */
  registerWork(name: string, rule: WorkRule): Effect.Effect<void>
  /** Work waits now (`true`), or none is left (`false`); for a component with a {@link WorkRule}. */
  reportWaiting(name: string, waiting: boolean): Effect.Effect<void>
  /** The component moved work on now (a batch flushed, answers recorded). */
  reportProgress(name: string): Effect.Effect<void>
  readonly snapshot: Effect.Effect<HealthSnapshot>
  readonly ready: Effect.Effect<boolean>
  /** The current readiness, then every change of it. */
  readonly readiness: Stream.Stream<boolean>
}>()("recon/health/HealthRegistry") {
  static layer(loops: ReadonlyArray<LoopSpec>): Layer.Layer<HealthRegistry> {
    return Layer.effect(HealthRegistry, make(loops))
  }
}

interface Entry {
  readonly name: string
  /** Infinity for a component: fresh for as long as it is up. */
  readonly ttlMillis: number
  readonly component: boolean
  lastSuccessAt: number | undefined
  exited: boolean
  restarting: boolean
  restarts: number
  work: { -readonly [K in keyof WorkState]: WorkState[K] } | undefined
}

const isFresh = (entry: Entry, now: number): boolean =>
  !entry.exited && !entry.restarting && entry.lastSuccessAt !== undefined &&
  now - entry.lastSuccessAt < entry.ttlMillis && (entry.work === undefined || workIsFresh(entry.work, now))

const stateOf = (entry: Entry, now: number, startedAt: number): LoopState => {
  if (entry.exited) return "exited"
  if (entry.restarting) return "restarting"
  if (isFresh(entry, now)) return "running"
  // A loop still inside its first TTL is starting; after that, never having succeeded is stale.
  return entry.lastSuccessAt === undefined && now - startedAt < entry.ttlMillis ? "starting" : "stale"
}

const workOf = (rule: WorkRule | undefined): Entry["work"] =>
  rule === undefined
    ? undefined
    : { staleAfterMillis: Duration.toMillis(Duration.fromInputUnsafe(rule.staleAfter)), waitingSince: undefined, lastProgressAt: undefined }

const make = Effect.fnUntraced(function*(loops: ReadonlyArray<LoopSpec>) {
  const entries = new Map<string, Entry>(loops.map((loop) => [loop.name, {
    name: loop.name,
    ttlMillis: Duration.toMillis(Duration.fromInputUnsafe(loop.ttl)),
    component: false,
    lastSuccessAt: undefined,
    exited: false,
    restarting: false,
    restarts: 0,
    work: undefined
  }]))
  const startedAt = yield* Clock.currentTimeMillis
  const readyRef = yield* SubscriptionRef.make(false)
  // One pending timer that re-evaluates readiness when the earliest fresh loop or work expires.
  const scope = yield* Effect.scope
  let timer: Fiber.Fiber<void> | undefined
  /** When the pending timer fires (Infinity when none is pending). */
  let armedAt = Infinity

  // Prometheus reads each loop's freshness and restarts from here at every scrape.
  const clock = yield* Clock.Clock
  yield* exposeLoops(loops.map((loop) => loop.name), (name) => {
    const entry = entries.get(name)!
    return { fresh: isFresh(entry, clock.currentTimeMillisUnsafe()), restarts: entry.restarts }
  })

  const isReady = (now: number) => entries.size > 0 && Array.from(entries.values()).every((e) => isFresh(e, now))

  // Publishes readiness (only when it changed) and re-arms the expiry timer; runs after every change.
  const refresh: Effect.Effect<void> = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const ready = isReady(now)
    if (SubscriptionRef.getUnsafe(readyRef) !== ready) yield* SubscriptionRef.set(readyRef, ready)
    let earliest = Infinity
    for (const entry of entries.values()) {
      if (!isFresh(entry, now)) continue
      if (!entry.component) earliest = Math.min(earliest, entry.lastSuccessAt! + entry.ttlMillis)
      if (entry.work !== undefined) earliest = Math.min(earliest, workStaleAt(entry.work))
    }
    // Re-armed only for an earlier deadline: reports on the hot path (a batch flushed, answers
    // recorded) move deadlines later, and a timer that fires early only refreshes and re-arms.
    if (earliest < armedAt) {
      timer?.interruptUnsafe()
      armedAt = earliest
      timer = yield* Supervisor.fork(
        { name: "health expiry timer", answer: "restart", lifetime: "task", scope, startImmediately: true },
        // Forgotten before it refreshes, so the refresh does not interrupt the fiber it runs in.
        Effect.sleep(earliest - now).pipe(Effect.andThen(Effect.sync(() => {
          timer = undefined
          armedAt = Infinity
        })), Effect.andThen(refresh))
      )
    }
  })

  const update = (name: string, f: (entry: Entry, now: number) => void) =>
    Effect.gen(function*() {
      const entry = entries.get(name)
      if (entry === undefined) return yield* Effect.logWarning(`health report for unknown loop ${name}`)
      f(entry, yield* Clock.currentTimeMillis)
      yield* refresh
    })

  const loopHealth = (entry: Entry, now: number): LoopHealth => ({
    name: entry.name,
    state: stateOf(entry, now, startedAt),
    ttl: Duration.millis(entry.ttlMillis),
    lastSuccessAt: entry.lastSuccessAt === undefined
      ? Option.none()
      : Option.some(DateTime.makeUnsafe(entry.lastSuccessAt)),
    fresh: isFresh(entry, now),
    restarts: entry.restarts
  })

  return HealthRegistry.of({
    reportSuccess: (name) =>
      update(name, (entry, now) => {
        entry.lastSuccessAt = now
        entry.exited = false
        entry.restarting = false
      }),
    reportExit: (name) =>
      update(name, (entry) => {
        entry.exited = true
        entry.restarting = false
      }),
    reportRestart: (name) =>
      update(name, (entry) => {
        entry.exited = false
        entry.restarting = true
        entry.restarts += 1
      }),
    registerComponent: (name, rule) =>
      Effect.suspend(() => {
        if (entries.has(name)) return Effect.die(new Error(`health registry: ${name} is registered already`))
        entries.set(name, { name, ttlMillis: Infinity, component: true, lastSuccessAt: undefined, exited: false, restarting: false, restarts: 0, work: workOf(rule) })
        return refresh
      }),
    registerWork: (name, rule) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const entry = entries.get(name)
        if (entry !== undefined && (!entry.component || entry.work === undefined)) {
          return yield* Effect.die(new Error(`health registry: ${name} is registered already`))
        }
        entries.set(name, { name, ttlMillis: Infinity, component: true, lastSuccessAt: now, exited: false, restarting: false, restarts: entry?.restarts ?? 0, work: workOf(rule) })
        yield* refresh
      }),
    reportWaiting: (name, waiting) =>
      update(name, (entry, now) => {
        if (entry.work === undefined) return
        if (!waiting) entry.work.waitingSince = undefined
        else entry.work.waitingSince ??= now
      }),
    reportProgress: (name) =>
      update(name, (entry, now) => {
        if (entry.work !== undefined) entry.work.lastProgressAt = now
      }),
    snapshot: Effect.map(Clock.currentTimeMillis, (now) => {
      const all = Array.from(entries.values())
      const components = all.filter((entry) => entry.component).map((entry): ComponentHealth => ({
        name: entry.name,
        state: stateOf(entry, now, startedAt),
        restarts: entry.restarts,
        ...(entry.work === undefined ? {} : {
          work: {
            waiting: entry.work.waitingSince !== undefined,
            staleAfter: Duration.millis(entry.work.staleAfterMillis),
            lastProgressAt: entry.work.lastProgressAt === undefined ? Option.none() : Option.some(DateTime.makeUnsafe(entry.work.lastProgressAt))
          }
        })
      }))
      return {
        ready: isReady(now),
        at: DateTime.makeUnsafe(now),
        loops: all.filter((entry) => !entry.component).map((entry) => loopHealth(entry, now)),
        ...(components.length > 0 ? { components } : {})
      }
    }),
    ready: Effect.map(Clock.currentTimeMillis, isReady),
    readiness: SubscriptionRef.changes(readyRef).pipe(Stream.changes)
  })
})
