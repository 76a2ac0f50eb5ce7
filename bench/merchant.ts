// The money path on the shape a merchant's traffic has (figures printed, nothing asserted):
// - one collection account (KB, minute-precise stamps, its balance chained) receives 90 % of the
//   deposits and is forwarded by TWO phones at once: each of its SMS arrives twice, from both,
//   within milliseconds, each phone signing with its own timestamp; three quieter accounts (신한),
//   one phone each, get the rest;
// - PENDING (default 20,000) pending deposits that nothing will match, inserted with the deposits
//   to come just before the load, no ANALYZE (statistics stale, as after a day's orders);
// - WORKERS workers (default 3), each delivery to any of them at random, phones resending what was
//   not answered 200 (250 ms doubling to 2 s; a try times out after 8 s);
// on a durable server: the embedded PostgreSQL 18, or Debian's 15 with BENCH_PG=15. Phases:
// 1. steady: RATE distinct SMS/s (default 100) for STEADY s (default 20): webhook → 200 per
//    delivery, first delivery sent → approved per SMS, PostgreSQL CPU per SMS (each third);
// 2. pgbench -N -c 8 -j 2 -T 15 on the same server, the services idle;
// 3. fast: FAST distinct SMS (default 4,000) at 200/s, each delivered 1–3 times: tries, answers
//    over 8 s, refused or reset, approvals/s;
// 4. burst: BURST distinct SMS (default 4,000) from 50 senders as fast as they are answered:
//    approvals/s end to end ÷ pgbench tps; PostgreSQL CPU per SMS.
// node bench/merchant.ts; RECON_DIR=/path/to/checkout runs another checkout's built services (before/after).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Agent } from "node:http"
import { cpus } from "node:os"
import { join } from "node:path"
import { smsForwarderFormBody } from "../src/domain/SmsForwarder.ts"
import { benchDatabase, cpuTicks, serverCpuTicks, hangulName, pgbenchTps, pushTry, loadAverage, percentile, reconEntry, type Service, sleep, startService, waitFor } from "./support.ts"

const TOKEN = "bench-recon-token-0123456789"
const SECRET = "bench-secret"
const WORKERS = Number(process.env.WORKERS ?? 3)
const RATE = Number(process.env.RATE ?? 100)
const STEADY_SECONDS = Number(process.env.STEADY ?? 20)
const FAST = Number(process.env.FAST ?? 4_000)
const BURST = Number(process.env.BURST ?? 4_000)
const PENDING = Number(process.env.PENDING ?? 20_000)
const SENDERS = 50
const TRY_TIMEOUT_MS = 8_000
const GIVE_UP_AFTER = 25
const KB_SENDER = "16449999"
const SHINHAN_SENDER = "15778000"
const PHONES = ["merchant-a", "merchant-b"]
const QUIET = ["quiet-0", "quiet-1", "quiet-2"]
/** Name ranges of the phases (hangulName indexes), far apart. */
const WARM = 0
const STEADY = 1_000
const FAST_FROM = 20_000
const BURST_FROM = 40_000
const FILLER_FROM = 100_000

