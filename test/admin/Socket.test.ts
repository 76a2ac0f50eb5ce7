// GET /ws/top-info: the token checked before the upgrade (401 envelope), the message on connect,
// on sync and every 10 s (TestClock), and a client that stops reading never holding up the rest.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeSessionTokens } from "../../src/admin/SessionTokens.ts"
import { randomBytes } from "node:crypto"
import { createMigratedDatabase } from "../support/database.ts"
import { exchange } from "../support/rawHttp.ts"
import { RECON_TOKEN, type Running, startRecon } from "../support/recon.ts"
import { eventuallyAsync } from "../support/time.ts"
import { adminEnv, adminLayer, baseUrlOf, createOperator, login, openSocket, setDeposits, startAdmin, sync } from "./support.ts"
import { stalledClient, upgrade } from "./wire.ts"

let db: string
let recon: Running
let admin: Running
let token: string
beforeAll(async () => {
  db = await createMigratedDatabase("admin_socket")
  recon = await startRecon(db)
  await createOperator(db, "alice")
  await setDeposits(db, 2, 1)
  admin = await startAdmin(db, adminEnv(recon.url))
  token = await login(admin.url, "alice")
})
afterAll(async () => {
  await admin.close()
  await recon.close()
})

const socketUrl = (base: string, query = "") => `${base}/ws/top-info${query}`

describe("upgrade", () => {
  it("sends the six counters on connect", async () => {
    const client = await openSocket(admin.url, token)
    const message = await client.next()
    assert.strictEqual(message.type, "top-info")
    assert.deepStrictEqual(message.data, {
      pending_deposit_cnt: 2,
      manual_review_cnt: 1,
      sms_need_check_cnt: 0,
      parse_fail_cnt: 0,
      unmatched_sms_cnt: 0,
      duplicate_sms_cnt: 0,
      recon: { available: true, error: null }
    })
    assert.isFalse(Number.isNaN(Date.parse(message.at)))
    client.close()
  })

  it("takes the token from the Authorization header too", async () => {
    assert.strictEqual((await upgrade(socketUrl(admin.url), { authorization: `Bearer ${token}` })).status, 101)
  })

  it("refuses a missing, wrong, tampered or foreign token with HTTP 401 and the envelope, before upgrading", async () => {
    const [header, payload, signature] = token.split(".")
    const tampered = `${header}.${Buffer.from(JSON.stringify({ sub: "1", acc: "mallory", iat: 0, exp: 4_102_444_800 })).toString("base64url")}.${signature}`
    const foreign = await Effect.runPromise(makeSessionTokens("another-key-another-key-another-key-0123").issue({ id: 1, account: "alice" }))
    for (const query of ["", "?token=", "?token=nonsense", `?token=${tampered}`, `?token=${foreign}`, `?token=${payload}`]) {
      const answer = await upgrade(socketUrl(admin.url, query))
      assert.strictEqual(answer.status, 401, query)
      assert.strictEqual(answer.body.msg, "unauthorized")
    }
    const header401 = await upgrade(socketUrl(admin.url), { authorization: "Bearer nonsense" })
    assert.strictEqual(header401.status, 401)
  })

  it("a plain GET with a valid token is a 400 envelope, not a hang", async () => {
    const response = await fetch(socketUrl(admin.url, `?token=${token}`))
    assert.strictEqual(response.status, 400)
    assert.strictEqual(((await response.json()) as { msg: string }).msg, "bad_request")
  })

  it("a bad handshake is the 400 envelope (not the ws library's HTML), and a sound one still upgrades", async () => {
    const key = randomBytes(16).toString("base64")
    const handshake = (headers: ReadonlyArray<string>) =>
      exchange(admin.url, [`GET /ws/top-info?token=${token} HTTP/1.1`, `Host: ${new URL(admin.url).host}`, ...headers, "", ""].join("\r\n"))
    const upgrading = ["Connection: Upgrade", "Upgrade: websocket"]
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [[...upgrading, `Sec-WebSocket-Key: ${key}`, "Sec-WebSocket-Version: 99"], "Sec-WebSocket-Version must be 13 or 8"],
      [[...upgrading, `Sec-WebSocket-Key: ${key}`], "Sec-WebSocket-Version must be 13 or 8"],
      [[...upgrading, "Sec-WebSocket-Version: 13"], "Sec-WebSocket-Key is missing or not 16 bytes in Base64"],
      [[...upgrading, "Sec-WebSocket-Key: c2hvcnQ=", "Sec-WebSocket-Version: 13"], "Sec-WebSocket-Key is missing or not 16 bytes in Base64"],
      [[...upgrading, `Sec-WebSocket-Key: ${key}`, "Sec-WebSocket-Version: 13", "Sec-WebSocket-Protocol: chat, chat"], "Sec-WebSocket-Protocol is not a list of distinct tokens"],
      [[...upgrading, `Sec-WebSocket-Key: ${key}`, "Sec-WebSocket-Version: 13", "Sec-WebSocket-Protocol: a b"], "Sec-WebSocket-Protocol is not a list of distinct tokens"],
      [["Upgrade: websocket", `Sec-WebSocket-Key: ${key}`, "Sec-WebSocket-Version: 13"], "expected a websocket upgrade (Connection: Upgrade, Upgrade: websocket)"],
      [["Connection: Upgrade", "Upgrade: h2c"], "expected a websocket upgrade (Connection: Upgrade, Upgrade: websocket)"]
    ]
    for (const [headers, detail] of cases) {
      const answer = await handshake(headers)
      assert.strictEqual(answer.status, 400, answer.raw)
      assert.match(answer.headers["content-type"] ?? "", /^application\/json/, answer.raw)
      assert.deepStrictEqual(JSON.parse(answer.body), { status: 400, msg: "bad_request", data: { detail, issues: [] } })
      if (detail.startsWith("Sec-WebSocket-Version")) assert.strictEqual(answer.headers["sec-websocket-version"], "13, 8")
    }
    const sound = await handshake([...upgrading, `Sec-WebSocket-Key: ${key}`, "Sec-WebSocket-Version: 13", "Sec-WebSocket-Protocol: chat, superchat"])
    assert.strictEqual(sound.status, 101, sound.raw)
  })
})

