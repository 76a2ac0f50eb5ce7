// AdminClient against a real admin_service on loopback: a sync reaches a connected websocket
// client at once; the wrong caller, a refused connection, a 5xx and a silent server are
// Unavailable with a reason that shows neither token nor URL; the timeout runs on TestClock.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { AdminClient, type AdminClientOptions, type SyncOutcome } from "../../src/clients/AdminClient.ts"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { createOperator, login, openSocket, setDeposits, startAdmin, adminEnv } from "../admin/support.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { callLog, json, serveLoopback } from "../support/fakeServer.ts"
import { ADMIN_TOKEN, RECON_TOKEN, type Running, startRecon } from "../support/recon.ts"

let db: string
let recon: Running
let admin: Running
beforeAll(async () => {
  db = await createMigratedDatabase("admin_client")
  recon = await startRecon(db)
  admin = await startAdmin(db, adminEnv(recon.url))
  await createOperator(db, "olivia")
})
afterAll(async () => {
  await admin.close()
  await recon.close()
})

const token = Redacted.make(RECON_TOKEN)

const syncWith = (options: AdminClientOptions) =>
  Effect.gen(function*() {
    return yield* (yield* AdminClient).sync
  }).pipe(Effect.provide(AdminClient.layer(options).pipe(Layer.provide(FetchHttpClient.layer))))

const reasonOf = (outcome: SyncOutcome): string => {
  if (outcome._tag !== "Unavailable") return assert.fail(`expected Unavailable, got ${outcome._tag}`)
  assert.notInclude(outcome.reason, RECON_TOKEN)
  assert.notInclude(outcome.reason, "127.0.0.1")
  return outcome.reason
}

describe("AdminClient against admin_service", () => {
  it("Synced: a connected websocket client gets the fresh counters at once", async () => {
    const socket = await openSocket(admin.url, await login(admin.url, "olivia"))
    try {
      assert.strictEqual((await socket.next()).data.pending_deposit_cnt, 0) // the message on connect
      await setDeposits(db, 3, 1)
      assert.deepStrictEqual(await Effect.runPromise(syncWith({ baseUrl: admin.url, token })), { _tag: "Synced" })
      const pushed = await socket.next(2_000) // well before the 10 s tick
      assert.deepStrictEqual([pushed.type, pushed.data.pending_deposit_cnt, pushed.data.manual_review_cnt], ["top-info", 3, 1])
    } finally {
      socket.close()
    }
  })

  it.effect("Unavailable: the admin caller's token (401), no token (no request), refused, a 5xx, a 404 page", () =>
    Effect.gen(function*() {
      assert.strictEqual(reasonOf(yield* syncWith({ baseUrl: admin.url, token: Redacted.make(ADMIN_TOKEN) })), "admin_service answered 401 unauthorized")
      const log = callLog<string>()
      const standIn = yield* serveLoopback((req, res) => {
        log.record(req.url ?? "")
        if (req.url!.startsWith("/5xx")) json(res, 500, { status: 500, msg: "internal_error", data: null })
        else res.writeHead(404, { "content-type": "text/plain" }).end("not here")
      })
      assert.strictEqual(reasonOf(yield* syncWith({ baseUrl: standIn, token: undefined })), "no caller token is configured for admin_service")
      assert.deepStrictEqual(log.calls, [])
      const closed = `http://127.0.0.1:${yield* Effect.promise(() => freePort())}`
      assert.strictEqual(reasonOf(yield* syncWith({ baseUrl: closed, token })), "admin_service is unreachable")
      assert.strictEqual(reasonOf(yield* syncWith({ baseUrl: `${standIn}/5xx`, token })), "admin_service answered 500 internal_error")
      assert.strictEqual(reasonOf(yield* syncWith({ baseUrl: `${standIn}/gone`, token })), "admin_service answered HTTP 404")
      assert.deepStrictEqual(log.calls, ["/5xx/internal/meta/ws/sync", "/gone/internal/meta/ws/sync"])
    }).pipe(Effect.scoped))

  it.effect("Unavailable after the timeout when admin_service never answers", () =>
    Effect.gen(function*() {
      const log = callLog<string>()
      const silent = yield* serveLoopback((req) => log.record(req.url ?? ""))
      const fiber = yield* Effect.forkChild(syncWith({ baseUrl: silent, token, timeout: "1 second" }))
      yield* log.arrived(1)
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(reasonOf(yield* Fiber.join(fiber)), "admin_service did not answer within 1s")
    }).pipe(Effect.scoped))
})
