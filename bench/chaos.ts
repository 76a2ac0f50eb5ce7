// The money path under faults (`npm run chaos`; figures printed, nothing asserted): a private
// durable PostgreSQL, the four services as processes (recon, admin, wallet, and 3 workers), and
// 10,000 SMS of one merchant's collection account (its balance chained), each forwarded by its two
// phones within milliseconds and a third of them resent by one, each try through any worker, with
// 20,000 pending deposits that nothing matches inserted just before (statistics stale), at RATE SMS/s
// (default 200), while
// - a worker is SIGKILLed every 2 s (and started again on its port, as an orchestrator would);
// - PostgreSQL is restarted once, 40 % into the load (CHAOS_RESTART=crash: an immediate shutdown,
//   as a crash, losing what was committed but not yet flushed to the WAL; else a fast shutdown);
// - a proxy in front of the real wallet_service answers 10 % of the calls 503 (not forwarded), holds
//   5 % past the worker's 5 s timeout (forwarded: the wallet commits, the answer never arrives),
//   and cuts 3 % after the wallet committed (the connection closed instead of the answer).
// Phones resend what was not answered 200 (after 250 ms, doubling to 2 s, to any worker; a try
// times out after 10 s), and give a delivery up after 25 tries, as SmsForwarder does. Then,
// from the database: nothing lost (every SMS approved, its deposit credited), nothing credited
// twice, nothing stuck; credit latency (first delivery sent → the wallet's credit) p50/p90/p99;
// the drain time (the last webhook answered → the last credit); and every balance fact placed,
// those of killed workers included.
// node bench/chaos.ts — CHAOS_SMS (default 10,000), CHAOS_RATE (default 200/s), BENCH_PG=15 for
// Debian's PostgreSQL 15 (else the embedded 18); RECON_DIR runs another checkout's built services (before/after).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess } from "node:child_process"
import { createServer, request as httpRequest, Agent } from "node:http"
import { cpus } from "node:os"
import { join } from "node:path"
import { freePort } from "../src/db/EmbeddedPostgres.ts"
import { smsForwarderFormBody } from "../src/domain/SmsForwarder.ts"
import {
  arrangeDeposits,
  benchDatabase,
  DEPOSIT_SENDER,
  depositText,
  hangulName,
  loadAverage,
  percentile,
  pushTry,
  reconEntry,
  type Service,
  tryErrors,
  sleep,
  startService,
  waitFor
} from "./support.ts"

const SMS = Number(process.env.CHAOS_SMS ?? 10_000)
const RATE = Number(process.env.CHAOS_RATE ?? 200)
const FILLER = Number(process.env.CHAOS_PENDING ?? 20_000)
const GIVE_UP_AFTER = 25
const WORKERS = 3
/** The merchant's two phones, forwarding the same account. */
const DEVICES = 2
const KILL_EVERY_MS = 2_000
const RECON_TOKEN = "chaos-recon-token-0123456789"
const ADMIN_TOKEN = "chaos-admin-token-0123456789"
const SECRET = "chaos-secret"
/** Longer than the worker's wallet timeout (5 s): the worker gives up first. */
const HOLD_MS = 8_000

