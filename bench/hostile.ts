// Benchmark: the memory of `all` under a repeated hostile mix (figures printed, nothing asserted).
// node bench/hostile.ts   — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
// `node dist/main.js all` (src/main.ts when not built; RECON_DIR for another checkout) on a fresh
// database; BENCH_ROUNDS rounds (10) of the mix of test/support/hostile.ts (64 KiB bodies,
// 10,000-deep JSON, long keywords, wrong tokens, unknown devices, odd paths at every route of the
// four ports), 8 requests at a time; the RSS from /proc after each round, and the answers by
// status. An operator signs in first, so the admin routes' handlers see the mix too.
import { spawn } from "node:child_process"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { freePort } from "../src/db/EmbeddedPostgres.ts"
import { SERVICE_ENV } from "../src/commands/NodeFlags.ts"
import { hashPassword } from "../src/domain/Passwords.ts"
import { hostileMix, send } from "../test/support/hostile.ts"
import { benchDatabase, loadAverage, reconEntry, rssOf, sleep, waitFor } from "./support.ts"

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10)
const CONCURRENCY = 8
const ADMIN_TOKEN = "bench-admin-token-0123456789"
const RECON_TOKEN = "bench-recon-token-0123456789"
const PASSWORD = "correct horse battery staple"

const db = await benchDatabase("hostile")
const ports = { recon: await freePort(), push: await freePort(), admin: await freePort(), wallet: await freePort() }
const child = spawn(process.execPath, [reconEntry(), "all"], {
  env: {
    PATH: process.env.PATH ?? "",
    ...SERVICE_ENV,
    DATABASE_URL: db.url,
    LOG_LEVEL: "error",
    SVC_RECON_PORT: String(ports.recon),
    SVC_PUSH_PORT: String(ports.push),
    SVC_ADMIN_PORT: String(ports.admin),
    SVC_WALLET_PORT: String(ports.wallet),
    SVC_WORKER_HEARTBEAT_FILE: join(db.dir, "worker.heartbeat"),
    SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
    SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN
  },
  stdio: ["ignore", "ignore", "inherit"]
})
/** nodejs_heap_used_bytes of GET /metrics, in MB (the heap's share of the RSS). */
const heapUsed = (base: string) =>
  fetch(`${base}/metrics`).then((r) => r.text()).then(
    (text) => Number(/^nodejs_heap_used_bytes(?:\{[^}]*\})? (\S+)/m.exec(text)?.[1] ?? Number.NaN) / 1024 / 1024,
    () => Number.NaN
  )
const bases = {
  recon: `http://127.0.0.1:${ports.recon}`,
  wallet: `http://127.0.0.1:${ports.wallet}`,
  admin: `http://127.0.0.1:${ports.admin}`,
  push: `http://127.0.0.1:${ports.push}`
}
try {
  if (!(await waitFor(`${bases.push}/health/ready`, 120_000)) || !(await waitFor(`${bases.admin}/`, 30_000))) throw new Error("`all` did not come up")
  const hash = await Effect.runPromise(hashPassword(PASSWORD))
  await db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO admin.operator (account, password_hash) VALUES ('bench', ${hash})`
  }))
  const login = await fetch(`${bases.admin}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ account: "bench", password: PASSWORD })
  }).then((r) => r.json() as Promise<{ data: { token: string } }>)
  const mix = hostileMix(bases, { admin: ADMIN_TOKEN, recon: RECON_TOKEN, session: login.data.token })
  await sleep(2_000)
  const pid = child.pid!
  console.log(`hostile mix: ${mix.length} requests a round, ${CONCURRENCY} at a time, ${ROUNDS} rounds; ${reconEntry()} all; load ${loadAverage()}`)
  console.log(`  before: RSS ${rssOf(pid).toFixed(0)} MB`)
  const figures: Array<string> = []
  for (let round = 1; round <= ROUNDS; round++) {
    const statuses = new Map<number, number>()
    const started = Date.now()
    let next = 0
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < mix.length) {
        const answer = await send(mix[next++]!)
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
      }
    }))
    const rss = rssOf(pid)
    const heap = await heapUsed(bases.recon)
    figures.push(rss.toFixed(0))
    const byStatus = [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`).join(" ")
    console.log(`  round ${String(round).padStart(2)}: RSS ${rss.toFixed(0)} MB, heap used ${heap.toFixed(0)} MB  (${((Date.now() - started) / 1000).toFixed(1)} s; ${byStatus})`)
  }
  console.log(`  RSS after each round (MB): ${figures.join(" → ")}`)
} finally {
  child.kill("SIGTERM")
  await new Promise((resolve) => child.once("exit", resolve))
  await db.close()
}
