// Operator sign-in and the session token: 401 for a wrong account or password (same answer, same
// cost), the sliding session on the TestClock, tampered and foreign tokens, and the signing key
// shared by every admin process on the database and kept across restarts.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeSessionTokens } from "../../src/admin/SessionTokens.ts"
import { hashingDone } from "../../src/domain/Passwords.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { type Running, startRecon } from "../support/recon.ts"
import { adminEnv, adminLayer, baseUrlOf, createOperator, login, PASSWORD, request, sql, startAdmin } from "./support.ts"

let db: string
let recon: Running
beforeAll(async () => {
  db = await createMigratedDatabase("admin_session")
  recon = await startRecon(db)
  await createOperator(db, "alice")
  return () => recon.close()
})

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"))
const bearer = (answer: { headers: Headers }) => (answer.headers.get("authorization") ?? "").replace(/^Bearer /, "")

const unauthorized = (detail: string) => ({ status: 401, msg: "unauthorized", data: { detail, issues: [] } })

describe("POST /api/auth/login", () => {
  let admin: Running
  beforeAll(async () => {
    admin = await startAdmin(db, adminEnv(recon.url))
    return () => admin.close()
  })

  it("answers a signed token naming the operator, also in the Authorization header", async () => {
    const answer = await request(admin.url, "/api/auth/login", { body: { account: "alice", password: PASSWORD } })
    assert.strictEqual(answer.http, 200)
    assert.deepStrictEqual(Object.keys(answer.body.data), ["token"])
    const token: string = answer.body.data.token
    assert.strictEqual(bearer(answer), token)
    const claims = claimsOf(token)
    assert.strictEqual(claims.acc, "alice")
    assert.strictEqual(claims.exp - claims.iat, 15 * 60)
    assert.strictEqual(answer.headers.get("cache-control"), "no-store")
  })

  it("a wrong password and an unknown account get the same 401, at the same cost", async () => {
    // The cost of a refusal is the scrypt derivations it runs: an unknown account is checked against
    // a dummy hash, so it runs the one a wrong password runs, at the same parameters. (How long each
    // takes is a figure of bench/admin.ts.)
    const refused = async (account: string) => {
      const before = hashingDone()
      const answer = await request(admin.url, "/api/auth/login", { body: { account, password: "not the password at all" } })
      const after = hashingDone()
      assert.deepStrictEqual([answer.http, answer.body], [401, unauthorized("wrong account or password")])
      assert.isNull(answer.headers.get("authorization"))
      return { derivations: after.derivations - before.derivations, cost: after.cost - before.cost }
    }
    const wrongPassword = await refused("alice")
    const unknownAccount = await refused("nobody-here")
    assert.deepStrictEqual(unknownAccount, wrongPassword)
    // One derivation, at the parameters alice's stored hash was made with (scrypt$N$r$p$salt$key).
    const [{ password_hash }] = await sql(db, (sql) => sql<{ password_hash: string }>`SELECT password_hash FROM admin.operator WHERE account = 'alice'`)
    const [, n, r, p] = password_hash.split("$").map(Number)
    assert.deepStrictEqual(wrongPassword, { derivations: 1, cost: n! * r! * p! })
  })

  it("schema violations are 400, non-JSON 415, over 64 KiB 413", async () => {
    for (const body of [{ account: "alice" }, { account: "", password: "x" }, { account: "alice", password: PASSWORD, admin: true }, "[]", "{nope"]) {
      const answer = await request(admin.url, "/api/auth/login", { body })
      assert.deepStrictEqual([answer.http, answer.body.msg], [400, "bad_request"], JSON.stringify(body))
    }
    const text = await request(admin.url, "/api/auth/login", { body: "account=alice", headers: { "content-type": "application/x-www-form-urlencoded" } })
    assert.deepStrictEqual([text.http, text.body.msg], [415, "unsupported_media_type"])
    const big = await request(admin.url, "/api/auth/login", { body: { account: "alice", password: "p".repeat(70_000) } })
    assert.deepStrictEqual([big.http, big.body.msg], [413, "payload_too_large"])
  })

  it("refuses tampered, foreign, unsigned and malformed tokens", async () => {
    const token = await login(admin.url, "alice")
    const [header, payload, signature] = token.split(".")
    const forged = Buffer.from(JSON.stringify({ ...claimsOf(token), acc: "root", sub: "999" })).toString("base64url")
    const none = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")
    const foreign = await Effect.runPromise(makeSessionTokens("some-other-signing-key-0123456789abcdefghij").issue({ id: 1, account: "alice" }))
    const cases = {
      tampered: `${header}.${forged}.${signature}`,
      foreign,
      unsigned: `${none}.${payload}.`,
      "signature cut": `${header}.${payload}.${signature!.slice(0, 20)}`,
      "extra part": `${token}.x`,
      garbage: "a.b.c"
    }
    for (const [name, bad] of Object.entries(cases)) {
      const answer = await request(admin.url, "/api/top-info", { token: bad })
      assert.deepStrictEqual([answer.http, answer.body], [401, unauthorized("invalid session token")], name)
      assert.isNull(answer.headers.get("authorization"), name)
    }
    assert.strictEqual((await request(admin.url, "/api/top-info", { token })).http, 200)
  })
})

