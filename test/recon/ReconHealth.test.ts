// GET /health follows the database: 503 while PostgreSQL is stopped, 200 again once it is back,
// without restarting the service (recon_service, and admin_service's, which compose and Kubernetes
// probe). On the run's outage cluster (test/support/outage.ts), which it may stop.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { adminEnv, startAdmin } from "../admin/support.ts"
import { type OutageCluster, takeOutageCluster } from "../support/outage.ts"
import { recon, type Running, startRecon } from "../support/recon.ts"
import { eventuallyAsync } from "../support/time.ts"

let cluster: OutageCluster
let server: Running
let admin: Running

beforeAll(async () => {
  cluster = await takeOutageCluster("health")
  server = await startRecon(cluster.url)
  admin = await startAdmin(cluster.url, adminEnv(server.url))
})
afterAll(async () => {
  await admin.close()
  await server.close()
  await cluster.release()
})

const health = async (base = server.url) => {
  const response = await fetch(`${base}/health`)
  return { http: response.status, body: await response.json() }
}

// The server reconnects on its own schedule, not ours: the tests poll (every 100 ms, 10 s at most).
const eventually = (what: string, check: () => Promise<boolean>) => eventuallyAsync(what, check, { everyMs: 100 })

describe("/health", () => {
  it("answers 503 while PostgreSQL is down and 200 once it is back, without a restart", async () => {
    assert.deepStrictEqual(await health(), { http: 200, body: { status: "ok" } })
    assert.deepStrictEqual(await health(admin.url), { http: 200, body: { status: "ok" } })
    await cluster.stop()
    const down = await health()
    assert.deepStrictEqual(down, { http: 503, body: { status: "unavailable" } })
    assert.deepStrictEqual(await health(admin.url), { http: 503, body: { status: "unavailable" } })
    const route = await recon(server.url)("/stats/top-info", {})
    assert.deepStrictEqual([route.http, route.body.msg], [503, "unavailable"])
    await cluster.start()
    await eventually("healthy again", async () => (await health()).http === 200)
    await eventually("admin healthy again", async () => (await health(admin.url)).http === 200)
    const after = await recon(server.url)("/stats/top-info", {})
    assert.strictEqual(after.http, 200)
  })
})
