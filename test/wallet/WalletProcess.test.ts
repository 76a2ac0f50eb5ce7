// `node src/main.ts wallet` as a process (stage C tokens): it migrates, serves, credits once and
// stops gracefully on SIGTERM; and `all` runs wallet_service beside the others on its own port.
import { assert, describe, it } from "@effect/vitest"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { createTestDatabase } from "../support/database.ts"
import { servicePorts, spawnCommand, waitForUrl } from "../support/process.ts"
import { ADMIN_TOKEN, RECON_TOKEN } from "../support/recon.ts"
import { eventuallyAsync } from "../support/time.ts"
import { agree, balance, createDeposit } from "../support/wallet.ts"

describe("wallet process", () => {
  it("migrates a fresh database, serves in stage C, and exits 0 on SIGTERM", async () => {
    const databaseUrl = await createTestDatabase("wproc")
    const port = await freePort()
    const { child, output, exited } = spawnCommand(["wallet"], {
      DATABASE_URL: databaseUrl,
      SVC_WALLET_PORT: String(port),
      SVC_PER_CALLER_TOKEN_REQUIRED: "on",
      SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN,
      LOG_FORMAT: "json"
    })
    const base = `http://127.0.0.1:${port}`
    try {
      assert.isTrue(await waitForUrl(`${base}/health`, 60_000), output())
      assert.match(output(), /migrations applied: 0001_recon_tables.*0008_wallet_constraints/)
      const { depositId, playerId } = await createDeposit(databaseUrl, "Process Kim", "25000")
      assert.strictEqual((await agree(base, { deposit_id: depositId, sms_id: 1 }, { token: ADMIN_TOKEN })).http, 401)
      assert.deepStrictEqual((await agree(base, { deposit_id: depositId, sms_id: 1 })).body.data, { deposit_id: depositId, status: "approved", replayed: false })
      assert.strictEqual((await agree(base, { deposit_id: depositId, sms_id: 1 })).body.data.replayed, true)
      assert.strictEqual((await balance(base, playerId)).body.data.balance, "25000")
      assert.notInclude(output(), RECON_TOKEN)
    } finally {
      child.kill("SIGTERM")
    }
    assert.strictEqual(await exited, 0, output())
  }, 150_000)

  it("`all` serves wallet_service on SVC_WALLET_PORT and names it in its banner", async () => {
    const databaseUrl = await createTestDatabase("wall")
    const { wallet, env: ports } = await servicePorts()
    const { child, output, exited } = spawnCommand(["all"], {
      DATABASE_URL: databaseUrl,
      ...ports,
      SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
      SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN,
      LOG_LEVEL: "warn"
    })
    try {
      assert.isTrue(await waitForUrl(`http://127.0.0.1:${wallet}/health`, 60_000), output())
      // The banner comes once all four servers listen, the wallet's /health may answer before.
      await eventuallyAsync("the banner", async () => output().includes("wallet_service "), { everyMs: 50, detail: output })
      assert.include(output(), `wallet_service   http://127.0.0.1:${wallet}`)
      const answer = await agree(`http://127.0.0.1:${wallet}`, { deposit_id: 1 })
      assert.deepStrictEqual([answer.http, answer.body.data.detail], [404, "deposit 1 not found"])
    } finally {
      child.kill("SIGTERM")
    }
    assert.strictEqual(await exited, 0, output())
  }, 150_000)
})
