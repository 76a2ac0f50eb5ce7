// WalletClient against a real wallet_service on loopback (and stand-ins for what a real one can't
// be made to do): each typed outcome, the token sent as the header and never shown, the timeout
// under TestClock, the HttpClient taken from the layer graph, and agree_batch (with the one-by-one
// way for a wallet_service that does not have it).
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Metric, Redacted } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { FetchHttpClient, HttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { WalletClient, type WalletClientOptions } from "../../src/clients/WalletClient.ts"
import type { AgreeOutcome } from "../../src/domain/Matching.ts"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { callLog, json, serveLoopback } from "../support/fakeServer.ts"
import { ADMIN_TOKEN, RECON_TOKEN, type Running, startRecon } from "../support/recon.ts"
import { createDeposit, startWallet, walletState } from "../support/wallet.ts"

let db: string
let wallet: Running
let recon: Running
beforeAll(async () => {
  db = await createMigratedDatabase("wallet_client")
  wallet = await startWallet(db)
  recon = await startRecon(db)
})
afterAll(async () => {
  await wallet.close()
  await recon.close()
})

const token = Redacted.make(RECON_TOKEN)

/** One agree call through a client built with `options`, on the fetch HttpClient. */
const agreeWith = (options: WalletClientOptions, input: { depositId: number; smsId: number }) =>
  Effect.gen(function*() {
    const client = yield* WalletClient
    return yield* client.agree(input)
  }).pipe(Effect.provide(WalletClient.layer(options).pipe(Layer.provide(FetchHttpClient.layer))))

/** One agreeBatch call through a client built with `options`. */
const batchWith = (options: WalletClientOptions, inputs: ReadonlyArray<{ depositId: number; smsId: number }>) =>
  Effect.gen(function*() {
    const client = yield* WalletClient
    return yield* client.agreeBatch(inputs)
  }).pipe(Effect.provide(WalletClient.layer(options).pipe(Layer.provide(FetchHttpClient.layer))))

const unavailable = (outcome: AgreeOutcome): string => {
  assert.strictEqual(outcome._tag, "Unavailable", JSON.stringify(outcome))
  const reason = (outcome as { reason: string }).reason
  assert.notInclude(reason, RECON_TOKEN)
  assert.notInclude(reason, "127.0.0.1")
  return reason
}

describe("WalletClient against wallet_service", () => {
  it.effect("Approved, then Replayed for the same SMS; the deposit credited once", () =>
    Effect.gen(function*() {
      const { depositId } = yield* Effect.promise(() => createDeposit(db, "Client Kim", "700"))
      const options = { baseUrl: wallet.url, token }
      assert.deepStrictEqual(yield* agreeWith(options, { depositId, smsId: 7 }), { _tag: "Approved", depositId })
      assert.deepStrictEqual(yield* agreeWith(options, { depositId, smsId: 7 }), { _tag: "Replayed", depositId })
      const state = yield* Effect.promise(() => walletState(db, depositId))
      assert.deepStrictEqual([state.status, state.ledger.length, state.balance], ["approved", 1, "700.00"])
    }))

  it.effect("Conflict (409) and NotFound (404) carry the wallet's detail", () =>
    Effect.gen(function*() {
      const { depositId } = yield* Effect.promise(() => createDeposit(db, "Client Lee", "800"))
      const options = { baseUrl: wallet.url, token }
      assert.strictEqual((yield* agreeWith(options, { depositId, smsId: 8 }))._tag, "Approved")
      assert.deepStrictEqual(yield* agreeWith(options, { depositId, smsId: 9 }), {
        _tag: "Conflict", detail: `deposit ${depositId} was approved with another SMS`
      })
      assert.deepStrictEqual(yield* agreeWith(options, { depositId: 888_888, smsId: 10 }), { _tag: "NotFound", detail: "deposit 888888 not found" })
    }))

  it.effect("Unavailable: the wrong caller's token (401), no token at all (no request), a URL without the route", () =>
    Effect.gen(function*() {
      const { depositId } = yield* Effect.promise(() => createDeposit(db, "Client Park", "900"))
      const input = { depositId, smsId: 11 }
      assert.strictEqual(unavailable(yield* agreeWith({ baseUrl: wallet.url, token: Redacted.make(ADMIN_TOKEN) }, input)), "wallet_service answered 401 unauthorized")
      const log = callLog<string>()
      const recording = yield* serveLoopback((req, res) => (log.record(req.url ?? ""), json(res, 500, {})))
      assert.strictEqual(unavailable(yield* agreeWith({ baseUrl: recording, token: undefined }, input)), "no caller token is configured for wallet_service")
      assert.deepStrictEqual(log.calls, [])
      // recon_service has no such route: a wrong WALLET_SERVICE_URL, not an unknown deposit.
      assert.strictEqual(unavailable(yield* agreeWith({ baseUrl: recon.url, token }, input)), "wallet_service has no agree route at this URL")
      assert.strictEqual((yield* Effect.promise(() => walletState(db, depositId))).status, "pending")
    }).pipe(Effect.scoped))

  it.effect("Unavailable: refused connection, 5xx envelope, an HTML 502, a body out of contract", () =>
    Effect.gen(function*() {
      const closed = `http://127.0.0.1:${yield* Effect.promise(() => freePort())}`
      const input = { depositId: 1, smsId: 1 }
      assert.strictEqual(unavailable(yield* agreeWith({ baseUrl: closed, token }, input)), "wallet_service is unreachable")
      const answers: Record<string, (res: Parameters<typeof json>[0]) => void> = {
        "/500": (res) => json(res, 500, { status: 500, msg: "internal_error", data: null }),
        "/503": (res) => json(res, 503, { status: 503, msg: "unavailable", data: { detail: "the database is unreachable", issues: [] } }),
        "/502": (res) => res.writeHead(502, { "content-type": "text/html" }).end("<html>bad gateway</html>"),
        "/odd": (res) => json(res, 200, { status: 200, msg: "success", data: { deposit_id: "1", status: "maybe" } })
      }
      const base = yield* serveLoopback((req, res) => answers[req.url!.split("/internal")[0]!]!(res))
      const reasons: Array<string> = []
      for (const path of Object.keys(answers)) reasons.push(unavailable(yield* agreeWith({ baseUrl: `${base}${path}`, token }, input)))
      assert.deepStrictEqual(reasons, [
        "wallet_service answered 500 internal_error",
        "wallet_service answered 503 unavailable",
        "wallet_service answered HTTP 502",
        "wallet_service gave an unexpected answer"
      ])
    }).pipe(Effect.scoped))

  it.effect("Unavailable after the timeout (5 s by default) when the wallet never answers", () =>
    Effect.gen(function*() {
      const log = callLog<string>()
      const base = yield* serveLoopback((req) => log.record(req.url ?? "")) // never answers
      const fiber = yield* Effect.forkChild(agreeWith({ baseUrl: base, token }, { depositId: 1, smsId: 1 }))
      yield* log.arrived(1)
      yield* TestClock.adjust("4999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(unavailable(yield* Fiber.join(fiber)), "wallet_service did not answer within 5s")
      const short = yield* Effect.forkChild(agreeWith({ baseUrl: base, token, timeout: "200 millis" }, { depositId: 1, smsId: 1 }))
      yield* log.arrived(2)
      yield* TestClock.adjust("200 millis")
      assert.strictEqual(unavailable(yield* Fiber.join(short)), "wallet_service did not answer within 200ms")
    }).pipe(Effect.scoped))

  it.effect("agreeBatch: each deposit's outcome in the order given, from one call; all Unavailable when the call fails", () =>
    Effect.gen(function*() {
      const a = yield* Effect.promise(() => createDeposit(db, "Batch Client A", "100"))
      const b = yield* Effect.promise(() => createDeposit(db, "Batch Client B", "200"))
      const inputs = [{ depositId: a.depositId, smsId: 21 }, { depositId: b.depositId, smsId: 21 }, { depositId: a.depositId, smsId: 21 }, { depositId: 777_777, smsId: 22 }]
      assert.deepStrictEqual(yield* batchWith({ baseUrl: wallet.url, token }, inputs), [
        { _tag: "Approved", depositId: a.depositId },
        { _tag: "Conflict", detail: "SMS 21 already funds another deposit" },
        { _tag: "Replayed", depositId: a.depositId },
        { _tag: "NotFound", detail: "deposit 777777 not found" }
      ])
      const closed = `http://127.0.0.1:${yield* Effect.promise(() => freePort())}`
      const failed = yield* batchWith({ baseUrl: closed, token }, inputs)
      assert.deepStrictEqual(failed.map(unavailable), Array(4).fill("wallet_service is unreachable"))
    }))

  it.effect("agreeBatch against a wallet_service without the batch route: the deposits are sent one by one, and from then on", () =>
    Effect.gen(function*() {
      const log = callLog<string>()
      // An older wallet_service: agree_batch is an unknown route, agree goes to the real one.
      const older = yield* serveLoopback((req, res, body) => {
        log.record(req.url ?? "")
        if (req.url?.endsWith("/agree_batch")) return json(res, 404, { status: 404, msg: "not_found", data: { detail: "no such route", issues: [] } })
        void fetch(`${wallet.url}${req.url}`, { method: "POST", headers: { "content-type": "application/json", "x-internal-service-token": RECON_TOKEN }, body })
          .then(async (answer) => res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text()))
      })
      const a = yield* Effect.promise(() => createDeposit(db, "Older A", "10"))
      const b = yield* Effect.promise(() => createDeposit(db, "Older B", "10"))
      const outcomes = yield* Effect.gen(function*() {
        const client = yield* WalletClient
        return [
          ...(yield* client.agreeBatch([{ depositId: a.depositId, smsId: 31 }, { depositId: b.depositId, smsId: 32 }])),
          ...(yield* client.agreeBatch([{ depositId: a.depositId, smsId: 31 }]))
        ]
      }).pipe(Effect.provide(WalletClient.layer({ baseUrl: older, token }).pipe(Layer.provide(FetchHttpClient.layer))))
      assert.deepStrictEqual(outcomes, [{ _tag: "Approved", depositId: a.depositId }, { _tag: "Approved", depositId: b.depositId }, { _tag: "Replayed", depositId: a.depositId }])
      assert.deepStrictEqual(log.calls.map((url) => url.split("/").at(-1)), ["agree_batch", "agree", "agree", "agree"])
    }).pipe(Effect.scoped))

  it.effect("takes the HttpClient from the layer graph: a test's client sees the request and its token header", () =>
    Effect.gen(function*() {
      const seen: Array<{ url: string; token: string | undefined }> = []
      const recording = Layer.effect(HttpClient.HttpClient, Effect.map(HttpClient.HttpClient, (client) =>
        HttpClient.tapRequest(client, (request) =>
          Effect.sync(() => seen.push({ url: request.url, token: request.headers["x-internal-service-token"] })))
      )).pipe(Layer.provide(FetchHttpClient.layer))
      const { depositId } = yield* Effect.promise(() => createDeposit(db, "Client Graph", "10"))
      const outcome = yield* Effect.gen(function*() {
        return yield* (yield* WalletClient).agree({ depositId, smsId: 12 })
      }).pipe(Effect.provide(WalletClient.layer({ baseUrl: wallet.url, token }).pipe(Layer.provide(recording))))
      assert.deepStrictEqual(outcome, { _tag: "Approved", depositId })
      assert.deepStrictEqual(seen, [{ url: "/internal/wallet/deposit/agree", token: RECON_TOKEN }])
    }))

  it.effect("times each call in recon_wallet_call_seconds by its outcome: agreed, replayed, conflict, not_found, timeout, unavailable", () =>
    Effect.gen(function*() {
      const { depositId } = yield* Effect.promise(() => createDeposit(db, "Client Metrics", "600"))
      const options = { baseUrl: wallet.url, token }
      yield* agreeWith(options, { depositId, smsId: 61 })
      yield* agreeWith(options, { depositId, smsId: 61 })
      yield* agreeWith(options, { depositId, smsId: 62 })
      yield* agreeWith(options, { depositId: 888_889, smsId: 63 })
      const log = callLog<string>()
      const silent = yield* serveLoopback((req) => log.record(req.url ?? "")) // never answers
      const hanging = yield* Effect.forkChild(agreeWith({ baseUrl: silent, token, timeout: "200 millis" }, { depositId: 1, smsId: 1 }))
      yield* log.arrived(1)
      yield* TestClock.adjust("200 millis")
      yield* Fiber.join(hanging)
      yield* agreeWith({ baseUrl: `http://127.0.0.1:${yield* Effect.promise(() => freePort())}`, token }, { depositId: 1, smsId: 1 })
      const text = yield* PrometheusMetrics.format()
      const counts = Object.fromEntries(text.split("\n").flatMap((line) => {
        const found = /^recon_wallet_call_seconds_count\{outcome="(\w+)"\} (\d+)$/.exec(line)
        return found === null ? [] : [[found[1]!, Number(found[2])]]
      }))
      assert.deepStrictEqual(counts, { agreed: 1, replayed: 1, conflict: 1, not_found: 1, timeout: 1, unavailable: 1 })
      // Timed on the effect clock: the time-out took its 200 ms.
      assert.include(text, 'recon_wallet_call_seconds_sum{outcome="timeout"} 0.2\n')
    }).pipe(Effect.scoped, Effect.provideService(Metric.MetricRegistry, new Map())))
})
