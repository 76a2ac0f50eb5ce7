// The embedded server's login: a random password kept beside the data (mode 0600), and a cluster
// made before passwords were random (login recon/recon, no password file) gets one at its next start.
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startEmbeddedPostgres } from "../../src/db/EmbeddedPostgres.ts"
import { runSql } from "../support/database.ts"

const dir = mkdtempSync(join(tmpdir(), "recon-embedded-"))
chmodSync(dir, 0o755) // the server runs as the user "postgres" when the tests run as root
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const loginWith = (port: number, password: string) =>
  runSql(`postgres://recon:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql`SELECT current_user AS who`
  })).then(() => "accepted", () => "refused")

describe("embedded PostgreSQL login", () => {
  it("is random, kept in <dir>.password (0600); a legacy recon/recon cluster gets a new one at its next start", async () => {
    const data = join(dir, "pg")
    const first = await startEmbeddedPostgres({ dir: data, persistent: true })
    try {
      assert.strictEqual(first.passwordFile, `${data}.password`)
      assert.strictEqual((statSync(first.passwordFile).mode & 0o777).toString(8), "600")
      const password = readFileSync(first.passwordFile, "utf8").trim()
      assert.match(password, /^[A-Za-z0-9_-]{32}$/)
      assert.strictEqual(await loginWith(first.port, password), "accepted")
      assert.strictEqual(await loginWith(first.port, "recon"), "refused")
      // Make it a cluster of the earlier kind: the fixed password, and no password file.
      await runSql(first.url, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`ALTER ROLE recon PASSWORD 'recon'`)
      }))
    } finally {
      await first.stop()
    }
    rmSync(`${data}.password`)

    const second = await startEmbeddedPostgres({ dir: data, persistent: true })
    try {
      const rotated = readFileSync(second.passwordFile, "utf8").trim()
      assert.strictEqual((statSync(second.passwordFile).mode & 0o777).toString(8), "600")
      assert.strictEqual(await loginWith(second.port, rotated), "accepted")
      assert.strictEqual(await loginWith(second.port, "recon"), "refused")
    } finally {
      await second.stop()
    }
  }, 120_000)
})
