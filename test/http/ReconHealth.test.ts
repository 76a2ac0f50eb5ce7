// GET /health follows the database: 503 while PostgreSQL is stopped, 200 again once it is back,
// without restarting the service. This file runs its own PostgreSQL server so it can stop it.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { EmbeddedCluster } from "../../src/db/EmbeddedPostgres.ts"
import { createMigratedDatabaseOn, type OwnCluster, startOwnCluster } from "../support/database.ts"
import { recon, type Running, startRecon } from "../support/recon.ts"

let own: OwnCluster
let cluster: EmbeddedCluster
let server: Running

beforeAll(async () => {
  own = await startOwnCluster("health")
  cluster = own.cluster
  server = await startRecon(await createMigratedDatabaseOn(cluster.url, "health"))
})
afterAll(async () => {
  await server.close()
  await own.remove()
})

const health = async () => {
  const response = await fetch(`${server.url}/health`)
  return { http: response.status, body: await response.json() }
}

/** Polls until `check` holds: the server reconnects on its own schedule, not ours. */
const eventually = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 100; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.fail(`not ${what} within 10 s`)
}

describe("/health", () => {
  it("answers 503 while PostgreSQL is down and 200 once it is back, without a restart", async () => {
    assert.deepStrictEqual(await health(), { http: 200, body: { status: "ok" } })
    await cluster.stop()
    const down = await health()
    assert.deepStrictEqual(down, { http: 503, body: { status: "unavailable" } })
    const route = await recon(server.url)("/stats/top-info", {})
    assert.deepStrictEqual([route.http, route.body.msg], [503, "unavailable"])
    await cluster.start()
    await eventually(async () => (await health()).http === 200, "healthy again")
    const after = await recon(server.url)("/stats/top-info", {})
    assert.strictEqual(after.http, 200)
  })
})
