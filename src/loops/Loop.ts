// What a worker loop is (one file per loop in src/loops, one line in its index.ts) and the
// services every loop may use: the worker's settings, the kicks that wake other loops and the
// stores that hold the loops' SQL (provided together, `loopStores`). A loop
// declares what it needs in its type (`Loop<R>`): one that calls a new client needs that client
// provided to the worker, not a wider type for every loop.
import { Context, Duration, Effect, Layer, Scope } from "effect"
import type { PgClient } from "@effect/sql-pg"
import type { SqlClient } from "effect/sql"
import type { HttpClient } from "effect/http"
import type { WorkerSettings } from "./Settings.ts"
import type { HealthRegistry } from "../health/HealthRegistry.ts"
import { ChatbotStore } from "./ChatbotStore.ts"
import { DeviceSyncStore } from "./DeviceSyncStore.ts"
import { ListenerStore } from "./ListenerStore.ts"
import { MatchStore } from "./MatchStore.ts"
import { ParseStore } from "./ParseStore.ts"
import { WhitelistStore } from "./WhitelistStore.ts"

/** The loop ids of DESIGN section 8, verbatim. */
export type LoopName =
  | "pushsvc_listener_supervisor"
  | "missing_sms_sync_loop"
  | "sms_id_sync_loop"
  | "phone_whitelist_loop"
  | "parse_loop"
  | "order_match_loop"
  | "chatbot_poll_loop"
  | "webhook_delivery_loop"

/** The loops' stores (each loop's SQL), on the worker's database. */
export type LoopStores = ParseStore | WhitelistStore | DeviceSyncStore | ListenerStore | ChatbotStore | MatchStore

export const loopStores: Layer.Layer<LoopStores, never, SqlClient.SqlClient> = Layer.mergeAll(
  ParseStore.layer,
  WhitelistStore.layer,
  DeviceSyncStore.layer,
  ListenerStore.layer,
  ChatbotStore.layer,
  MatchStore.layer
)

/** The services every loop may use without asking: the worker's settings, kicks, the database and its stores, an HTTP client, the health registry (a loop's fibers report their work to it). */
export type LoopServices = Worker | Kicks | SqlClient.SqlClient | PgClient.PgClient | HttpClient.HttpClient | LoopStores | HealthRegistry

/** A loop needing the services `R` (by default only the common {@link LoopServices}). */
export interface Loop<R = LoopServices> {
  readonly name: LoopName
  /** Freshness window: the loop is stale once this long has passed without a successful pass. */
  readonly ttl: Duration.Input
  /** Period between passes, well inside the TTL. */
  readonly every: Duration.Input
  /** Tables whose changes (NOTIFY recon_changes, payload = table name) kick the loop at once. */
  readonly kickedBy?: ReadonlyArray<string> | undefined
  /**
   * Runs each time the loop's fiber (re)starts, in a scope that closes when the fiber exits:
   * whatever it forks or acquires dies with the loop. Returns one pass.
   */
  readonly start: Effect.Effect<Effect.Effect<void, unknown>, unknown, R | Scope.Scope>
}

/** The services a loop (or a union of loops) needs. */
export type Requirements<L> = L extends Loop<infer R> ? R : never

/** A loop whose pass needs no set-up. */
export const simple = <R = LoopServices>(loop: Omit<Loop<R>, "start"> & { readonly pass: Effect.Effect<void, unknown, R> }): Loop<R> => ({
  name: loop.name,
  ttl: loop.ttl,
  every: loop.every,
  kickedBy: loop.kickedBy,
  start: Effect.map(Effect.context<R>(), (context) => Effect.provideContext(loop.pass, context))
})

/** The worker's configuration, for loops that need it. */
export class Worker extends Context.Service<Worker, WorkerSettings>()("recon/loops/Worker") {
  static readonly layer = (settings: WorkerSettings) => Layer.succeed(Worker, settings)
}

/** Wakes a loop for a pass now (coalesced with any pending kick); a loop that is restarting misses nothing, as it passes at start. */
export class Kicks extends Context.Service<Kicks, {
  kick(name: LoopName): Effect.Effect<void>
  /** The runtime's side: a loop's actor takes kicks from now until the scope closes. */
  register(name: LoopName, kick: Effect.Effect<void>): Effect.Effect<void, never, Scope.Scope>
}>()("recon/loops/Kicks") {
  static readonly layer = Layer.sync(Kicks, () => {
    const kickers = new Map<LoopName, Effect.Effect<void>>()
    return Kicks.of({
      kick: (name) => Effect.suspend(() => kickers.get(name) ?? Effect.void),
      register: (name, kick) =>
        Effect.acquireRelease(
          Effect.sync(() => kickers.set(name, kick)),
          () => Effect.sync(() => kickers.get(name) === kick && kickers.delete(name))
        )
    })
  })
}

export const ttlMillis = (loop: Loop<unknown>): number => Duration.toMillis(Duration.fromInputUnsafe(loop.ttl))
