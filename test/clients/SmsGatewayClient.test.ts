// SmsGatewayClient against a local server speaking the SMS Gateway inbox-export wire format.
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Exit, Fiber, Result } from "effect"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { type ExportRequest, parseApiUrl, SmsGatewayClient, SmsGatewayExportFailed } from "../../src/clients/SmsGatewayClient.ts"
import { fakeSmsGateway } from "../support/fakeSmsGateway.ts"

const request: ExportRequest = {
  deviceId: "PyDmBQZZXYmyxMwED8Fzy",
  since: DateTime.makeUnsafe("2025-03-01T09:55:00.000Z"),
  until: DateTime.makeUnsafe("2025-03-01T10:30:00.000Z")
}

const exportInbox = (apiUrl: string, req: ExportRequest = request) =>
  Effect.gen(function*() {
    const client = yield* SmsGatewayClient.make
    return yield* client.exportInbox(apiUrl, req)
  }).pipe(Effect.provide(FetchHttpClient.layer))

const failure = (exit: Exit.Exit<void, SmsGatewayExportFailed>): SmsGatewayExportFailed => {
  if (Exit.isSuccess(exit)) return assert.fail("expected SmsGatewayExportFailed")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (reason === undefined || reason._tag !== "Fail") return assert.fail(`expected a typed failure, got ${String(exit.cause)}`)
  assert.instanceOf(reason.error, SmsGatewayExportFailed)
  return reason.error
}

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`, "utf8").toString("base64")}`

describe("SmsGatewayClient", () => {
  it.effect("posts deviceId/since/until to {api_url}/inbox/export with Basic auth from the URL's userinfo", () =>
    Effect.gen(function*() {
      const gateway = yield* fakeSmsGateway({ credentials: { username: "sms", password: "p@ss:w0rd" } })
      const apiUrl = `${gateway.origin.replace("://", "://sms:p%40ss%3Aw0rd@")}/3rdparty/v1/`
      yield* exportInbox(apiUrl)

      assert.strictEqual(gateway.calls.length, 1)
      const [call] = gateway.calls
      assert.strictEqual(call?.method, "POST")
      assert.strictEqual(call?.path, "/3rdparty/v1/inbox/export") // trailing slash of api_url: no "//"
      assert.strictEqual(call?.authorization, basic("sms", "p@ss:w0rd"))
      assert.match(call?.contentType ?? "", /^application\/json/)
      assert.deepStrictEqual(call?.body, {
        deviceId: "PyDmBQZZXYmyxMwED8Fzy",
        since: "2025-03-01T09:55:00.000Z",
        until: "2025-03-01T10:30:00.000Z"
      })
    }))

  it.effect("sends no Authorization header when the api_url has no userinfo", () =>
    Effect.gen(function*() {
      const gateway = yield* fakeSmsGateway()
      yield* exportInbox(`${gateway.origin}/3rdparty/v1`)
      assert.strictEqual(gateway.exports().length, 1)
      assert.isUndefined(gateway.calls[0]?.authorization)
    }))

  it.effect("retries on the server's own route /messages/inbox/export when /inbox/export is 404", () =>
    Effect.gen(function*() {
      const gateway = yield* fakeSmsGateway({ routes: ["/3rdparty/v1/messages/inbox/export"] })
      yield* exportInbox(`${gateway.origin}/3rdparty/v1`)
      assert.deepStrictEqual(gateway.calls.map((c) => c.path), ["/3rdparty/v1/inbox/export", "/3rdparty/v1/messages/inbox/export"])
      assert.strictEqual(gateway.exports().length, 1)
    }))

  it.effect("a 500 is a typed failure naming the status, never the URL or the credentials", () =>
    Effect.gen(function*() {
      const gateway = yield* fakeSmsGateway()
      gateway.behave(request.deviceId, "fail")
      const exit = yield* Effect.exit(exportInbox(`${gateway.origin.replace("://", "://admin:hunter2secret@")}/3rdparty/v1`))
      const error = failure(exit)
      assert.strictEqual(error.status, 500)
      assert.include(error.reason, "HTTP 500")
      const shown = `${error.message} ${JSON.stringify(error)} ${String(exit)}`
      assert.notInclude(shown, "hunter2secret")
      assert.notInclude(shown, "127.0.0.1")
    }))

  it.effect("a 401 (wrong credentials) is a failure and is not retried elsewhere", () =>
    Effect.gen(function*() {
      const gateway = yield* fakeSmsGateway({ credentials: { username: "sms", password: "right" } })
      const error = failure(yield* Effect.exit(exportInbox(`${gateway.origin.replace("://", "://sms:wrong@")}/3rdparty/v1`)))
      assert.strictEqual(error.status, 401)
      assert.strictEqual(gateway.calls.length, 1)
    }))

  it.effect("a gateway that never answers fails after the time-out", () =>
    Effect.gen(function*() {
      const gateway = yield* fakeSmsGateway()
      gateway.behave(request.deviceId, "hang")
      const fiber = yield* Effect.forkChild(Effect.exit(exportInbox(`${gateway.origin}/3rdparty/v1`)))
      yield* gateway.arrived(1)
      yield* TestClock.adjust("10 seconds")
      const error = failure(yield* Fiber.join(fiber))
      assert.include(error.reason, "no answer")
    }))

  it.effect("an unreachable gateway is a failure without the URL", () =>
    Effect.gen(function*() {
      const error = failure(yield* Effect.exit(exportInbox("http://u:topsecret@127.0.0.1:1/3rdparty/v1")))
      assert.include(error.reason, "unreachable")
      assert.notInclude(error.message, "topsecret")
    }))

  it("rejects api_urls that are not http(s) URLs without echoing them", () => {
    for (const bad of ["not a url", "ftp://u:secretpw@host/x", ""]) {
      const parsed = parseApiUrl(bad)
      assert.isTrue(Result.isFailure(parsed))
      if (Result.isFailure(parsed)) assert.notInclude(parsed.failure.reason, "secretpw")
    }
    const ok = parseApiUrl("https://user:pa%20ss@api.sms-gate.app/3rdparty/v1#frag")
    assert.isTrue(Result.isSuccess(ok))
    if (Result.isSuccess(ok)) {
      assert.strictEqual(ok.success.base.href, "https://api.sms-gate.app/3rdparty/v1")
      assert.strictEqual(ok.success.credentials._tag, "Some")
    }
  })
})