const report = (line: string) => console.log(line)
const db = await benchDatabase("chaos", { persistent: true })
report(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, ${db.server}; services: ${reconEntry()}; load average ${loadAverage()}`)
if (db.restart === undefined) {
  report("chaos needs a server of its own (it restarts it): run without DATABASE_URL")
  process.exit(2)
}

await arrangeDeposits(db, { prefix: "phone", devices: DEVICES, secret: SECRET, names: Array.from({ length: SMS }, (_, i) => i) })
// The day's other orders, inserted just before the load with no ANALYZE after: nothing matches them.
await db.run(Effect.gen(function*() {
  yield* (yield* SqlClient.SqlClient)`WITH p AS (INSERT INTO recon.player (name) SELECT 'other-' || g FROM generate_series(1, ${FILLER}) AS g RETURNING id, name)
    INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT id, name, 10000 FROM p`
}))

// wallet_service, and the fault-injecting proxy in front of it.
const wallet = await startService("wallet", "SVC_WALLET_PORT", { DATABASE_URL: db.url, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN })
const faults = { forwarded: 0, refused: 0, held: 0, cut: 0 }
const walletAgent = new Agent({ keepAlive: true })
const proxy = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const roll = Math.random()
    if (roll < 0.10) {
      faults.refused++
      res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ status: 503, msg: "unavailable", data: null }))
      return
    }
    const fate = roll < 0.15 ? "held" : roll < 0.18 ? "cut" : "forwarded"
    faults[fate]++
    const body = Buffer.concat(chunks)
    const { host: _host, ...headers } = req.headers
    const forward = httpRequest(`${wallet.base}${req.url}`, { method: req.method, agent: walletAgent, headers }, (answer) => {
      const parts: Array<Buffer> = []
      answer.on("data", (chunk: Buffer) => parts.push(chunk))
      answer.on("end", () => {
        const send = () => {
          if (!res.destroyed) res.writeHead(answer.statusCode ?? 502, { "content-type": "application/json" }).end(Buffer.concat(parts))
        }
        if (fate === "cut") res.socket?.destroy()
        else if (fate === "held") setTimeout(send, HOLD_MS)
        else send()
      })
    })
    forward.on("error", () => res.destroyed || res.writeHead(502).end())
    forward.end(body)
  })
})
const proxyPort = await freePort()
await new Promise<void>((resolve) => proxy.listen(proxyPort, "127.0.0.1", resolve))
const proxyUrl = `http://127.0.0.1:${proxyPort}`

const recon = await startService("recon", "SVC_RECON_PORT", { DATABASE_URL: db.url, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN })
const admin = await startService("admin", "SVC_ADMIN_PORT", {
  DATABASE_URL: db.url, RECON_SERVICE_URL: recon.base, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN
})

// The workers, each on its own port for good: a killed one is started again on the same port.
const workerPorts = await Promise.all(Array.from({ length: WORKERS }, () => freePort()))
const startWorker = (slot: number) =>
  startService("worker", "SVC_PUSH_PORT", {
    DATABASE_URL: db.url,
    SVC_WORKER_HEARTBEAT_FILE: join(db.dir, `worker-${slot}.heartbeat`),
    SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN,
    WALLET_SERVICE_URL: proxyUrl,
    ADMIN_SERVICE_URL: admin.base
  }, process.env.CHAOS_LOGS ? join(db.dir, `worker-${slot}.log`) : false, workerPorts[slot])
const workers: Array<Service> = await Promise.all(workerPorts.map((_, slot) => startWorker(slot)))
for (const service of [wallet, recon, admin]) await waitFor(`${service.base}/health`, 120_000)
for (const worker of workers) await waitFor(`${worker.base}/health/ready`, 120_000)
report(`services ready: wallet, recon, admin, ${WORKERS} workers; load average ${loadAverage()}`)

// The load: SMS i at its slot, each delivery from a phone of its own, retried until answered 200.
const phoneAgent = new Agent({ keepAlive: true, maxSockets: 64 })
const stamps = Array.from({ length: DEVICES }, (_, d) => Date.now() - 60_000 + d)
const firstSent: Array<number> = new Array(SMS)
const webhookAnswers = new Map<string, number>()
let givenUp = 0
const storedNever = new Set<number>()
/** Phone `device` delivering SMS i, signed with `timestamp` (a resend reuses it): true once answered 200. */
const deliver = async (i: number, device: number, timestamp: number) => {
  const text = depositText(hangulName(i), 10_000, 1_000_000 + 10_000 * (i + 1))
  const body = Buffer.from(smsForwarderFormBody({ from: DEPOSIT_SENDER, content: text, orgContent: text, timestamp, secret: SECRET }))
  for (let attempt = 0; attempt < GIVE_UP_AFTER; attempt++) {
    const port = workerPorts[Math.floor(Math.random() * WORKERS)]!
    const status = await pushTry(port, `/push/phone-${device}`, body, phoneAgent, 10_000)
    webhookAnswers.set(String(status), (webhookAnswers.get(String(status)) ?? 0) + 1)
    if (status === 200) return true
    await sleep(Math.min(250 * 2 ** attempt, 2_000))
  }
  givenUp++
  return false
}

let kills = 0
/** Each restarted worker: spawn → its port answering (ms). */
const answeringAfter: Array<number> = []
/** Restarted workers that never answered: how they ended. */
const startsFailed: Array<string> = []
let loadDone = false
let restart = { at: 0, seconds: 0 }
const killer = (async () => {
  let slot = 0
  while (!loadDone) {
    await sleep(KILL_EVERY_MS)
    if (loadDone) break
    const victim = workers[slot]!
    victim.child.kill("SIGKILL")
    await victim.exited
    kills++
    const spawned = Date.now()
    workers[slot] = await startWorker(slot)
    const restarted = workers[slot]!
    void Promise.race([waitFor(`${restarted.base}/health/live`, 60_000, 20), restarted.exited.then((code) => `exited ${code}`)]).then((up) =>
      up === true ? answeringAfter.push(Date.now() - spawned) : startsFailed.push(`${up === false ? "not answering in 60 s" : up} after ${Date.now() - spawned} ms (spawned ${spawned - started} ms into the load)`))
    slot = (slot + 1) % WORKERS
  }
})()

// The killer's first kill comes KILL_EVERY_MS after this.
/** How PostgreSQL is restarted: a fast shutdown (default), or an immediate one, as a crash. */
const RESTART = process.env.CHAOS_RESTART === "crash" ? "crash" : "clean"
const started = Date.now()
const deliveries: Array<Promise<void>> = []
let delivered = 0
for (let i = 0; i < SMS; i++) {
  const wait = started + (i * 1000) / RATE - Date.now()
  if (wait > 0) await sleep(wait)
  if (i === Math.floor(SMS * 0.4)) {
    restart.at = Date.now()
    void db.restart(RESTART).then(() => (restart.seconds = (Date.now() - restart.at) / 1000))
  }
  firstSent[i] = Date.now()
  // Both phones within a few ms, each with its own timestamp; a third of the time one resends its copy.
  const signed = stamps.map((_, d) => (stamps[d]! += 1))
  const copies = [0, 1, ...(Math.random() < 1 / 3 ? [0] : [])]
  delivered += copies.length
  deliveries.push(Promise.all(copies.map((device, k) =>
    sleep(k === 0 ? 0 : k === 1 ? Math.random() * 5 : Math.random() * 2_000).then(() => deliver(i, device, signed[device]!))
  )).then((answered) => void (answered.some(Boolean) || storedNever.add(i))))
}
await Promise.all(deliveries)
const loadEnd = Date.now()
loadDone = true
await killer
report(`load: ${SMS.toLocaleString("en")} SMS in ${delivered.toLocaleString("en")} deliveries over ${((loadEnd - started) / 1000).toFixed(1)} s; ` +
  `webhook answers ${[...webhookAnswers].map(([status, n]) => `${status === "0" ? "refused or reset" : status === "-1" ? "no answer in 10 s" : status} × ${n}`).join(", ")} ` +
  `(${[...tryErrors].map(([code, n]) => `${code} × ${n}`).join(", ")}); ` +
  `${givenUp} deliveries given up after ${GIVE_UP_AFTER} tries (${storedNever.size} SMS whose every copy was given up); ${kills} workers SIGKILLed ` +
  `(spawn → answering p50 ${percentile(answeringAfter.sort((a, b) => a - b), 50)} ms, max ${answeringAfter.at(-1)} ms; ` +
  `${startsFailed.length === 0 ? "every one answered" : `${startsFailed.length} never answered: ${startsFailed.slice(0, 5).join("; ")}`}); PostgreSQL ${RESTART === "crash" ? "crashed (immediate shutdown) and restarted" : "restarted"} ${((restart.at - started) / 1000).toFixed(0)} s in (down ${restart.seconds.toFixed(1)} s); ` +
  `wallet calls: ${faults.forwarded} forwarded, ${faults.refused} refused 503, ${faults.held} held, ${faults.cut} cut after the commit; load average ${loadAverage()}`)

// Drain: until every SMS is approved (or 5 minutes).
const countApproved = () =>
  db.run(Effect.gen(function*() {
    const [row] = yield* (yield* SqlClient.SqlClient)<{ n: bigint }>`SELECT count(*) AS n FROM recon.shooter_sms WHERE status = 'approved'`
    return Number(row!.n)
  }))
while ((await countApproved()) < SMS && Date.now() - loadEnd < 300_000) await sleep(200)

const result = await db.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const statuses = yield* sql<{ status: string; n: bigint }>`SELECT status, count(*) AS n FROM recon.shooter_sms GROUP BY status ORDER BY status`
  const [checks] = yield* sql<Record<string, string>>`SELECT
    (SELECT count(*) FROM recon.shooter_sms WHERE status <> 'duplicate')::text AS originals,
    (SELECT count(*) FROM recon.deposit WHERE status = 'approved')::text AS deposits_approved,
    (SELECT count(*) FROM recon.deposit WHERE status = 'pending')::text AS deposits_pending,
    (SELECT count(*) FROM wallet.ledger)::text AS ledger_rows,
    (SELECT count(DISTINCT deposit_id) FROM wallet.ledger)::text AS deposits_credited,
    (SELECT count(*) FROM recon.deposit AS d WHERE d.status = 'approved' AND NOT EXISTS (
      SELECT 1 FROM recon.shooter_sms AS s WHERE s.id = d.sms_id AND s.deposit_id = d.id AND s.payer_name = d.from_bank_owner))::text AS wrong_sms,
    (SELECT coalesce(sum(amount), 0) FROM wallet.ledger)::text AS ledger_total,
    (SELECT coalesce(sum(balance), 0) FROM wallet.balance)::text AS balance_total,
    (SELECT count(*) FROM recon.shooter_sms WHERE match_detail -> 'wallet' ->> 'answer' = 'replayed')::text AS replayed,
    (SELECT (extract(epoch FROM max(approved_at)) * 1000)::text FROM recon.deposit) AS last_credit`
  const credits = yield* sql<{ name: string; at: string; stored: string; attempts: number }>`SELECT d.from_bank_owner AS name,
      (extract(epoch FROM d.approved_at) * 1000)::text AS at, (extract(epoch FROM s.created_at) * 1000)::text AS stored, s.match_attempts AS attempts
    FROM recon.deposit AS d JOIN recon.shooter_sms AS s ON s.id = d.sms_id WHERE d.status = 'approved'`
  return { statuses, checks: checks!, credits }
}))
const { statuses, checks, credits } = result
const index = new Map(Array.from({ length: SMS }, (_, i) => [hangulName(i), i]))
const timed = credits.map((c) => {
  const sent = firstSent[index.get(c.name)!]!
  return { total: Number(c.at) - sent, stored: Number(c.stored) - sent, credited: Number(c.at) - Number(c.stored), attempts: Number(c.attempts) }
}).sort((a, b) => a.total - b.total)
const latencies = timed.map((t) => t.total)
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const stuck = statuses.filter((s) => !["approved", "duplicate"].includes(s.status))
report(`statuses: ${statuses.map((s) => `${s.status} ${s.n}`).join(", ")}`)
report(`nothing lost: ${Number(checks.originals) === SMS && Number(checks.deposits_approved) === SMS ? "yes" : "NO"} ` +
  `(${checks.originals} SMS stored once, ${checks.deposits_approved} of ${SMS} deposits approved, ${checks.deposits_pending} pending)`)