describe("the signing key", () => {
  it("is shared by two admin processes on one database and survives a restart", async () => {
    const first = await startAdmin(db, adminEnv(recon.url))
    const second = await startAdmin(db, adminEnv(recon.url))
    const token = await login(first.url, "alice")
    assert.strictEqual((await request(second.url, "/api/top-info", { token })).http, 200)
    await first.close()
    await second.close()
    const restarted = await startAdmin(db, adminEnv(recon.url))
    assert.strictEqual((await request(restarted.url, "/api/top-info", { token })).http, 200)
    const [{ n }] = await sql(db, (sql) => sql<{ n: bigint }>`SELECT count(*) AS n FROM admin.signing_key`)
    assert.strictEqual(Number(n), 1)
    await restarted.close()
  })

  it("of another database does not open this one", async () => {
    const other = await createMigratedDatabase("admin_session_other")
    await createOperator(other, "alice")
    const elsewhere = await startAdmin(other, adminEnv(recon.url))
    const here = await startAdmin(db, adminEnv(recon.url))
    const token = await login(elsewhere.url, "alice")
    const answer = await request(here.url, "/api/top-info", { token })
    assert.deepStrictEqual([answer.http, answer.body], [401, unauthorized("invalid session token")])
    await elsewhere.close()
    await here.close()
  })
})

describe("the sliding session (TestClock)", () => {
  it.effect("every authenticated answer carries a fresh token; an unused token expires after 15 min", () =>
    Effect.gen(function*() {
      const base = baseUrlOf(yield* Layer.build(adminLayer(db, adminEnv(recon.url))))
      const call = (path: string, token?: string) => Effect.promise(() => request(base, path, token === undefined ? {} : { token }))
      const first = yield* Effect.promise(() => login(base, "alice"))
      assert.strictEqual(claimsOf(first).exp, 15 * 60)

      yield* TestClock.adjust("10 minutes")
      const topInfo = yield* call("/api/top-info", first)
      assert.strictEqual(topInfo.http, 200)
      const second = bearer(topInfo)
      assert.strictEqual(claimsOf(second).exp, 25 * 60)
      const health = yield* call("/api/worker-health", second)
      assert.strictEqual(health.http, 200)
      assert.strictEqual(claimsOf(bearer(health)).exp, 25 * 60)

      yield* TestClock.adjust("6 minutes")
      const expired = yield* call("/api/top-info", first)
      assert.deepStrictEqual([expired.http, expired.body], [401, unauthorized("the session has expired; sign in again")])
      assert.isNull(expired.headers.get("authorization"))
      const slid = yield* call("/api/top-info", second)
      assert.strictEqual(slid.http, 200)
      assert.strictEqual(claimsOf(bearer(slid)).exp, 31 * 60)

      yield* TestClock.adjust("15 minutes")
      assert.strictEqual((yield* call("/api/top-info", bearer(slid))).http, 401)
    }).pipe(Effect.scoped))
})
