// GET /api/top-info: admin's two counters merged with a real recon_service's four; recon down,
// refusing, or slow costs only its four (null, with the reason) and never the answer.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { createServer, type Server } from "node:net"
import { createMigratedDatabase } from "../support/database.ts"
import { type Running, startRecon } from "../support/recon.ts"
import { eventually, realWait } from "../support/time.ts"
import { addSms, adminEnv, adminLayer, baseUrlOf, createOperator, login, request, setDeposits, startAdmin } from "./support.ts"

let db: string
let recon: Running
const started: Array<Running> = []

beforeAll(async () => {
  db = await createMigratedDatabase("admin_topinfo")
  recon = await startRecon(db)
  await createOperator(db, "alice")
  await setDeposits(db, 5, 2)
  await addSms(db, ["need_check", "parse_failed", "parse_failed", "unmatched", "duplicate", "duplicate", "duplicate", "approved"])
})
afterAll(async () => {
  await Promise.all(started.map((s) => s.close()))
  await recon.close()
})

const admin = async (reconUrl: string) => {
  const server = await startAdmin(db, adminEnv(reconUrl))
  started.push(server)
  return server
}

/** A TCP server that accepts connections and never answers: recon hanging. */
const silentServer = () =>
  new Promise<{ url: string; server: Server }>((resolve) => {
    const server = createServer(() => {})
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve({ url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`, server })
    })
  })

/** A port nothing listens on. */
const closedPort = async () => {
  const { server, url } = await silentServer()
  await new Promise((resolve) => server.close(resolve))
  return url
}

describe("GET /api/top-info", () => {
  it("merges admin's own counters with recon's four", async () => {
    const server = await admin(recon.url)
    const token = await login(server.url, "alice")
    const answer = await request(server.url, "/api/top-info", { token })
    assert.strictEqual(answer.http, 200)
    assert.deepStrictEqual(answer.body, {
      status: 200,
      msg: "success",
      data: {
        pending_deposit_cnt: 5,
        manual_review_cnt: 2,
        sms_need_check_cnt: 1,
        parse_fail_cnt: 2,
        unmatched_sms_cnt: 1,
        duplicate_sms_cnt: 3,
        recon: { available: true, error: null }
      }
    })
  })

  it("recon down (closed port): 200 with admin's counters, recon's null and why", async () => {
    const server = await admin(await closedPort())
    const token = await login(server.url, "alice")
    const answer = await request(server.url, "/api/top-info", { token })
    assert.strictEqual(answer.http, 200)
    assert.deepStrictEqual(answer.body.data, {
      pending_deposit_cnt: 5,
      manual_review_cnt: 2,
      sms_need_check_cnt: null,
      parse_fail_cnt: null,
      unmatched_sms_cnt: null,
      duplicate_sms_cnt: null,
      recon: { available: false, error: "recon_service is unreachable" }
    })
  })

  // The server is built inside the test's Effect: its 2 s timeout runs on the TestClock.
  it.effect("recon slow (never answers): 200 at the 2 s timeout, not before, recon unavailable", () =>
    Effect.gen(function*() {
      const silent = yield* Effect.acquireRelease(Effect.promise(silentServer), ({ server }) => Effect.sync(() => server.close()))
      let connected = false
      silent.server.on("connection", () => (connected = true))
      const base = baseUrlOf(yield* Layer.build(adminLayer(db, adminEnv(silent.url))))
      const token = yield* Effect.promise(() => login(base, "alice"))
      let answered = false
      const answering = request(base, "/api/top-info", { token }).then((answer) => ((answered = true), answer))
      yield* eventually("admin's call reaching recon", Effect.sync(() => connected))
      yield* TestClock.adjust("1999 millis")
      yield* realWait(200)
      assert.isFalse(answered, "answered before the 2 s timeout")
      yield* TestClock.adjust("1 millis")
      const answer = yield* Effect.promise(() => answering)
      assert.strictEqual(answer.http, 200)
      assert.strictEqual(answer.body.data.pending_deposit_cnt, 5)
      assert.strictEqual(answer.body.data.sms_need_check_cnt, null)
      assert.deepStrictEqual(answer.body.data.recon, { available: false, error: "recon_service did not answer within 2s" })
    }).pipe(Effect.scoped))

  it("recon refusing admin's token: recon unavailable with its answer, never the token", async () => {
    const server = await startAdmin(db, adminEnv(recon.url, { SVC_INTERNAL_SERVICE_TOKEN_ADMIN: "not-the-token-recon-knows" }))
    started.push(server)
    const token = await login(server.url, "alice")
    const answer = await request(server.url, "/api/top-info", { token })
    assert.strictEqual(answer.http, 200)
    assert.deepStrictEqual(answer.body.data.recon, { available: false, error: "recon_service answered 401 unauthorized" })
    assert.notInclude(JSON.stringify(answer.body), "not-the-token")
  })

  it("without a session token: 401 envelope", async () => {
    const server = await admin(recon.url)
    const answer = await request(server.url, "/api/top-info")
    assert.strictEqual(answer.http, 401)
    assert.deepStrictEqual(answer.body, {
      status: 401, msg: "unauthorized", data: { detail: "missing Authorization: Bearer token", issues: [] }
    })
  })
})
