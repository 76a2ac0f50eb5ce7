// Traces (DESIGN section 11): when an OTLP endpoint is configured, each service exports its spans
// with effect's OTLP exporter (OTLP/HTTP, JSON bodies) under its own service.name. One SMS is one
// trace: the webhook's span context is stored on the SMS row (shooter_sms.trace_parent, a W3C
// `traceparent`), and the loops that take the SMS further run its work as children of it; the
// HTTP client carries the context on to wallet_service, whose server continues it. Off (no
// endpoint), nothing here costs more than effect's own spans.
import { Effect, Fiber, Layer, Option, Redacted, Tracer } from "effect"
import { FetchHttpClient, Headers, HttpTraceContext } from "effect/http"
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"
import type { SqlClient } from "effect/sql"
import type { TracingSettings } from "../config/AppConfig.ts"
import type { ServiceName } from "./Metrics.ts"

/**
 * Root spans only for what starts a piece of work from outside (a request, a consumed message):
 * the database statements of loop passes and timers, and the calls they make, would otherwise
 * each open a trace of their own every few seconds. A span with a parent follows its parent.
 */
const startedFromOutside = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (options) =>
      tracer.span(Option.isNone(options.parent) && options.kind !== "server" && options.kind !== "consumer" ? { ...options, sampled: false } : options),
    context: tracer.context
  })

/** The tracer of one service (`service.name` as OTEL_SERVICE_NAME says, else the service's own), or nothing when tracing is off. */
export const tracingLayer = (settings: TracingSettings | undefined, service: ServiceName): Layer.Layer<never> =>
  settings === undefined ? Layer.empty : Layer.effect(
    Tracer.Tracer,
    Effect.map(
      OtlpTracer.make({
        url: settings.url,
        resource: { serviceName: settings.serviceName ?? service },
        headers: settings.headers === undefined ? undefined : Redacted.value(settings.headers),
        exportInterval: settings.exportIntervalMs
      }),
      startedFromOutside
    )
  ).pipe(
    Layer.provide([OtlpExporter.layerFlusher, OtlpSerialization.layerJson, FetchHttpClient.layer])
  )

/** Whether this fiber's spans go to a collector (an OTLP tracer is installed and not disabled here). */
const tracing = (fiber: Fiber.Fiber<unknown, unknown>): boolean =>
  fiber.cache.tracerEnabled && fiber.cache.tracer !== undefined && fiber.cache.tracer !== Tracer.nativeTracer

export const isTracing: Effect.Effect<boolean> = Effect.withFiber((fiber) => Effect.succeed(tracing(fiber)))

/** The `traceparent` of the current span when it is exported: what an SMS stored now keeps for its later steps. */
export const currentTraceparent: Effect.Effect<string | undefined> = Effect.withFiber((fiber) => {
  const span = fiber.cache.span
  return Effect.succeed(tracing(fiber) && span?._tag === "Span" && span.sampled ? HttpTraceContext.toHeaders(span).traceparent : undefined)
})

/** Runs an effect of one SMS inside that SMS's trace. */
export type WithinSms = (smsId: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

const asIs: WithinSms = () => (effect) => effect

const LOOKUP_LIMIT = "1 second"

/**
 * The traces of these SMS, as their ingest stored them, to run each one's later work as part of
 * it. As is when tracing is off, or when the work runs inside an exported span already (the
 * webhook's own request). Never fails, and gives up after {@link LOOKUP_LIMIT} (it may run
 * after a commit, where nothing else could interrupt it): a trace lost is no reason to hold an SMS.
 */
export const smsTraces = (sql: SqlClient.SqlClient, ids: ReadonlyArray<number>): Effect.Effect<WithinSms> =>
  Effect.withFiber((fiber) => {
    if (ids.length === 0 || !tracing(fiber) || fiber.cache.span?.sampled === true) return Effect.succeed(asIs)
    return Effect.gen(function*() {
      const rows = yield* sql<{ id: bigint | number | string; trace_parent: string }>`
        SELECT id, trace_parent FROM recon.shooter_sms WHERE id IN ${sql.in(ids)} AND trace_parent IS NOT NULL`
      const parents = new Map<number, Tracer.AnySpan>()
      for (const row of rows) {
        const parent = HttpTraceContext.fromHeaders(Headers.fromInput({ traceparent: row.trace_parent }))
        if (Option.isSome(parent)) parents.set(Number(row.id), parent.value)
      }
      const within: WithinSms = (smsId) => (effect) => {
        const parent = parents.get(smsId)
        return parent === undefined ? effect : Effect.withParentSpan(effect, parent)
      }
      return within
    }).pipe(Effect.interruptible, Effect.timeout(LOOKUP_LIMIT), Effect.orElseSucceed(() => asIs))
  })
