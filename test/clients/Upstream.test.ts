// Upstream.callJson, the one way a client here calls a third-party API: a decoded answer with its
// status, or one of four failures a client turns into its own words, on a swappable HttpClient.
import { assert, describe, it } from "@effect/vitest"
import { type Duration, Effect, Exit, Fiber, Schema } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import { TestClock } from "effect/testing"
import { callJson, clip, scrubber, type UpstreamFailure } from "../../src/clients/Upstream.ts"
import { callLog, serveLoopback } from "../support/fakeServer.ts"

const Body = Schema.fromJsonString(Schema.Struct({ ok: Schema.Boolean }))

type Reply = { readonly status: number; readonly body: string } | "stall after headers"

/** A server whose n-th request (from 0) gets `reply(n)`. */
const upstream = (reply: (call: number) => Reply) =>
  Effect.gen(function*() {
    const log = callLog<string | undefined>()
    const origin = yield* serveLoopback((req, res) => {
      const answer = reply(log.calls.length)
      log.record(req.url)
      if (answer === "stall after headers") {
        res.writeHead(200, { "content-type": "application/json" })
        res.write("{\"ok\":")
        return
      }
      res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body)
    })
    return { url: `${origin}/api`, arrived: log.arrived }
  })

const call = (url: string, options: { readonly statusOk?: boolean; readonly timeout?: Duration.Input } = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    return yield* callJson(
      options.statusOk === false ? client : HttpClient.filterStatusOk(client),
      HttpClientRequest.get(url),
      { body: Body, timeout: options.timeout ?? "5 seconds" }
    )
  }).pipe(Effect.provide(FetchHttpClient.layer))

const failure = <A>(exit: Exit.Exit<A, UpstreamFailure>): UpstreamFailure => {
  if (Exit.isSuccess(exit)) return assert.fail("expected an UpstreamFailure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (reason === undefined || reason._tag !== "Fail") return assert.fail(`expected a typed failure, got ${String(exit.cause)}`)
  return reason.error
}

describe("Upstream.callJson", () => {
  it.effect("answers the decoded body with its status", () =>
    Effect.gen(function*() {
      const server = yield* upstream(() => ({ status: 201, body: "{\"ok\":true,\"extra\":1}" }))
      assert.deepStrictEqual(yield* call(server.url), { status: 201, body: { ok: true } })
    }))

  it.effect("a body the schema does not decode is UpstreamMalformed with the status and the text", () =>
    Effect.gen(function*() {
      const server = yield* upstream(() => ({ status: 200, body: "<html>busy</html>" }))
      const error = failure(yield* Effect.exit(call(server.url)))
      assert.deepInclude(error, { _tag: "UpstreamMalformed", status: 200, body: "<html>busy</html>" })
    }))

  it.effect("a non-2xx is UpstreamStatus with its body on a filterStatusOk client, decoded on a client that is not", () =>
    Effect.gen(function*() {
      const server = yield* upstream(() => ({ status: 409, body: "{\"ok\":false}" }))
      const error = failure(yield* Effect.exit(call(server.url)))
      assert.deepInclude(error, { _tag: "UpstreamStatus", status: 409, body: "{\"ok\":false}" })
      assert.deepStrictEqual(yield* call(server.url, { statusOk: false }), { status: 409, body: { ok: false } })
    }))

  it.effect("the time limit covers the body: headers then silence is UpstreamTimeout", () =>
    Effect.gen(function*() {
      const server = yield* upstream(() => "stall after headers")
      const fiber = yield* Effect.forkChild(Effect.exit(call(server.url, { timeout: "3 seconds" })))
      yield* server.arrived(1)
      yield* TestClock.adjust("3 seconds")
      assert.strictEqual(failure(yield* Fiber.join(fiber))._tag, "UpstreamTimeout")
    }))

  it.effect("no server is UpstreamUnreachable, its kind kept and never the URL", () =>
    Effect.gen(function*() {
      const error = failure(yield* Effect.exit(call("http://127.0.0.1:1/api")))
      assert.strictEqual(error._tag, "UpstreamUnreachable")
      if (error._tag === "UpstreamUnreachable") assert.strictEqual(error.kind, "TransportError")
      assert.notInclude(`${error.message} ${JSON.stringify(error)} ${String(error)}`, "127.0.0.1:1", "the URL may carry a token")
    }))

  it.effect("runs on whatever HttpClient the layer graph gives", () =>
    Effect.gen(function*() {
      const canned = HttpClient.make((request) =>
        Effect.succeed(HttpClientResponse.fromWeb(request, new Response("{\"ok\":true}", { status: 200 })))
      )
      const answer = yield* callJson(canned, HttpClientRequest.get("http://nowhere.invalid/"), { body: Body, timeout: "1 second" })
      assert.deepStrictEqual(answer, { status: 200, body: { ok: true } })
    }))

  it("clip and scrubber keep secrets and long bodies out of messages", () => {
    assert.strictEqual(clip("abcdef", 3), "abc…")
    assert.strictEqual(clip("abc", 3), "abc")
    assert.strictEqual(scrubber("s3cr3t")("key s3cr3t, again s3cr3t"), "key [redacted], again [redacted]")
    assert.strictEqual(scrubber("")("nothing to hide"), "nothing to hide")
  })
})
