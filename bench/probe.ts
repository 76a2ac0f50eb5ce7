// Sequential probe (figures only): one worker, one wallet, N pushes one after another, each a
// distinct SMS to a deposit waiting for it: webhook → 200 per push, and GET /health/live for the
// HTTP stack alone. Where the time of one acknowledgement goes when nothing else runs.
// PROBE_N (default 400), BENCH_PG=15|embedded, RECON_DIR for another checkout.
// PROBE_WHOLE=1: what one SMS costs alone, its whole path: each SMS is sent by both phones of the
// merchant's shape (the second copy a duplicate) and approved before the next is sent; the CPU of
// the worker, the wallet and PostgreSQL per SMS, without the contention of a load. With
// BENCH_PERF=1, an on-CPU profile of the same (`perf`): PostgreSQL's CPU by phase, each service's
// by part. PROBE_DIAG=1: the SMS approved more than 1 s after they were stored, with the times of
// their steps. The waits poll the database every 2 ms: PostgreSQL's CPU per SMS includes the polls.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Agent, request as httpRequest } from "node:http"
import { join } from "node:path"
import { smsForwarderFormBody } from "../src/domain/SmsForwarder.ts"
import { benchDatabase, cpuTicks, hangulName, loadAverage, percentile, perfWanted, pushTry, reconEntry, serverCpuTicks, sleep, startPerf, startService, waitFor } from "./support.ts"

