// `node src/main.ts recon` as a process: it migrates, serves, and stops gracefully on SIGTERM.
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { createTestDatabase } from "../support/database.ts"
import { ADMIN_TOKEN, recon } from "../support/recon.ts"

describe("recon process", () => {
  it("migrates a fresh database, serves, and exits 0 on SIGTERM", async () => {
    const databaseUrl = await createTestDatabase("proc")
    const port = await freePort()
    const child = spawn(process.execPath, ["src/main.ts", "recon"], {
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: databaseUrl, SVC_RECON_PORT: String(port), SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN, LOG_FORMAT: "json" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    const base = `http://127.0.0.1:${port}`
    let up = false
    for (let i = 0; i < 150 && !up; i++) {
      up = await fetch(`${base}/health`).then((r) => r.ok, () => false)
      if (!up) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.isTrue(up, output)
    const answer = await recon(base)("/stats/top-info", {})
    assert.strictEqual(answer.http, 200)
    assert.match(output, /migrations applied: 0001_recon_tables/)
    assert.notInclude(output, ADMIN_TOKEN)
    child.kill("SIGTERM")
    assert.strictEqual(await exited, 0, output)
  })
})
