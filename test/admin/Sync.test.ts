// POST /internal/meta/ws/sync: the recon worker's token by the stages of DESIGN section 3 (auth
// before the body; 415, 413, 400 envelopes), and one sync reaching every connected client.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { createMigratedDatabase } from "../support/database.ts"
import { ADMIN_TOKEN, RECON_TOKEN, type Running, SHARED_TOKEN, startRecon } from "../support/recon.ts"
import { createOperator, login, openSocket, setDeposits, startAdmin, sync } from "./support.ts"

let db: string
let recon: Running
beforeAll(async () => {
  db = await createMigratedDatabase("admin_sync")
  recon = await startRecon(db)
  await createOperator(db, "alice")
})
afterAll(() => recon.close())

const unauthorized = {
  status: 401,
  msg: "unauthorized",
  data: { detail: "missing or wrong X-Internal-Service-Token: this route takes the recon worker's token (SVC_INTERNAL_SERVICE_TOKEN_RECON)", issues: [] }
}

const codes = async (server: Running, tokens: ReadonlyArray<string | null>) =>
  Promise.all(tokens.map(async (token) => {
    const answer = await sync(server.url, token)
    if (answer.http === 401) assert.deepStrictEqual(answer.body, unauthorized)
    return answer.http
  }))

describe("sync token stages", () => {
  it("stage A (shared token only): the shared token; not the admin token, a wrong one or none", async () => {
    const server = await startAdmin(db, { RECON_SERVICE_URL: recon.url, SVC_INTERNAL_SERVICE_TOKEN: SHARED_TOKEN })
    try {
      assert.deepStrictEqual(await codes(server, [SHARED_TOKEN, ADMIN_TOKEN, "wrong", "", null, `${SHARED_TOKEN}x`]), [200, 401, 401, 401, 401, 401])
    } finally {
      await server.close()
    }
  })

  it("stage B (shared and per-caller): the recon worker's token and the shared one; not the admin token", async () => {
    const server = await startAdmin(db, {
      RECON_SERVICE_URL: recon.url,
      SVC_INTERNAL_SERVICE_TOKEN: SHARED_TOKEN,
      SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
      SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN
    })
    try {
      assert.deepStrictEqual(await codes(server, [RECON_TOKEN, SHARED_TOKEN, ADMIN_TOKEN, null]), [200, 200, 401, 401])
    } finally {
      await server.close()
    }
  })

  describe("stage C (per-caller only)", () => {
    let server: Running
    beforeAll(async () => {
      server = await startAdmin(db, {
        RECON_SERVICE_URL: recon.url,
        SVC_PER_CALLER_TOKEN_REQUIRED: "on",
        SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
        SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN
      })
    })
    afterAll(() => server.close())

    it("only the recon worker's token: the admin token (a valid token of the wrong caller) and the old shared one are 401", async () => {
      assert.deepStrictEqual(await codes(server, [RECON_TOKEN, ADMIN_TOKEN, SHARED_TOKEN, null]), [200, 401, 401, 401])
    })

    it("checks the token before the body: a wrong token never learns about its body", async () => {
      const cases = [
        await sync(server.url, ADMIN_TOKEN, "{broken"),
        await sync(server.url, ADMIN_TOKEN, { x: "y".repeat(100_000) }),
        await sync(server.url, null, "plain text", { "content-type": "text/plain" }),
        await sync(server.url, "wrong", [1, 2, 3])
      ]
      for (const answer of cases) assert.deepStrictEqual([answer.http, answer.body], [401, unauthorized])
    })

    it("with the right token: 415 for non-JSON, 413 over 64 KiB, 400 for malformed JSON, 200 for any object", async () => {
      const text = await sync(server.url, RECON_TOKEN, "{}", { "content-type": "text/plain" })
      assert.deepStrictEqual([text.http, text.body.msg], [415, "unsupported_media_type"])
      const big = await sync(server.url, RECON_TOKEN, { x: "y".repeat(70_000) })
      assert.deepStrictEqual([big.http, big.body.msg], [413, "payload_too_large"])
      const broken = await sync(server.url, RECON_TOKEN, "{broken")
      assert.deepStrictEqual([broken.http, broken.body.msg], [400, "bad_request"])
      const array = await sync(server.url, RECON_TOKEN, [1])
      assert.deepStrictEqual([array.http, array.body.msg], [400, "bad_request"])
      const charset = await sync(server.url, RECON_TOKEN, {}, { "content-type": "application/json; charset=utf-8" })
      assert.deepStrictEqual([charset.http, charset.body], [200, { status: 200, msg: "success", data: { clients: 0 } }])
      const extra = await sync(server.url, RECON_TOKEN, { reason: "manual_review" })
      assert.strictEqual(extra.http, 200)
    })
  })
})

describe("sync pushes to every client at once", () => {
  it("20 clients: each gets the counters changed in the database, and the answer counts them", async () => {
    await setDeposits(db, 3, 0)
    const server = await startAdmin(db, { RECON_SERVICE_URL: recon.url, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN })
    try {
      const token = await login(server.url, "alice")
      const clients = await Promise.all(Array.from({ length: 20 }, () => openSocket(server.url, token)))
      const initial = await Promise.all(clients.map((c) => c.next()))
      for (const message of initial) {
        assert.strictEqual(message.type, "top-info")
        assert.deepStrictEqual([message.data.pending_deposit_cnt, message.data.manual_review_cnt], [3, 0])
      }

      await setDeposits(db, 7, 4)
      const answer = await sync(server.url, RECON_TOKEN)
      assert.deepStrictEqual(answer.body, { status: 200, msg: "success", data: { clients: 20 } })
      const pushed = await Promise.all(clients.map((c) => c.next(2_000)))
      for (const message of pushed) {
        assert.strictEqual(message.type, "top-info")
        assert.deepStrictEqual([message.data.pending_deposit_cnt, message.data.manual_review_cnt], [7, 4])
        assert.strictEqual(message.data.recon.available, true)
        assert.isFalse(Number.isNaN(Date.parse(message.at)))
      }
      for (const client of clients) client.close()
    } finally {
      await server.close()
    }
  })

  it("a burst of concurrent syncs: every one answers 200 and the last message has the newest counters", async () => {
    const server = await startAdmin(db, { RECON_SERVICE_URL: recon.url, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN })
    try {
      const client = await openSocket(server.url, await login(server.url, "alice"))
      await client.next()
      await setDeposits(db, 11, 1)
      const answers = await Promise.all(Array.from({ length: 30 }, () => sync(server.url, RECON_TOKEN)))
      assert.isTrue(answers.every((a) => a.http === 200 && a.body.data.clients === 1))
      let last = await client.next(2_000)
      // Syncs arriving together share reads: fewer messages than syncs, never a stale last one.
      while (!(await client.nothingWithin(100))) last = await client.next()
      assert.isAtMost(client.received(), 1 + 30)
      assert.strictEqual(last.data.pending_deposit_cnt, 11)
      client.close()
    } finally {
      await server.close()
    }
  })
})
