// The tracing settings (OTEL_* keys) and a service's tracer against a local OTLP/HTTP receiver:
// its service.name (OTEL_SERVICE_NAME overrides it), the exporter's headers, and which spans it
// exports (traces start only at requests and consumed messages; a child follows its parent).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { readTracingSettings } from "../../src/config/AppConfig.ts"
import { fromEnv } from "../../src/config/Keys.ts"
import { tracingLayer } from "../../src/observability/Tracing.ts"
import { otlpReceiver } from "../support/otlpReceiver.ts"

const read = (env: Record<string, string>) => Effect.runSync(Effect.result(fromEnv(env, readTracingSettings)))

describe("tracing settings", () => {
  it("off without an endpoint; the base endpoint gets /v1/traces, the traces endpoint is used as it is", () => {
    assert.deepStrictEqual(read({}), Result.succeed(undefined))
    const base = read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })
    assert.isTrue(Result.isSuccess(base))
    assert.deepInclude(Result.getOrThrow(base), { url: "http://collector:4318/v1/traces", serviceName: undefined, exportIntervalMs: 5000 })
    const traces = Result.getOrThrow(read({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/otlp/spans",
      OTEL_SERVICE_NAME: "recon_eu",
      OTEL_BSP_SCHEDULE_DELAY: "250"
    }))
    assert.deepInclude(traces, { url: "https://traces.example/otlp/spans", serviceName: "recon_eu", exportIntervalMs: 250 })
  })

  it("one problem line per bad key, never showing a header's value", () => {
    const bad = read({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318", OTEL_EXPORTER_OTLP_HEADERS: "api-key secret-value-123" })
    assert.isTrue(Result.isFailure(bad))
    const problems = Result.isFailure(bad) ? bad.failure.problems : []
    assert.deepStrictEqual(problems, [
      "OTEL_EXPORTER_OTLP_ENDPOINT: expected a http:// or https:// URL, got \"collector:4318\"",
      "OTEL_EXPORTER_OTLP_HEADERS: expected comma-separated name=value pairs"
    ])
  })
})

describe("a service's tracer", () => {
  it.live("exports OTLP/HTTP JSON under the service's name or OTEL_SERVICE_NAME, with the configured headers; no root span but requests", () =>
    Effect.gen(function*() {
      const collector = yield* otlpReceiver
      const settings = Result.getOrThrow(read({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=k%20123" }))!
      const work = Effect.gen(function*() {
        yield* Effect.void.pipe(Effect.withSpan("a pass's statement", { kind: "client" }))
        yield* Effect.void.pipe(Effect.withSpan("in the request"), Effect.withSpan("a request", { kind: "server" }))
      })
      // Closing the tracer's layer flushes what it holds.
      yield* Effect.scoped(Layer.build(tracingLayer(settings, "wallet_service")).pipe(Effect.flatMap((context) => Effect.provideContext(work, context))))
      yield* Effect.scoped(Layer.build(tracingLayer({ ...settings, serviceName: "recon_eu" }, "wallet_service")).pipe(
        Effect.flatMap((context) => Effect.provideContext(work, context))
      ))
      assert.deepStrictEqual(collector.spans.map((s) => [s.serviceName, s.name]), [
        ["wallet_service", "in the request"],
        ["wallet_service", "a request"],
        ["recon_eu", "in the request"],
        ["recon_eu", "a request"]
      ])
      assert.deepStrictEqual([...new Set(collector.headers.map((h) => h["x-api-key"]))], ["k 123"])
      assert.isTrue(collector.contentTypes.every((type) => type.startsWith("application/json")))
    }))
})