const N = Number(process.env.PROBE_N ?? 400)
/** PROBE_GAP_MS: a pause after each answer, so the SMS's parse, match and approval are over before the next push. */
const GAP_MS = Number(process.env.PROBE_GAP_MS ?? 0)
const WHOLE = process.env.PROBE_WHOLE !== undefined && process.env.PROBE_WHOLE !== "" && process.env.PROBE_WHOLE !== "0"
const TOKEN = "bench-recon-token-0123456789"
const SECRET = "bench-secret"
const db = await benchDatabase("probe").catch((error: unknown) => {
  // `npm run bench` goes on without a server it cannot start (e.g. no postgresql-15 installed).
  console.log(`probe not run: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(0)
})
await db.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO recon.shooter_device (device_id, trusted) VALUES ('probe', true)`
  yield* sql`INSERT INTO recon.shooter_push (device_id, format, secret) VALUES ('probe', 'smsforwarder', ${SECRET})`
  yield* sql`INSERT INTO recon.shooter_device (device_id, trusted) VALUES ('probe-b', true)`
  yield* sql`INSERT INTO recon.shooter_push (device_id, format, secret) VALUES ('probe-b', 'smsforwarder', ${SECRET})`
  yield* sql`INSERT INTO recon.shooter_phone (phone) VALUES ('16449999')`
  const rows = JSON.stringify(Array.from({ length: N }, (_, i) => ({ name: hangulName(i), amount: 10_000 + i })))
  yield* sql`WITH x AS (SELECT * FROM jsonb_to_recordset(${rows}::jsonb) AS x(name text, amount bigint)),
      p AS (INSERT INTO recon.player (name) SELECT name FROM x RETURNING id, name)
    INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT p.id, p.name, x.amount FROM p JOIN x ON x.name = p.name`
}))
const wallet = await startService("wallet", "SVC_WALLET_PORT", { DATABASE_URL: db.url, SVC_INTERNAL_SERVICE_TOKEN_RECON: TOKEN })
const worker = await startService("worker", "SVC_PUSH_PORT", {
  DATABASE_URL: db.url, SVC_WORKER_HEARTBEAT_FILE: join(db.dir, "worker.heartbeat"),
  SVC_INTERNAL_SERVICE_TOKEN_RECON: TOKEN, WALLET_SERVICE_URL: wallet.base, ADMIN_SERVICE_URL: "http://127.0.0.1:9"
})
if (!(await waitFor(`${wallet.base}/health`)) || !(await waitFor(`${worker.base}/health/ready`, 120_000))) throw new Error("services did not start")
const agent = new Agent({ keepAlive: true, maxSockets: 4 })
const get = (path: string) => new Promise<void>((done) => {
  httpRequest({ host: "127.0.0.1", port: worker.port, path, agent }, (r) => { r.resume(); r.on("end", () => done()) }).end()
})
const live: Array<number> = []
for (let i = 0; i < N; i++) {
  const t0 = performance.now()
  await get("/health/live")
  live.push(performance.now() - t0)
}
const push: Array<number> = []
const whole: Array<number> = []
/** SMS approved so far (PROBE_WHOLE waits for each), on one connection for the whole run. */
const approvedCount = db.pool(SqlClient.SqlClient.use((sql) =>
  Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM recon.shooter_sms WHERE status = 'approved'`, (rows) => rows[0]?.n ?? 0)))
const ticksBefore = [cpuTicks(worker.child.pid!), cpuTicks(wallet.child.pid!), serverCpuTicks(db)]
const perf = WHOLE && perfWanted() ? startPerf(db.dir) : undefined
let stamp = Date.now() - 60_000
for (let i = 0; i < N; i++) {
  const text = `[Web발신]\n[KB]11/29 10:00\n834702**717\n${hangulName(i)}\n입금\n${(10_000 + i).toLocaleString("en")}\n잔액${(1_000_000 + i).toLocaleString("en")}`
  const timestamp = ++stamp
  const body = Buffer.from(smsForwarderFormBody({ from: "16449999", content: text, orgContent: text, timestamp, secret: SECRET }))
  const t0 = performance.now()
  const [status, second] = await Promise.all([
    pushTry(worker.port, "/push/probe", body, agent, 8_000),
    // The merchant's second phone: the same SMS, its own signature, a few milliseconds later.
    WHOLE ? sleep(2).then(() => pushTry(worker.port, "/push/probe-b", Buffer.from(smsForwarderFormBody({ from: "16449999", content: text, orgContent: text, timestamp, secret: SECRET })), agent, 8_000)) : 200
  ])
  if (status !== 200 || second !== 200) throw new Error(`push answered ${status}, ${second}`)
  push.push(performance.now() - t0)
  if (process.env.PROBE_TRACE) console.log(`trace ${hangulName(i)} ${(performance.timeOrigin + t0).toFixed(1)} ${(performance.timeOrigin + performance.now()).toFixed(1)}`)
  if (WHOLE) {
    while ((await approvedCount()) < i + 1) await sleep(2)
    whole.push(performance.now() - t0)
  }
  if (GAP_MS > 0) await sleep(GAP_MS)
}
/** The first tenth left out (warming up). */
const f = (xs: Array<number>) => {
  const s = xs.slice(Math.floor(xs.length / 10)).sort((a, b) => a - b)
  return `p50 ${percentile(s, 50).toFixed(2)} ms, p90 ${percentile(s, 90).toFixed(2)} ms, p99 ${percentile(s, 99).toFixed(2)} ms`
}
console.log(`${db.server}; ${reconEntry()}; load ${loadAverage()}`)
console.log(`GET /health/live sequential: ${f(live)}`)
console.log(`push sequential (webhook → 200): ${f(push)}`)
if (WHOLE) console.log(`one SMS from both phones, first push → approved: ${f(whole)}`)
// Clock ticks of 10 ms; the last SMS's work may still be running, hence the count after a pause.
await sleep(1_000)
const perSms = (ticks: number, before: number) => `${(((ticks - before) * 10) / N).toFixed(2)} ms`
console.log(`CPU per SMS: the worker ${perSms(cpuTicks(worker.child.pid!), ticksBefore[0]!)}, the wallet ${perSms(cpuTicks(wallet.child.pid!), ticksBefore[1]!)}` +
  `, PostgreSQL ${perSms(serverCpuTicks(db), ticksBefore[2]!)}${WHOLE ? " (its whole path, both copies)" : " (the push alone)"}`)
if (typeof perf === "string") console.log(`no profile: ${perf}`)
else if (perf !== undefined) for (const line of await perf.stop([{ name: "the worker", pid: worker.child.pid! }, { name: "the wallet", pid: wallet.child.pid! }])) console.log(line)
await approvedCount.close()
if (process.env.PROBE_DIAG) {
  const rows = await db.run(Effect.gen(function*() {
    return yield* (yield* SqlClient.SqlClient)<{ id: number; t: string }>`SELECT id, concat_ws(' ', 'created', to_char(created_at, 'MI:SS.MS'), 'parsed', to_char(match_started_at, 'MI:SS.MS'),
      'decided', match_detail->>'decided_at', 'updated', to_char(updated_at, 'MI:SS.MS'), 'attempts', match_attempts, 'wallet', match_detail->'wallet'->>'detail') AS t
      FROM recon.shooter_sms WHERE status = 'approved' AND updated_at - created_at > interval '1 second' ORDER BY id LIMIT 10`
  }))
  for (const r of rows) console.log("slow", r.id, r.t)
}
if (process.env.BENCH_STATS) {
  const top = await db.run(Effect.gen(function*() {
    return yield* (yield* SqlClient.SqlClient)<{ calls: string; total: string; mean: string; plans: string; planning: string; query: string }>`SELECT calls::text,
        round(total_exec_time::numeric, 1)::text AS total, round(mean_exec_time::numeric, 3)::text AS mean,
        plans::text, round(total_plan_time::numeric, 1)::text AS planning, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 100) AS query
      FROM pg_stat_statements WHERE calls >= ${N} ORDER BY total_exec_time + total_plan_time DESC LIMIT 40`
  }))
  // Planning counted with BENCH_PG_OPTIONS="-c pg_stat_statements.track_planning=on".
  for (const row of top) console.log(`   ${row.total.padStart(8)} ms  ${row.calls.padStart(6)} calls  ${row.mean.padStart(8)} ms/call; planned ${row.plans.padStart(5)} times, ${row.planning.padStart(6)} ms  ${row.query}`)
  // With BENCH_PG_OPTIONS="-c track_functions=all": each function's own time and its total.
  const functions = await db.run(Effect.gen(function*() {
    return yield* (yield* SqlClient.SqlClient)<{ name: string; calls: string; total: string; self: string }>`SELECT schemaname || '.' || funcname AS name,
        calls::text, round(total_time::numeric, 1)::text AS total, round(self_time::numeric, 1)::text AS self
      FROM pg_stat_user_functions ORDER BY self_time DESC LIMIT 20`
  }))
  for (const row of functions) console.log(`   ${row.self.padStart(8)} ms own, ${row.total.padStart(8)} ms in all  ${row.calls.padStart(6)} calls  ${row.name}`)
}
agent.destroy()
for (const s of [worker, wallet]) s.child.kill("SIGTERM")
await Promise.all([worker.exited, wallet.exited])
await db.close()
