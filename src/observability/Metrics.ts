// The metrics of DESIGN section 11, defined here and nowhere else, with one recording call for
// each place that does the work; GET /metrics renders them with effect's Prometheus exporter.
// They live in effect's metric registry of the process: under `all` the four services share it,
// so each of the four ports shows the whole process.
import { Clock, Effect, Exit, Layer, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"
import type { AgreeOutcome } from "../domain/Matching.ts"
import type { HttpSettings } from "../config/AppConfig.ts"
import { SmsStatus } from "../domain/Records.ts"

/** The services' names, as metrics and traces call them. */
export type ServiceName = "recon_service" | "recon_worker" | "admin_service" | "wallet_service"

/** One series per distinct set of labels, each built once (its key is computed once, not per update). */
const family = <M>(make: (labels: Record<string, string>) => M) => {
  const series = new Map<string, M>()
  return (labels: Record<string, string>): M => {
    let key = ""
    for (const name in labels) key += `${labels[name]}\u0000`
    let found = series.get(key)
    if (found === undefined) {
      found = make(labels)
      series.set(key, found)
    }
    return found
  }
}

const counter = (name: string, description: string) =>
  family((attributes) => Metric.counter(name, { description, attributes, incremental: true }))

const histogram = (name: string, description: string, boundaries: ReadonlyArray<number>) =>
  family((attributes) => Metric.histogram(name, { description, attributes, boundaries: Metric.boundariesFromIterable(boundaries) }))

const smsStatusChanges = counter("recon_sms_status_changes_total", "SMS status changes made by the worker, by the status entered")
const parses = counter("recon_parse_total", "SMS read by parse_loop, by outcome (parsed, ignored, parse_failed) and reader (template, reader, none)")
const matchDecisions = counter("recon_match_decisions_total", "Decisions of order_match_loop on parsed SMS: approve (one candidate), review, unmatched")
const walletCallSeconds = histogram(
  "recon_wallet_call_seconds",
  "Duration of the worker's calls to wallet_service, by outcome (agreed, replayed, conflict, not_found, unavailable, timeout); a call carrying several approvals counts once for each",
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
)
const loopPassSeconds = histogram(
  "recon_loop_pass_seconds",
  "Duration of each pass attempt of a worker loop, failed or not",
  [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 90]
)
const loopFresh = family((attributes) =>
  Metric.gauge("recon_loop_fresh", { description: "1 while the loop's last successful pass is within its TTL, else 0", attributes })
)
const loopRestarts = counter("recon_loop_restarts_total", "Times the supervisor restarted the loop's fiber")
const httpRequestSeconds = histogram(
  "recon_http_request_seconds",
  "Duration of HTTP requests by service, route pattern (unmatched: no route) and status",
  [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
)

const residentMemory = Metric.gauge("process_resident_memory_bytes", { description: "Resident memory of the process (RSS), in bytes" })
const heapUsed = Metric.gauge("nodejs_heap_used_bytes", { description: "V8 heap in use by the process, in bytes" })

const PARSE_SERIES = [["parsed", "template"], ["parsed", "reader"], ["ignored", "none"], ["parse_failed", "none"]] as const
const DECISIONS = ["approve", "review", "unmatched"] as const
const WALLET_OUTCOMES = ["agreed", "replayed", "conflict", "not_found", "unavailable", "timeout"] as const

/** Adds each item to its series: one update per series, however many items. */
const countInto = <A>(items: Iterable<A>, seriesOf: (item: A) => Metric.Metric<number, unknown>): Effect.Effect<void> =>
  Effect.suspend(() => {
    const counts = new Map<Metric.Metric<number, unknown>, number>()
    for (const item of items) {
      const series = seriesOf(item)
      counts.set(series, (counts.get(series) ?? 0) + 1)
    }
    return Effect.forEach(counts, ([series, n]) => Metric.update(series, n), { discard: true })
  })

/** Counts SMS entering each status. */
export const countStatusChanges = (statuses: Iterable<SmsStatus>): Effect.Effect<void> =>
  countInto(statuses, (status) => smsStatusChanges({ status }))

/** Counts what parse_loop wrote: outcome, and for a parsed SMS its reader (a template, or the built-in reader). */
export const countParses = (rows: Iterable<{ readonly status: string; readonly template_id: number | null }>): Effect.Effect<void> =>
  countInto(rows, (row) => parses({ outcome: row.status, reader: row.status !== "parsed" ? "none" : row.template_id === null ? "reader" : "template" }))

const DECISION_LABELS = { approving: "approve", manual_review: "review", unmatched: "unmatched" } as const

/** Counts order_match_loop's decisions (the status each decided SMS entered). */
export const countMatchDecisions = (decisions: Iterable<keyof typeof DECISION_LABELS>): Effect.Effect<void> =>
  countInto(decisions, (decision) => matchDecisions({ decision: DECISION_LABELS[decision] }))

const walletOutcome = (outcome: AgreeOutcome): (typeof WALLET_OUTCOMES)[number] => {
  switch (outcome._tag) {
    case "Approved":
      return "agreed"
    case "Replayed":
      return "replayed"
    case "Conflict":
      return "conflict"
    case "NotFound":
      return "not_found"
    case "Unavailable":
      return outcome.timedOut === true ? "timeout" : "unavailable"
  }
}

/** Times a wallet call, labelled with its outcome (an interrupted call has none). */
export const timeWalletCall = <R>(call: Effect.Effect<AgreeOutcome, never, R>): Effect.Effect<AgreeOutcome, never, R> =>
  timed(call, (seconds, exit) => Exit.isSuccess(exit) ? Metric.update(walletCallSeconds({ outcome: walletOutcome(exit.value) }), seconds) : Effect.void)

/** Times a call carrying several approvals (agree_batch): once per approval, labelled with its outcome. */
export const timeWalletCalls = <R>(call: Effect.Effect<ReadonlyArray<AgreeOutcome>, never, R>): Effect.Effect<ReadonlyArray<AgreeOutcome>, never, R> =>
  timed(call, (seconds, exit) =>
    Exit.isSuccess(exit)
      ? Effect.forEach(exit.value, (outcome) => Metric.update(walletCallSeconds({ outcome: walletOutcome(outcome) }), seconds), { discard: true })
      : Effect.void)

/** Times every attempt of a loop's pass, whatever its end (failure, interruption of a hung pass). */
export const timeLoopPass = (loop: string) => <E, R>(pass: Effect.Effect<void, E, R>): Effect.Effect<void, E, R> => {
  const metric = loopPassSeconds({ loop })
  return timed(pass, (seconds) => Metric.update(metric, seconds))
}

/**
 * Freshness and restarts of each loop, read from the health registry whenever metrics are read
 * (so a loop going stale shows without any event); unregistered when the scope closes.
 */
export const exposeLoops = (loops: ReadonlyArray<string>, read: (loop: string) => { readonly fresh: boolean; readonly restarts: number }) =>
  Effect.forEach(loops, (loop) =>
    Effect.all([
      readOnScrape(loopFresh({ loop }), () => ({ value: read(loop).fresh ? 1 : 0 })),
      readOnScrape(loopRestarts({ loop }), () => ({ count: read(loop).restarts, incremental: true }))
    ], { discard: true }), { discard: true })

/** A series whose state is `get`'s answer whenever metrics are read (updates do nothing); unregistered when the scope closes. */
const readOnScrape = <Input, State>(metric: Metric.Metric<Input, State>, get: () => State) =>
  Effect.flatMap(Effect.context<never>(), (context) =>
    Effect.acquireRelease(
      Effect.sync(() => Metric.registerUnsafe(metric, context, { get, update: () => {}, modify: () => {} })),
      (registration) => Effect.sync(() => registration.remove())
    ))

/**
 * The process's memory, read at each scrape: what the memory targets are about (BENCHMARKS.md),
 * without reading /proc. Under `all` each port registers the same two series (the last replaces
 * the others): one process, one value.
 */
const exposeProcessMemory = Effect.all([
  readOnScrape(residentMemory, () => ({ value: process.memoryUsage.rss() })),
  readOnScrape(heapUsed, () => ({ value: process.memoryUsage().heapUsed }))
], { discard: true })

/** Records one request: its service, its route pattern (never the raw path), its status. */
export const recordHttpRequest = (service: ServiceName, route: string, status: number, seconds: number): Effect.Effect<void> =>
  Metric.update(httpRequestSeconds({ service, route, status: String(status) }), seconds)

/**
 * The worker's families with their series at zero, so each is there from start-up (a rate over
 * a series that appears only at its first event misses that event).
 */
export const WorkerFamiliesLive = Layer.effectDiscard(Effect.all([
  ...SmsStatus.literals.map((status) => Metric.value(smsStatusChanges({ status }))),
  ...PARSE_SERIES.map(([outcome, reader]) => Metric.value(parses({ outcome, reader }))),
  ...DECISIONS.map((decision) => Metric.value(matchDecisions({ decision }))),
  ...WALLET_OUTCOMES.map((outcome) => Metric.value(walletCallSeconds({ outcome })))
], { discard: true }))

/**
 * GET /metrics in Prometheus' text format, and the service's request series at zero from
 * start-up; nothing when SVC_METRICS=off (the path is then an unknown route).
 */
export const metricsRoute = (service: ServiceName, http: HttpSettings) =>
  http.metrics
    ? Layer.mergeAll(
      PrometheusMetrics.layerHttp({ path: "/metrics" }),
      Layer.effectDiscard(Metric.value(httpRequestSeconds({ service, route: "/metrics", status: "200" }))),
      Layer.effectDiscard(exposeProcessMemory)
    )
    : Layer.empty

/** Runs `effect`, then records how long it took (on the effect's clock) and how it ended. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>, record: (seconds: number, exit: Exit.Exit<A, E>) => Effect.Effect<void>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Clock.currentTimeMillis, (start) =>
    Effect.onExit(effect, (exit) => Effect.flatMap(Clock.currentTimeMillis, (end) => record((end - start) / 1000, exit))))
