// The token stages of DESIGN section 3 on wallet_service's routes: the recon worker's token (and
// the shared one before stage C); a valid token of the wrong caller is refused, before the body.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { createMigratedDatabase } from "../support/database.ts"
import { ADMIN_TOKEN, RECON_TOKEN, type Running, SHARED_TOKEN } from "../support/recon.ts"
import { agree, balance, createDeposit, startWallet } from "../support/wallet.ts"

let db: string
let playerId: number
beforeAll(async () => {
  db = await createMigratedDatabase("wallet_auth")
  playerId = (await createDeposit(db, "Auth Kim", "10")).playerId
})

/** For each token (null: none): the HTTP status of agree (unknown deposit: 404 once let in) and of balance. */
const codes = async (server: Running, tokens: ReadonlyArray<string | null>) =>
  Promise.all(tokens.map(async (token) => {
    const a = await agree(server.url, { deposit_id: 999_999 }, { token })
    const b = await balance(server.url, playerId, token)
    if (a.http === 401) assert.deepStrictEqual(a.body, { status: 401, msg: "unauthorized", data: {
      detail: "missing or wrong X-Internal-Service-Token: this route takes the recon worker's token (SVC_INTERNAL_SERVICE_TOKEN_RECON)",
      issues: []
    } })
    return `${a.http}/${b.http}`
  }))

const withWallet = async (env: Record<string, string>, check: (server: Running) => Promise<void>) => {
  const server = await startWallet(db, env)
  try {
    await check(server)
  } finally {
    await server.close()
  }
}

describe("wallet token stages", () => {
  it("stage A (shared token only): the shared token; not the admin token, a wrong one or none", () =>
    withWallet({ SVC_INTERNAL_SERVICE_TOKEN: SHARED_TOKEN }, async (server) => {
      assert.deepStrictEqual(await codes(server, [SHARED_TOKEN, RECON_TOKEN, ADMIN_TOKEN, "wrong", "", null, `${SHARED_TOKEN}x`]),
        ["404/200", "401/401", "401/401", "401/401", "401/401", "401/401", "401/401"])
    }))

  it("stage B (shared and per-caller): the recon worker's token and the shared one; not the admin token", () =>
    withWallet({ SVC_INTERNAL_SERVICE_TOKEN: SHARED_TOKEN, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN }, async (server) => {
      assert.deepStrictEqual(await codes(server, [RECON_TOKEN, SHARED_TOKEN, ADMIN_TOKEN, null]), ["404/200", "404/200", "401/401", "401/401"])
    }))

  it("stage C (per-caller only): only the recon worker's token; the token is checked before the body", () =>
    withWallet({ SVC_PER_CALLER_TOKEN_REQUIRED: "on", SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN }, async (server) => {
      assert.deepStrictEqual(await codes(server, [RECON_TOKEN, SHARED_TOKEN, ADMIN_TOKEN, null]), ["404/200", "401/401", "401/401", "401/401"])
      for (const raw of ["{broken", JSON.stringify({ x: "y".repeat(100_000) }), "[1,2]"]) {
        assert.strictEqual((await agree(server.url, undefined, { token: ADMIN_TOKEN, raw })).http, 401)
      }
      assert.strictEqual((await agree(server.url, undefined, { token: null, raw: "plain", contentType: "text/plain" })).http, 401)
    }))
})