report(`nothing credited twice: ${Number(checks.ledger_rows) === Number(checks.deposits_credited) && checks.ledger_total === checks.balance_total && checks.wrong_sms === "0" ? "yes" : "NO"} ` +
  `(${checks.ledger_rows} ledger rows for ${checks.deposits_credited} deposits, ledger ${checks.ledger_total} = balances ${checks.balance_total}, ${checks.wrong_sms} deposits with another SMS; ${checks.replayed} answers were replays)`)
report(`nothing stuck: ${stuck.length === 0 ? "yes" : `NO (${stuck.map((s) => `${s.status} ${s.n}`).join(", ")})`}`)
report(`credit latency (first delivery sent → credited), ${latencies.length} SMS: p50 ${seconds(percentile(latencies, 50))}, p90 ${seconds(percentile(latencies, 90))}, ` +
  `p99 ${seconds(percentile(latencies, 99))}, max ${seconds(latencies.at(-1) ?? NaN)} (target p99 < 10 s)`)
// Where the slowest 1 % spent their time: reaching the database (refused tries, a phone's backoff)
// or after it (a killed worker's lease, a held or refused wallet call and its backoff).
const slowest = timed.slice(Math.floor(timed.length * 0.99))
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN
report(`the slowest 1 % (${slowest.length} SMS): first sent → stored median ${seconds(median(slowest.map((t) => t.stored)))}, stored → credited median ` +
  `${seconds(median(slowest.map((t) => t.credited)))}; wallet calls made for them: ${[...slowest.reduce((m, t) => m.set(t.attempts, (m.get(t.attempts) ?? 0) + 1), new Map<number, number>())].sort(([a], [b]) => a - b).map(([n, k]) => `${n} × ${k}`).join(", ")}`)