const db = await benchDatabase("merchant", { persistent: true }).catch((error: unknown) => {
  // `npm run bench` goes on without a server it cannot start (e.g. no postgresql-15 installed).
  console.log(`merchant bench not run: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(0)
})
const report = (line: string) => console.log(line)
const ms = (n: number) => `${n.toFixed(1)} ms`
report(`machine: ${cpus().length} cores, Node ${process.version}, ${db.server}; services: ${reconEntry()}; ${WORKERS} workers; load average ${loadAverage()}`)

const steadyCount = RATE * STEADY_SECONDS
const amountOf = (i: number) => 10_000 + (i % 37) * 1_000
/** Every name the load will send, with its deposit: the account of each, and the deposits nothing matches. */
const names = [
  ...Array.from({ length: 100 }, (_, i) => WARM + i),
  ...Array.from({ length: steadyCount }, (_, i) => STEADY + i),
  ...Array.from({ length: FAST }, (_, i) => FAST_FROM + i),
  ...Array.from({ length: BURST }, (_, i) => BURST_FROM + i)
]
await db.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const device of [...PHONES, ...QUIET]) {
    yield* sql`INSERT INTO recon.shooter_device (device_id, trusted) VALUES (${device}, true)`
    yield* sql`INSERT INTO recon.shooter_push (device_id, format, secret) VALUES (${device}, 'smsforwarder', ${SECRET})`
  }
  yield* sql`INSERT INTO recon.shooter_phone (phone) VALUES (${KB_SENDER}), (${SHINHAN_SENDER})`
}))
// Just before the load, as a merchant's orders come: no ANALYZE after.
const insertDeposits = (indexes: ReadonlyArray<number>) =>
  db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (let from = 0; from < indexes.length; from += 10_000) {
      const chunk = JSON.stringify(indexes.slice(from, from + 10_000).map((i) => ({ name: hangulName(i), amount: amountOf(i) })))
      yield* sql`WITH x AS (SELECT * FROM jsonb_to_recordset(${chunk}::jsonb) AS x(name text, amount bigint)),
          p AS (INSERT INTO recon.player (name) SELECT name FROM x RETURNING id, name)
        INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT p.id, p.name, x.amount FROM p JOIN x ON x.name = p.name`
    }
  }))

const wallet = await startService("wallet", "SVC_WALLET_PORT", { DATABASE_URL: db.url, SVC_INTERNAL_SERVICE_TOKEN_RECON: TOKEN })
const workers: Array<Service> = []
for (let w = 0; w < WORKERS; w++) {
  workers.push(await startService("worker", "SVC_PUSH_PORT", {
    DATABASE_URL: db.url,
    SVC_WORKER_HEARTBEAT_FILE: join(db.dir, `worker-${w}.heartbeat`),
    SVC_INTERNAL_SERVICE_TOKEN_RECON: TOKEN,
    WALLET_SERVICE_URL: wallet.base,
    ADMIN_SERVICE_URL: "http://127.0.0.1:9"
  }))
}
const ready = (await waitFor(`${wallet.base}/health`)) && (await Promise.all(workers.map((w) => waitFor(`${w.base}/health/ready`, 120_000)))).every(Boolean)
if (!ready) {
  report("the services did not start")
  for (const service of [...workers, wallet]) service.child.kill("SIGTERM")
  await db.close()
  process.exit(1)
}
await insertDeposits([...names, ...Array.from({ length: PENDING }, (_, i) => FILLER_FROM + i)])
report(`${names.length.toLocaleString("en")} deposits to match and ${PENDING.toLocaleString("en")} that nothing matches inserted just before the load (no ANALYZE)`)

const serverTicks = () => serverCpuTicks(db)

/** The workers' and the wallet's CPU so far, in clock ticks. */
const servicesTicks = () => [...workers, wallet].reduce((sum, service) => sum + cpuTicks(service.child.pid!), 0)

// The busy account's chained balance, and its minute-precise stamp (Seoul).
let balance = 3_000_000
const stamp = () => {
  const seoul = new Date(Date.now() + 9 * 3_600_000)
  const two = (n: number) => String(n).padStart(2, "0")
  return `${two(seoul.getUTCMonth() + 1)}/${two(seoul.getUTCDate())} ${two(seoul.getUTCHours())}:${two(seoul.getUTCMinutes())}`
}
interface Sms {
  readonly text: string
  readonly sender: string
  /** The phones that forward it. */
  readonly phones: ReadonlyArray<string>
}
const sms = (i: number): Sms => {
  const name = hangulName(i)
  const amount = amountOf(i)
  if (i % 10 === 9) {
    return { text: `[Web발신]\n신한 ${stamp()}\n입금 ${amount.toLocaleString("en")}원\n${name}\n잔액 ${(5_000_000 + i * 1_000).toLocaleString("en")}`, sender: SHINHAN_SENDER, phones: [QUIET[i % 3]!] }
  }
  balance += amount
  return { text: `[Web발신]\n[KB]${stamp()}\n834702**717\n${name}\n입금\n${amount.toLocaleString("en")}\n잔액${balance.toLocaleString("en")}`, sender: KB_SENDER, phones: PHONES }
}

/** Each phone signs with its own timestamp, unique per phone; a resend reuses it. */
const phoneClock = new Map([...PHONES, ...QUIET].map((p) => [p, Date.now() - 60_000]))
const agent = new Agent({ keepAlive: true, maxSockets: 256 })
const tally = { tries: 0, ok: 0, slow: 0, refused: 0, failed: 0, gaveUp: 0, answerMs: [] as Array<number> }
const resetTally = () => Object.assign(tally, { tries: 0, ok: 0, slow: 0, refused: 0, failed: 0, gaveUp: 0, answerMs: [] })
/** One phone delivering one SMS: tries until answered 200 (or GIVE_UP_AFTER tries), each to any worker. */
/** The phone's next signing timestamp (strictly later than its last). */
const nextStamp = (phone: string) => {
  const stamp = phoneClock.get(phone)! + 1
  phoneClock.set(phone, stamp)
  return stamp
}
const deliver = async (message: Sms, phone: string, timestamp: number) => {
  const body = Buffer.from(smsForwarderFormBody({ from: message.sender, content: message.text, orgContent: message.text, timestamp, secret: SECRET }))
  for (let attempt = 0; attempt < GIVE_UP_AFTER; attempt++) {
    const worker = workers[Math.floor(Math.random() * workers.length)]!
    const t0 = performance.now()
    tally.tries++
    const status = await pushTry(worker.port, `/push/${phone}`, body, agent, TRY_TIMEOUT_MS)
    const took = performance.now() - t0
    if (status === -1) tally.slow++
    else if (status === 0) tally.refused++
    if (status === 200) {
      tally.ok++
      tally.answerMs.push(took)
      return
    }
    if (status > 0) tally.failed++
    await sleep(Math.min(250 * 2 ** attempt, 2_000))
  }
  tally.gaveUp++
}
/** One SMS from every phone that forwards it (the second within a few ms), and a resend of one copy `extra` times. */
const send = (i: number, extra = 0): Promise<unknown> => {
  const message = sms(i)
  return Promise.all(message.phones.map(async (phone, k) => {
    if (k > 0) await sleep(Math.random() * 5)
    const timestamp = nextStamp(phone)
    await Promise.all([deliver(message, phone, timestamp), ...Array.from({ length: k === 0 ? extra : 0 }, () => sleep(Math.random() * 2_000).then(() => deliver(message, phone, timestamp)))])
  }))
}

/** When each SMS of these name indexes was approved (epoch ms), once all are (or the time is up). */
const approvedAt = async (indexes: ReadonlyArray<number>, timeoutMs = 300_000): Promise<Map<string, number>> => {
  const until = Date.now() + timeoutMs
  const wanted = indexes.map(hangulName)
  for (;;) {
    const rows = await db.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ name: string; at: string }>`SELECT payer_name AS name, (extract(epoch FROM updated_at) * 1000)::text AS at
        FROM recon.shooter_sms WHERE status = 'approved' AND payer_name IN ${sql.in(wanted)}`
    }))
    if (rows.length >= wanted.length || Date.now() > until) return new Map(rows.map((r) => [r.name, Number(r.at)]))
    await sleep(250)
  }
}

/** `count` SMS from `from` at `rate` per second (extra resends as `extra(i)`): when each was first sent. */
const paced = async (from: number, count: number, rate: number, extra: (i: number) => number = () => 0) => {
  const sentAt = new Map<string, number>()
  const start = performance.now()
  const inFlight: Array<Promise<unknown>> = []
  for (let k = 0; k < count; k++) {
    const wait = start + k * (1000 / rate) - performance.now()
    if (wait > 0) await sleep(wait)
    sentAt.set(hangulName(from + k), performance.timeOrigin + performance.now())
    inFlight.push(send(from + k, extra(from + k)))
  }
  await Promise.all(inFlight)
  return sentAt
}

const lastApproval = (done: Map<string, number>) => Math.max(...done.values())

/**
 * The slowest `share` of these SMS (first sent → approved), their time split at the steps the
 * database records: first sent → stored (the first copy's row), → parsed, → decided (the match
 * pass), → approved (the wallet's answer recorded). Medians of each step.
 */
const stepSplit = async (sentAt: Map<string, number>, done: Map<string, number>, share: number) => {
  const slowest = [...sentAt].filter(([name]) => done.has(name)).sort((a, b) => (done.get(b[0])! - b[1]) - (done.get(a[0])! - a[1]))
    .slice(0, Math.max(1, Math.floor(sentAt.size * share)))
  const rows = await db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ name: string; stored: string; parsed: string; decided: string; approved: string }>`SELECT payer_name AS name,
        (extract(epoch FROM created_at) * 1000)::text AS stored, (extract(epoch FROM match_started_at) * 1000)::text AS parsed,
        (extract(epoch FROM (match_detail->>'decided_at')::timestamptz) * 1000)::text AS decided, (extract(epoch FROM updated_at) * 1000)::text AS approved
      FROM recon.shooter_sms WHERE status = 'approved' AND payer_name IN ${sql.in(slowest.map(([name]) => name))}`
  }))
  const median = (xs: Array<number>) => percentile(xs.sort((a, b) => a - b), 50)
  const at = new Map(slowest)
  const steps = rows.map((r) => [Number(r.stored) - at.get(r.name)!, Number(r.parsed) - Number(r.stored), Number(r.decided) - Number(r.parsed), Number(r.approved) - Number(r.decided)])
  return ["sent → stored", "stored → parsed", "parsed → decided", "decided → approved"].map((what, k) => `${what} ${ms(median(steps.map((s) => s[k]!)))}`).join(", ")
}
const answers = () => {
  const sorted = [...tally.answerMs].sort((a, b) => a - b)
  return `${tally.tries.toLocaleString("en")} tries, webhook → 200 p50 ${ms(percentile(sorted, 50))} p99 ${ms(percentile(sorted, 99))}; ` +
    `${tally.slow} over ${TRY_TIMEOUT_MS / 1000} s, ${tally.refused} refused or reset, ${tally.failed} other answers, ${tally.gaveUp} deliveries given up after ${GIVE_UP_AFTER} tries`
}

// Warm-up.
{
  const done = await approvedAt([...(await paced(WARM, 100, 50)).keys()].map((_, k) => WARM + k), 60_000)
  report(`warm-up: ${done.size} of 100 approved; ${answers()}`)
  if (done.size === 0) {
    for (const service of [...workers, wallet]) service.child.kill("SIGTERM")
    await db.close()
    process.exit(1)
  }
}

// 1. Steady.
{
  resetTally()
  const thirds = [0, 1, 2].map(() => ({ ticks: 0 }))
  const third = Math.floor(steadyCount / 3)
  let t0 = serverTicks()
  const servicesAtStart = servicesTicks()
  const sentAt = new Map<string, number>()
  for (let part = 0; part < 3; part++) {
    const count = part === 2 ? steadyCount - 2 * third : third
    for (const [name, at] of await paced(STEADY + part * third, count, RATE)) sentAt.set(name, at)
    const t1 = serverTicks()
    thirds[part]!.ticks = t1 - t0
    t0 = t1
  }
  const done = await approvedAt(Array.from({ length: steadyCount }, (_, k) => STEADY + k))
  const latencies = [...sentAt].filter(([name]) => done.has(name)).map(([name, at]) => done.get(name)! - at).sort((a, b) => a - b)
  report(`1. steady ${RATE} SMS/s for ${STEADY_SECONDS} s (${steadyCount.toLocaleString("en")} SMS, 90 % of them from both phones): ${answers()}`)
  report(`   webhook → approved: p50 ${ms(percentile(latencies, 50))}, p90 ${ms(percentile(latencies, 90))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(latencies.at(-1) ?? NaN)}; ` +
    `${done.size} of ${steadyCount} approved`)
  report(`   PostgreSQL CPU per SMS by third of the run: ${thirds.map((t, k) => ms((t.ticks * 10) / (k === 2 ? steadyCount - 2 * third : third))).join(", ")}; ` +
    `the services' (workers and wallet) ${ms(((servicesTicks() - servicesAtStart) * 10) / steadyCount)}`)
  report(`   where the time went (medians): all ${await stepSplit(sentAt, done, 1)}; the slowest 1 % ${await stepSplit(sentAt, done, 0.01)}`)
}

{
  const pools = await db.run(Effect.gen(function*() {
    return yield* (yield* SqlClient.SqlClient)<{ name: string; n: string }>`SELECT application_name AS name, count(*)::text AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name LIKE 'recon%' GROUP BY 1 ORDER BY 1`
  }))
  report(`connections of the services after the steady run: ${pools.map((p) => `${p.name} ${p.n}`).join(", ")}`)
}
// 2. pgbench -N on the same server, the services idle.
let tps = NaN
if (BURST > 0) {
  await sleep(3_000)
  tps = (await pgbenchTps(db, 15)).tps
  report(`2. pgbench -N -c 8 -j 2 -T 15 (scale 10), same server, services idle: ${tps.toFixed(0)} tps`)
}

// 3. 200 SMS/s, each delivered 1–3 times.
if (FAST > 0) {
  resetTally()
  const started = performance.timeOrigin + performance.now()
  await paced(FAST_FROM, FAST, 200, () => Math.floor(Math.random() * 2))
  const done = await approvedAt(Array.from({ length: FAST }, (_, k) => FAST_FROM + k))
  report(`3. ${FAST.toLocaleString("en")} SMS at 200/s, each from both phones (90 %), a third also resent: ${answers()}`)
  report(`   ${done.size} approved, ${(done.size / ((lastApproval(done) - started) / 1000)).toFixed(0)} approvals/s (first sent → last approved)`)
}

// 4. A burst from 50 senders.
if (BURST > 0) {
  resetTally()
  const before = serverTicks()
  const servicesBefore = servicesTicks()
  const started = performance.timeOrigin + performance.now()
  let next = 0
  await Promise.all(Array.from({ length: SENDERS }, async () => {
    while (next < BURST) await send(BURST_FROM + next++)
  }))
  const stored = performance.timeOrigin + performance.now()
  const done = await approvedAt(Array.from({ length: BURST }, (_, k) => BURST_FROM + k))
  const endToEnd = done.size / ((lastApproval(done) - started) / 1000)
  report(`4. burst of ${BURST.toLocaleString("en")} SMS from ${SENDERS} senders (each SMS from both phones): answered in ${((stored - started) / 1000).toFixed(1)} s; ${answers()}`)
  report(`   ${done.size} approved, ${endToEnd.toFixed(0)} approvals/s end to end = ${(endToEnd / tps).toFixed(2)} × pgbench tps (target ≥ 0.35); ` +
    `PostgreSQL CPU ${ms(((serverTicks() - before) * 10) / BURST)} per SMS, the services' ${ms(((servicesTicks() - servicesBefore) * 10) / BURST)}; load average ${loadAverage()}`)
}

if (process.env.BENCH_STATS) {
  const top = await db.run(Effect.gen(function*() {
    return yield* (yield* SqlClient.SqlClient)<{ calls: string; total: string; mean: string; query: string }>`SELECT calls::text,
        round(total_exec_time)::text AS total, round(mean_exec_time::numeric, 2)::text AS mean, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 110) AS query
      FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 40`
  }))
  report("where the server's time went (pg_stat_statements, top 40 by total):")
  for (const row of top) report(`   ${row.total.padStart(7)} ms  ${row.calls.padStart(6)} calls  ${row.mean.padStart(8)} ms/call  ${row.query}`)
  const sums = await db.run(Effect.gen(function*() {
    return yield* (yield* SqlClient.SqlClient)<{ calls: string; total: string; statements: string }>`SELECT sum(calls)::text AS calls,
        round(sum(total_exec_time))::text AS total, count(*)::text AS statements FROM pg_stat_statements`
  }))
  report(`   all: ${sums[0]?.calls} calls of ${sums[0]?.statements} statements, ${sums[0]?.total} ms`)
}

// What each index of recon.shooter_sms costs and earns: every status change of an SMS is a new row
// version in each index whose columns or predicate it touches (never a HOT update), and an index
// no statement of the run used is only that cost.
const indexes = await db.run(Effect.gen(function*() {
  return yield* (yield* SqlClient.SqlClient)<{ name: string; scans: string; size: string }>`SELECT indexrelname AS name, idx_scan::text AS scans,
      pg_size_pretty(pg_relation_size(indexrelid)) AS size
    FROM pg_stat_user_indexes WHERE schemaname = 'recon' AND relname = 'shooter_sms' ORDER BY idx_scan, indexrelname`
}))
const [tuples] = await db.run(Effect.gen(function*() {
  return yield* (yield* SqlClient.SqlClient)<{ updates: string; hot: string }>`SELECT n_tup_upd::text AS updates, n_tup_hot_upd::text AS hot
    FROM pg_stat_user_tables WHERE schemaname = 'recon' AND relname = 'shooter_sms'`
}))
report(`recon.shooter_sms: ${tuples?.updates} row updates (${tuples?.hot} HOT); its ${indexes.length} indexes by scans in the whole run: ` +
  indexes.map((i) => `${i.name.replace(/^shooter_sms_/, "")} ${i.scans} (${i.size})`).join(", "))

agent.destroy()
for (const service of [...workers, wallet]) service.child.kill("SIGTERM")
await Promise.all([...workers, wallet].map((s) => s.exited))
await db.close()
