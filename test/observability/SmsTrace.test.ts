// Traces and JSON logs of a real `all` process (DESIGN section 11), exported to a local OTLP/HTTP
// collector: one SMS pushed through the webhook is one trace, from the webhook's request through
// parse_loop and order_match_loop to wallet_service's transaction; the JSON log lines of its
// status changes carry its sms_id and the trace. Loop passes and probes open no traces.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startAll, trustedPhone, pushFundingSms } from "../support/allProcess.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { smsState } from "../support/match.ts"
import { otlpReceiver, type ReceivedSpan, SPAN_KIND } from "../support/otlpReceiver.ts"
import { eventually } from "../support/time.ts"

const jsonLines = (text: string): Array<Record<string, any>> =>
  text.split("\n").flatMap((line) => {
    try {
      const parsed = JSON.parse(line)
      return typeof parsed === "object" && parsed !== null ? [parsed] : []
    } catch {
      return []
    }
  })

describe("traces", () => {
  it.live("one SMS is one trace from the webhook to wallet_service's transaction, and its log lines carry it", () =>
    Effect.gen(function*() {
      const collector = yield* otlpReceiver
      const db = yield* Effect.promise(() => createMigratedDatabase("traces"))
      yield* Effect.promise(() => trustedPhone(db, "trace-phone", "15778000"))
      const all = yield* startAll(db, {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_BSP_SCHEDULE_DELAY: "200",
        LOG_FORMAT: "json",
        LOG_LEVEL: "debug"
      })
      const smsId = yield* Effect.promise(() => pushFundingSms(db, all.push, "trace-phone", "15778000", "홍길동", 73000))
      yield* eventually("the SMS approved", Effect.promise(() => smsState(db, smsId)).pipe(Effect.map((s) => s.status === "approved")), 60_000)

      const ofSms = (span: ReceivedSpan) => span.attributes["sms.id"] === smsId
      // The wallet's transaction span is exported once its request has been answered.
      yield* eventually("the wallet's and the worker's spans exported", Effect.sync(() =>
        collector.spans.some((s) => s.serviceName === "wallet_service" && s.name === "wallet.agree.transaction" && ofSms(s)) &&
        collector.spans.some((s) => s.serviceName === "recon_worker" && s.name === "sms.approved" && ofSms(s))), 60_000)

      const transaction = collector.spans.find((s) => s.serviceName === "wallet_service" && s.name === "wallet.agree.transaction" && ofSms(s))!
      const trace = collector.spans.filter((s) => s.traceId === transaction.traceId)
      const worker = trace.filter((s) => s.serviceName === "recon_worker")
      const wallet = trace.filter((s) => s.serviceName === "wallet_service")

      // The webhook's request opens the trace: the worker's server span, its route a pattern.
      const webhook = worker.find((s) => s.kind === SPAN_KIND.server)
      assert.isDefined(webhook)
      assert.isUndefined(webhook!.parentSpanId)
      assert.strictEqual(webhook!.attributes["http.route"], "/push/:device_id")
      assert.strictEqual(webhook!.attributes["url.path"], "/push/trace-phone")
      // Every step of the SMS in the worker is a child of it, in one trace.
      for (const step of ["sms.received", "sms.parsed", "sms.approving", "wallet.agree", "sms.approved"]) {
        const span = worker.find((s) => s.name === step && ofSms(s))
        assert.isDefined(span, `${step} in the trace; got ${worker.map((s) => s.name).join(", ")}`)
        assert.strictEqual(span!.parentSpanId, webhook!.spanId, step)
      }
      // The worker's HTTP call carried the trace to wallet_service, which continued it.
      const call = worker.find((s) => s.kind === SPAN_KIND.client && s.parentSpanId === worker.find((w) => w.name === "wallet.agree")!.spanId)
      assert.isDefined(call, "the worker's HTTP client span")
      const served = wallet.find((s) => s.kind === SPAN_KIND.server)
      assert.isDefined(served)
      assert.strictEqual(served!.parentSpanId, call!.spanId)
      assert.strictEqual(served!.attributes["http.route"], "/internal/wallet/deposit/agree")
      assert.strictEqual(transaction.parentSpanId, served!.spanId)
      assert.isTrue(wallet.some((s) => s.kind === SPAN_KIND.client && s.parentSpanId === transaction.spanId && s.attributes["db.system.name"] === "postgresql"), "the transaction's statement")
      // ONE trace: every span of this SMS, in either service, is in it.
      assert.deepStrictEqual([...new Set(collector.spans.filter(ofSms).map((s) => s.traceId))], [transaction.traceId])

      // OTLP/HTTP with JSON bodies; traces start only at requests: no loop pass or timer opens one.
      assert.isTrue(collector.contentTypes.length > 0 && collector.contentTypes.every((t) => t.startsWith("application/json")))
      const roots = collector.spans.filter((s) => s.parentSpanId === undefined)
      assert.isTrue(roots.every((s) => s.kind === SPAN_KIND.server), roots.map((s) => `${s.serviceName} ${s.name}`).join(", "))
      assert.isFalse(collector.spans.some((s) => s.attributes["url.path"] === "/health/ready"), "readiness probes are not traced")

      // JSON logs: each status change of the SMS is one debug line with its sms_id, inside its trace.
      const lines = jsonLines(all.stderr()).filter((line) => line.annotations?.sms_id === smsId && typeof line.annotations?.sms_status === "string")
      assert.deepStrictEqual(lines.map((line) => line.annotations.sms_status), ["received", "parsed", "approving", "approved"])
      for (const line of lines) {
        assert.strictEqual(line.level, "DEBUG")
        assert.strictEqual(line.trace_id, transaction.traceId)
        assert.match(line.span_id, /^[0-9a-f]{16}$/)
      }
    }), 180_000)
})