report(`drain after the load (last webhook answered → last credit): ${seconds(Number(checks.last_credit) - loadEnd)} (target < 10 s); load average ${loadAverage()}`)

// Balance continuity, off the money path: facts a killed worker wrote but never placed wait in
// balance_pending until a pass of another worker places them (30 s after their write).
const balanceFacts = () =>
  db.run(Effect.gen(function*() {
    const [row] = yield* (yield* SqlClient.SqlClient)<{ pending: bigint; unplaced: bigint; with_fact: bigint }>`SELECT
      (SELECT count(*) FROM recon.balance_pending) AS pending,
      (SELECT count(*) FROM recon.shooter_sms AS s WHERE s.parse_detail -> 'slots' ->> 'amount' IS NOT NULL) AS with_fact,
      (SELECT count(*) FROM recon.shooter_sms AS s WHERE s.parse_detail -> 'slots' ->> 'amount' IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM recon.balance_entry AS e WHERE e.sms_id = s.id)) AS unplaced`
    return { pending: Number(row!.pending), unplaced: Number(row!.unplaced), withFact: Number(row!.with_fact) }
  }))
const creditedAt = Date.now()
const atCredit = await balanceFacts()
let facts = atCredit
while ((facts.pending > 0 || facts.unplaced > 0) && Date.now() - creditedAt < 90_000) {
  await sleep(1000)
  facts = await balanceFacts()
}
report(`balance facts: ${atCredit.pending} still pending when the last SMS was approved (their workers killed before placing them); ` +
  `${facts.unplaced === 0 && facts.pending === 0 ? `all ${facts.withFact} placed ${seconds(Date.now() - creditedAt)} later` : `NOT all placed after 90 s (${facts.unplaced} unplaced, ${facts.pending} pending)`}`)

// CHAOS_CHECK=1 (CI): the correctness verdicts decide the exit code; the figures stay figures.
const verdicts = {
  "every SMS stored and acknowledged": storedNever.size === 0 && Number(checks.originals) === SMS,
  "0 deliveries given up": givenUp === 0,
  "nothing lost": Number(checks.deposits_approved) === SMS,
  "nothing credited twice": Number(checks.ledger_rows) === Number(checks.deposits_credited) && checks.ledger_total === checks.balance_total && checks.wrong_sms === "0",
  "nothing stuck": stuck.length === 0
}
const failed = Object.entries(verdicts).filter(([, ok]) => !ok).map(([name]) => name)
report(failed.length === 0 ? "verdict: all held" : `verdict: FAILED: ${failed.join("; ")}`)

phoneAgent.destroy()
walletAgent.destroy()
proxy.close()
const all: Array<{ child: ChildProcess; exited: Promise<number | null> }> = [...workers, admin, recon, wallet]
for (const service of all) service.child.kill("SIGTERM")
await Promise.all(all.map((service) => service.exited))
if (process.env.CHAOS_KEEP) report(`database kept: ${db.url} (${db.dir})`)
else await db.close()
if (process.env.CHAOS_CHECK && failed.length > 0) process.exit(1)
