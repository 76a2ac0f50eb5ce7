// Session tokens on their own: only HS256 under admin.signing_key opens a session (alg confusion,
// `none`, a tampered signature and foreign keys are "invalid"), expiry on the TestClock, and the
// tokens issued before jose (same header, same claims) keep working across the deploy.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { TestClock } from "effect/testing"
import { SignJWT } from "jose"
import { createHmac } from "node:crypto"
import { makeSessionTokens, type TokenRejected } from "../../src/admin/SessionTokens.ts"

const KEY = "signing-key-for-session-tests-0123456789abcdef"
const tokens = makeSessionTokens(KEY)

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
const claims = (now: number) => ({ sub: "7", acc: "alice", iat: now, exp: now + 900 })

/** Why `token` is refused ("accepted" when it is not). */
const verdict = (token: string) =>
  Effect.map(Effect.exit(tokens.verify(token)), (exit) =>
    Exit.isSuccess(exit) ? "accepted" : (exit.cause.reasons[0] as { readonly error: TokenRejected }).error.reason)

describe("session tokens", () => {
  it.effect("issues HS256 tokens with sub, acc, iat and exp, and verifies them into the session", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("100 seconds")
      const token = yield* tokens.issue({ id: 7, account: "alice" })
      const [header, payload] = token.split(".")
      assert.deepStrictEqual(JSON.parse(Buffer.from(header!, "base64url").toString()), { alg: "HS256", typ: "JWT" })
      assert.deepStrictEqual(JSON.parse(Buffer.from(payload!, "base64url").toString()), claims(100))
      assert.deepStrictEqual(yield* tokens.verify(token), { operatorId: 7, account: "alice", expiresAt: 1_000_000 })
    }))

  it.effect("expires exactly at exp, on Effect's clock", () =>
    Effect.gen(function*() {
      const token = yield* tokens.issue({ id: 7, account: "alice" })
      yield* TestClock.adjust("899999 millis")
      assert.strictEqual(yield* verdict(token), "accepted")
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* verdict(token), "expired")
      assert.strictEqual(yield* verdict(""), "missing")
    }))

  it.effect("refuses other algorithms (none, HS512 and HS384 under the same key) and foreign keys", () =>
    Effect.gen(function*() {
      const key = new TextEncoder().encode(KEY)
      const sign = (alg: string, secret: Uint8Array = key) =>
        Effect.promise(() =>
          new SignJWT({ acc: "alice" }).setProtectedHeader({ alg, typ: "JWT" }).setSubject("7").setIssuedAt(0).setExpirationTime(900).sign(secret)
        )
      const cases = {
        none: `${b64({ alg: "none", typ: "JWT" })}.${b64(claims(0))}.`,
        "none, signature kept": `${b64({ alg: "none", typ: "JWT" })}.${b64(claims(0))}.${(yield* tokens.issue({ id: 7, account: "alice" })).split(".")[2]}`,
        HS512: yield* sign("HS512"),
        HS384: yield* sign("HS384"),
        "HS256, another key": yield* sign("HS256", new TextEncoder().encode("another-signing-key-0123456789abcdefghijkl"))
      }
      for (const [name, token] of Object.entries(cases)) assert.strictEqual(yield* verdict(token), "invalid", name)
      assert.strictEqual(yield* verdict(yield* sign("HS256")), "accepted")
    }))

  it.effect("refuses a tampered signature, header or payload", () =>
    Effect.gen(function*() {
      const token = yield* tokens.issue({ id: 7, account: "alice" })
      const [header, payload, signature] = token.split(".") as [string, string, string]
      const flipped = Buffer.from(signature, "base64url")
      flipped[0] = flipped[0]! ^ 1
      const cases = {
        "signature bit": `${header}.${payload}.${flipped.toString("base64url")}`,
        "signature of another token": `${header}.${payload}.${(yield* tokens.issue({ id: 8, account: "bob" })).split(".")[2]}`,
        "payload": `${header}.${b64({ ...claims(0), sub: "1", acc: "root" })}.${signature}`,
        "header": `${b64({ alg: "HS256", typ: "JWT", kid: "x" })}.${payload}.${signature}`,
        "no signature": `${header}.${payload}.`,
        "two parts": `${header}.${payload}`
      }
      for (const [name, bad] of Object.entries(cases)) assert.strictEqual(yield* verdict(bad), "invalid", name)
    }))

  it.effect("accepts a session issued before jose (the same HS256 bytes), and refuses one without a valid sub", () =>
    Effect.gen(function*() {
      const legacy = (body: unknown) => {
        const input = `${b64({ alg: "HS256", typ: "JWT" })}.${b64(body)}`
        return `${input}.${createHmac("sha256", KEY).update(input).digest("base64url")}`
      }
      assert.deepStrictEqual(yield* tokens.verify(legacy(claims(0))), { operatorId: 7, account: "alice", expiresAt: 900_000 })
      assert.strictEqual(yield* verdict(legacy({ ...claims(0), sub: "07" })), "invalid")
      assert.strictEqual(yield* verdict(legacy({ sub: "7", acc: "alice", exp: 900 })), "invalid")
    }))
})