describe("what a client sends", () => {
  it("is ignored; a frame over 16 KiB closes the connection (1009)", async () => {
    const ws = new WebSocket(`${admin.url.replace(/^http/, "ws")}/ws/top-info?token=${token}`)
    const messages: Array<string> = []
    const arrived = () => new Promise<void>((resolve) => (ws.onmessage = (event) => (messages.push(String(event.data)), resolve())))
    await arrived()
    ws.send("hello, server")
    const next = arrived()
    assert.strictEqual((await sync(admin.url, RECON_TOKEN)).http, 200)
    await next
    assert.strictEqual(messages.length, 2)
    const closed = new Promise<number>((resolve) => (ws.onclose = (event) => resolve(event.code)))
    ws.send("x".repeat(20_000))
    assert.strictEqual(await closed, 1009)
  })
})

describe("a client that stops reading", () => {
  it("does not delay the others: every sync answers promptly and reaches the 10 healthy clients", async () => {
    const stalled = await stalledClient(socketUrl(admin.url, `?token=${token}`))
    const healthy = await Promise.all(Array.from({ length: 10 }, () => openSocket(admin.url, token)))
    await Promise.all(healthy.map((c) => c.next()))
    // The stalled client stays counted (11) through all 20: a sync that waited for it would never
    // answer. (Timing a sync against a bound was a wall-clock assertion: it moved with the load.)
    for (let i = 1; i <= 20; i++) {
      const answer = await sync(admin.url, RECON_TOKEN)
      assert.strictEqual(answer.http, 200)
      assert.strictEqual(answer.body.data.clients, 11, `sync ${i}`)
      await Promise.all(healthy.map((c) => c.next(1_000)))
    }
    stalled.destroy()
    for (const client of healthy) client.close()
  })
})

describe("stopping", () => {
  it("closes the open websockets first with 1001 going away, so the stop does not wait for them", async () => {
    const server = await startAdmin(db, adminEnv(recon.url))
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/ws/top-info?token=${token}`)
    await new Promise((resolve) => (ws.onmessage = resolve))
    const closed = new Promise<number>((resolve) => (ws.onclose = (event) => resolve(event.code)))
    // The client never closes on its own: a stop that waited for it would not end.
    let stopped = false
    const stopping = server.close().then(() => (stopped = true))
    await eventuallyAsync("the stop to end with a websocket open", async () => stopped)
    await stopping
    assert.strictEqual(await closed, 1001)
  })
})

describe("periodic push", () => {
  // The server is built inside the test's Effect, so its ticker runs on the TestClock.
  it.effect("every 10 s of the clock, not before; nothing real is slept", () =>
    Effect.gen(function*() {
      const base = baseUrlOf(yield* Layer.build(adminLayer(db, adminEnv(recon.url))))
      const session = yield* Effect.promise(() => login(base, "alice"))
      const client = yield* Effect.promise(() => openSocket(base, session))
      assert.strictEqual((yield* Effect.promise(() => client.next())).type, "top-info")

      yield* TestClock.adjust("9 seconds")
      assert.isTrue(yield* Effect.promise(() => client.nothingWithin(200)), "a push before 10 s")

      yield* Effect.promise(() => setDeposits(db, 9, 0))
      yield* TestClock.adjust("1 second")
      const tick = yield* Effect.promise(() => client.next(2_000))
      assert.strictEqual(tick.type, "top-info")
      assert.strictEqual(tick.data.pending_deposit_cnt, 9)

      yield* TestClock.adjust("10 seconds")
      assert.strictEqual((yield* Effect.promise(() => client.next(2_000))).type, "top-info")
      client.close()
      yield* Effect.promise(() => setDeposits(db, 2, 1))
    }).pipe(Effect.scoped))
})
