// Benchmark: wallet_service agree throughput and latency (figures printed, nothing asserted).
// node bench/wallet.ts   — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
// wallet_service runs as its own process (`node dist/main.js wallet`, else src/main.ts); this
// process sends BENCH_DEPOSITS agree calls (each a new deposit and SMS) with BENCH_CONCURRENCY in
// flight, then replays them all, then checks every deposit was credited exactly once.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { cpus } from "node:os"
import { freePort } from "../src/db/EmbeddedPostgres.ts"
import { benchDatabase } from "./support.ts"

const DEPOSITS = Number(process.env.BENCH_DEPOSITS ?? 5_000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const TOKEN = "bench-recon-token-0123456789"

const db = await benchDatabase("wallet")
const report = (line: string) => console.log(line)
report(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, ${db.embedded ? "embedded PostgreSQL" : "DATABASE_URL"}`)

// 1,000 players with five deposits each: balances are shared, as in production.
const ids = await db.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO recon.player (name) SELECT 'player ' || g FROM generate_series(1, ${Math.ceil(DEPOSITS / 5)}) AS g`
  const rows = yield* sql<{ id: bigint }>`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
    SELECT p.id, p.name, 1000 + g FROM generate_series(1, ${DEPOSITS}) AS g
    JOIN recon.player AS p ON p.id = 1 + (g - 1) / 5 RETURNING id`
  yield* sql`ANALYZE`
  return rows.map((r) => Number(r.id))
}))

const entry = existsSync("dist/main.js") ? "dist/main.js" : "src/main.ts"
const port = await freePort()
const wallet = spawn(process.execPath, [entry, "wallet"], {
  env: { PATH: process.env.PATH ?? "", DATABASE_URL: db.url, SVC_WALLET_PORT: String(port), SVC_INTERNAL_SERVICE_TOKEN_RECON: TOKEN, LOG_LEVEL: "warn" },
  stdio: ["ignore", "inherit", "inherit"]
})
const base = `http://127.0.0.1:${port}`
for (let i = 0; i < 300 && !(await fetch(`${base}/health`).then((r) => r.ok, () => false)); i++) {
  await new Promise((resolve) => setTimeout(resolve, 100))
}

const agree = async (depositId: number) => {
  const started = performance.now()
  const response = await fetch(`${base}/internal/wallet/deposit/agree`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-internal-service-token": TOKEN },
    body: JSON.stringify({ deposit_id: depositId, sms_id: depositId })
  })
  const body = await response.json() as { data?: { replayed?: boolean } }
  return { millis: performance.now() - started, status: response.status, replayed: body.data?.replayed }
}

/** Every id through `agree` with CONCURRENCY in flight: answers per-call results and the wall time. */
const pass = async (list: ReadonlyArray<number>) => {
  const results: Array<Awaited<ReturnType<typeof agree>>> = []
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < list.length) results.push(await agree(list[next++]!))
  }))
  return { results, seconds: (performance.now() - started) / 1000 }
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const describe = (what: string, { results, seconds }: Awaited<ReturnType<typeof pass>>) => {
  const millis = results.map((r) => r.millis)
  const statuses = [...new Set(results.map((r) => `${r.status}${r.replayed === undefined ? "" : r.replayed ? " replayed" : " approved"}`))].join(", ")
  report(`${what}: ${results.length} calls in ${seconds.toFixed(2)} s = ${(results.length / seconds).toFixed(0)}/s; ` +
    `p50 ${percentile(millis, 50).toFixed(1)} ms, p99 ${percentile(millis, 99).toFixed(1)} ms, max ${Math.max(...millis).toFixed(1)} ms (${statuses})`)
}

await pass(ids.slice(0, 200)) // warm-up: the first 200 deposits, not counted
describe(`agree, new deposits, ${CONCURRENCY} in flight`, await pass(ids.slice(200)))
describe(`agree replayed, ${CONCURRENCY} in flight`, await pass(ids))

const check = await db.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ ledger: bigint; approved: bigint; credited: string; expected: string }>`SELECT
    (SELECT count(*) FROM wallet.ledger) AS ledger,
    (SELECT count(*) FROM recon.deposit WHERE status = 'approved') AS approved,
    (SELECT sum(balance)::text FROM wallet.balance) AS credited,
    (SELECT sum(amount)::text FROM recon.deposit) AS expected`
  return row!
}))
report(`check: ${check.ledger} ledger rows, ${check.approved} approved of ${DEPOSITS}; balances ${check.credited} = deposits ${check.expected}: ${check.credited === check.expected && Number(check.ledger) === DEPOSITS ? "once each" : "MISMATCH"}`)

wallet.kill("SIGTERM")
await new Promise((resolve) => wallet.on("exit", resolve))
await db.close()
