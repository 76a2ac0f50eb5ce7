// `node src/main.ts recon` as a process: it migrates, serves, and stops gracefully on SIGTERM.
import { assert, describe, it } from "@effect/vitest"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { createTestDatabase } from "../support/database.ts"
import { spawnCommand, waitForUrl } from "../support/process.ts"
import { ADMIN_TOKEN, recon } from "../support/recon.ts"

describe("recon process", () => {
  it("migrates a fresh database, serves, and exits 0 on SIGTERM", async () => {
    const databaseUrl = await createTestDatabase("proc")
    const port = await freePort()
    const { child, output, exited } = spawnCommand(["recon"], {
      DATABASE_URL: databaseUrl, SVC_RECON_PORT: String(port), SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN, LOG_FORMAT: "json"
    })
    const base = `http://127.0.0.1:${port}`
    assert.isTrue(await waitForUrl(`${base}/health`), output())
    const answer = await recon(base)("/stats/top-info", {})
    assert.strictEqual(answer.http, 200)
    assert.match(output(), /migrations applied: 0001_recon_tables/)
    assert.notInclude(output(), ADMIN_TOKEN)
    child.kill("SIGTERM")
    assert.strictEqual(await exited, 0, output())
  })
})
