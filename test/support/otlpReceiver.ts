// A local OpenTelemetry collector for traces, speaking OTLP/HTTP with JSON bodies: POST /v1/traces
// with an ExportTraceServiceRequest (`Content-Type: application/json`) answered 200 `{}` (an
// ExportTraceServiceResponse); another path 404, another content type 415, as a collector does.
// It keeps every span with its resource's `service.name`.
import { Effect, type Scope } from "effect"
import type { IncomingHttpHeaders } from "node:http"
import { json, serveLoopback } from "./fakeServer.ts"

interface AnyValue {
  readonly stringValue?: string
  readonly intValue?: string | number
  readonly boolValue?: boolean
  readonly doubleValue?: number
}
interface KeyValue {
  readonly key: string
  readonly value: AnyValue
}
interface WireSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes?: ReadonlyArray<KeyValue>
}
interface ExportTraceServiceRequest {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource: { readonly attributes: ReadonlyArray<KeyValue> }
    readonly scopeSpans: ReadonlyArray<{ readonly spans: ReadonlyArray<WireSpan> }>
  }>
}

/** OTLP's SpanKind numbers. */
export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const

export interface ReceivedSpan {
  readonly serviceName: string
  readonly traceId: string
  readonly spanId: string
  /** Absent for a root span. */
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly kind: number
  readonly attributes: Readonly<Record<string, string | number | boolean | undefined>>
}

const valueOf = (value: AnyValue) =>
  value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue

const attributesOf = (list: ReadonlyArray<KeyValue> = []) => Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]))

export interface OtlpReceiver {
  /** The collector's base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly url: string
  readonly spans: Array<ReceivedSpan>
  /** The Content-Type of every export received. */
  readonly contentTypes: Array<string>
  /** The headers of every export received. */
  readonly headers: Array<IncomingHttpHeaders>
}

/** The receiver for the test's scope. */
export const otlpReceiver: Effect.Effect<OtlpReceiver, never, Scope.Scope> = Effect.gen(function*() {
  const spans: Array<ReceivedSpan> = []
  const contentTypes: Array<string> = []
  const headers: Array<IncomingHttpHeaders> = []
  const url = yield* serveLoopback((req, res, body) => {
    if (req.method !== "POST" || req.url !== "/v1/traces") return json(res, 404, { code: 5, message: "not found" })
    const contentType = req.headers["content-type"] ?? ""
    contentTypes.push(contentType)
    headers.push(req.headers)
    if (!contentType.startsWith("application/json")) return json(res, 415, { code: 3, message: "unsupported content type" })
    const request = JSON.parse(body) as ExportTraceServiceRequest
    for (const { resource, scopeSpans } of request.resourceSpans) {
      const serviceName = String(attributesOf(resource.attributes)["service.name"])
      for (const scope of scopeSpans) {
        for (const span of scope.spans) {
          spans.push({
            serviceName,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : span.parentSpanId,
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes)
          })
        }
      }
    }
    json(res, 200, {})
  })
  return { url, spans, contentTypes, headers }
})
