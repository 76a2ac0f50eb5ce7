// Sign-in under attack, through the real admin server: attempts limited per address and per
// account (429 with Retry-After, logged once per lockout), and a flood of concurrent sign-ins
// that never hashes more than MAX_CONCURRENT_HASHES passwords at once while the worker's
// heartbeat file, written in the same process, keeps being written.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { NodeServices } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Logger, Scope } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { MAX_CONCURRENT_HASHES, peakConcurrentHashes } from "../../src/domain/Passwords.ts"
import type { Env } from "../../src/config/Keys.ts"
import * as Heartbeat from "../../src/health/Heartbeat.ts"
import { Components } from "../../src/health/Components.ts"
import { HealthRegistry } from "../../src/health/HealthRegistry.ts"
import { judge } from "../../src/health/probe.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { eventuallyAsync } from "../support/time.ts"
import { adminEnv, adminLayer, baseUrlOf, createOperator, PASSWORD, request } from "./support.ts"

/** admin_service with its log lines captured. */
const startAdminLogged = async (db: string, env: Env) => {
  const lines: Array<string> = []
  const capture = Logger.make(({ message }) => lines.push((Array.isArray(message) ? message : [message]).map(String).join(" ")))
  const scope = Scope.makeUnsafe()
  const context = await Effect.runPromise(Layer.buildWithScope(adminLayer(db, env).pipe(Layer.provide(Logger.layer([capture]))), scope))
  return { url: baseUrlOf(context), lines, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const signIn = (base: string, account: string, password: string) => request(base, "/api/auth/login", { body: { account, password } })

let db: string
beforeAll(async () => {
  db = await createMigratedDatabase("flood")
  await createOperator(db, "alice")
  await createOperator(db, "bob")
}, 60_000)

describe("sign-in limits", () => {
  let admin: Awaited<ReturnType<typeof startAdminLogged>>
  beforeAll(async () => {
    admin = await startAdminLogged(db, adminEnv("http://127.0.0.1:9", { SVC_ADMIN_SIGNIN_MAX_PER_ACCOUNT: "3", SVC_ADMIN_SIGNIN_MAX_PER_ADDRESS: "8" }))
  })
  afterAll(() => admin?.close())

  it("locks an account after its limit of attempts, right password or not, with 429 and Retry-After, logged once", async () => {
    for (let i = 0; i < 3; i++) assert.strictEqual((await signIn(admin.url, "alice", "wrong password!")).http, 401)
    for (const password of ["wrong password!", PASSWORD]) {
      const refused = await signIn(admin.url, "alice", password)
      assert.strictEqual(refused.http, 429)
      assert.deepInclude(refused.body, { status: 429, msg: "too_many_requests" })
      const retryAfter = Number(refused.headers.get("retry-after"))
      assert.isTrue(retryAfter > 0 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`)
    }
    assert.strictEqual(admin.lines.filter((line) => line.includes("sign-in attempts limited") && line.includes("account")).length, 1)
    // Another account is not locked by alice's lockout.
    assert.strictEqual((await signIn(admin.url, "bob", PASSWORD)).http, 200)
  })

  it("limits the attempts of one address whatever the accounts", async () => {
    // 4 attempts counted so far from this address: alice's 3 and bob's (refused attempts do not count).
    const answers = []
    for (let i = 0; i < 6; i++) answers.push((await signIn(admin.url, `nobody-${i}`, "whatever-password")).http)
    assert.deepStrictEqual(answers, [401, 401, 401, 401, 429, 429])
    const refused = await signIn(admin.url, "bob", PASSWORD)
    assert.strictEqual(refused.http, 429)
    assert.isNotNull(refused.headers.get("retry-after"))
    assert.strictEqual(admin.lines.filter((line) => line.includes("sign-in attempts limited") && line.includes("address")).length, 1)
  })
})

describe("a flood of concurrent sign-ins", () => {
  it("hashes at most MAX_CONCURRENT_HASHES (1 or 2) passwords at once, and the heartbeat in the same process keeps being written", async () => {
    const admin = await startAdminLogged(db, adminEnv("http://127.0.0.1:9", { SVC_ADMIN_SIGNIN_MAX_PER_ADDRESS: "100000", SVC_ADMIN_SIGNIN_MAX_PER_ACCOUNT: "100000" }))
    const heartbeat = join(mkdtempSync(join(tmpdir(), "recon-flood-")), "worker.heartbeat")
    const scope = Scope.makeUnsafe()
    await Effect.runPromise(Layer.buildWithScope(
      Heartbeat.layer({ path: heartbeat, every: "100 millis" }).pipe(Layer.provide(Components.layer()), Layer.provideMerge(HealthRegistry.layer([])), Layer.provide(NodeServices.layer)),
      scope
    ).pipe(Effect.map(Context.isContext)))
    let writes = 0
    let lastWritten = ""
    let judgedBad: string | undefined
    const watcher = setInterval(() => {
      let text: string
      try {
        text = readFileSync(heartbeat, "utf8")
      } catch {
        return // not written yet
      }
      const json = JSON.parse(text) as { written_at: string }
      if (json.written_at !== lastWritten) writes++
      lastWritten = json.written_at
      // The probe's own rules, but for readiness (no loop runs here): fresh and well-formed.
      const verdict = judge(heartbeat, text, Date.now())
      if (!verdict.ok && !verdict.line.includes("worker reports not ready")) judgedBad = verdict.line
    }, 20)
    try {
      // 15 concurrent sign-ins at a time, unknown accounts, each hashed against the dummy hash: at
      // least 20 in all, and on until the heartbeat has been written three times during the flood.
      const writesBefore = writes
      let next = 0
      let flooding = true
      const statuses: Array<number> = []
      const flood = Promise.all(Array.from({ length: 15 }, async () => {
        while (flooding || next < 20) {
          const i = next++
          statuses.push((await signIn(admin.url, `flood-${i}`, "not the password")).http)
        }
      }))
      try {
        await eventuallyAsync("three heartbeat writes during the flood", async () => writes - writesBefore >= 3, { timeoutMs: 60_000, detail: () => `${next} sign-ins sent` })
      } finally {
        flooding = false
        await flood
      }
      assert.isTrue(statuses.every((status) => status === 401 || status === 429), JSON.stringify(statuses))
      assert.isAtLeast(statuses.filter((status) => status === 401).length, 15, "many were hashed")
      assert.isAtMost(peakConcurrentHashes(), MAX_CONCURRENT_HASHES)
      // Written throughout: during the flood (above), never stale or malformed by the probe's rules
      // while it ran, and again after it. The longest gap between two writes under a sign-in flood
      // is a figure of bench/hardening.ts.
      assert.isUndefined(judgedBad)
      const afterFlood = writes
      await eventuallyAsync("a heartbeat write after the flood", async () => writes > afterFlood)
      assert.isUndefined(judgedBad)
    } finally {
      clearInterval(watcher)
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await admin.close()
    }
  }, 120_000)
})
