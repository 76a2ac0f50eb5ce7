// Benchmark of the money path end to end (figures printed, nothing asserted): signed SmsForwarder
// webhooks into `worker`, parsed, matched and approved through `wallet`, both as processes
// (`node dist/main.js …`) on a private PostgreSQL, measured from outside:
// 1. the commit floor: 6 sequential single-row commits from one client on the same server;
// 2. webhook sent → SMS `approved` at a steady 100 SMS/s (STEADY seconds, default 30);
// 3. `pgbench -N` tps on the same server, the services idle;
// 4. a burst of BURST webhooks (default 20,000) from 50 concurrent senders: approvals/s end to
//    end and sustained (between 10 % and 90 % of the approvals), ÷ the pgbench tps; CPU shares;
// 5. the worker's RSS idle (30 s after ready), right after the burst and 30 s later;
// 6. matching and the wallet alone: a backlog of BACKLOG parsed SMS (default 20,000), approvals/s.
// node bench/pipeline.ts — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server
// (durable, as in production). RECON_DIR=/path/to/checkout runs another checkout's built services (before/after).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { spawnSync } from "node:child_process"
import { Agent, request as httpRequest } from "node:http"
import { cpus } from "node:os"
import { join } from "node:path"
import { smsForwarderFormBody } from "../src/domain/SmsForwarder.ts"
import {
  arrangeDeposits,
  benchDatabase,
  cpuTicks,
  DEPOSIT_SENDER,
  depositText,
  hangulName,
  loadAverage,
  percentile,
  pgbenchTps,
  reconEntry,
  rssOf,
  sleep,
  startService,
  waitFor
} from "./support.ts"

const TOKEN = "bench-recon-token-0123456789"
const SECRET = "bench-secret"
const DEVICES = 10
const RATE = 100
const STEADY_SECONDS = Number(process.env.STEADY ?? 30)
const BURST = Number(process.env.BURST ?? 20_000)
const SENDERS = 50
/** Name ranges of the phases (hangulName indexes), far apart. */
const WARM = 0
const STEADY = 10_000
const BURST_FROM = 100_000
const BACKLOG = Number(process.env.BACKLOG ?? 20_000)

const db = await benchDatabase("pipeline", { persistent: true })
const report = (line: string) => console.log(line)
const ms = (n: number) => `${n.toFixed(1)} ms`
report(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, ${db.embedded ? "embedded PostgreSQL (durable: fsync on)" : "DATABASE_URL"}; services: ${reconEntry()}; load average ${loadAverage()}`)

const steadyCount = RATE * STEADY_SECONDS
await arrangeDeposits(db, {
  prefix: "bench",
  devices: DEVICES,
  secret: SECRET,
  names: [...Array.from({ length: 200 }, (_, i) => WARM + i), ...Array.from({ length: steadyCount }, (_, i) => STEADY + i),
    ...Array.from({ length: BURST }, (_, i) => BURST_FROM + i)]
})
await db.run(Effect.gen(function*() {
  yield* (yield* SqlClient.SqlClient)`CREATE TABLE public.bench_commit (id serial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())`
}))

const wallet = await startService("wallet", "SVC_WALLET_PORT", { DATABASE_URL: db.url, SVC_INTERNAL_SERVICE_TOKEN_RECON: TOKEN })
const worker = await startService("worker", "SVC_PUSH_PORT", {
  DATABASE_URL: db.url,
  SVC_WORKER_HEARTBEAT_FILE: join(db.dir, "worker.heartbeat"),
  SVC_INTERNAL_SERVICE_TOKEN_RECON: TOKEN,
  WALLET_SERVICE_URL: wallet.base,
  ADMIN_SERVICE_URL: "http://127.0.0.1:9"
})
if (!(await waitFor(`${wallet.base}/health`)) || !(await waitFor(`${worker.base}/health/ready`, 120_000))) {
  const state = (service: typeof wallet) => service.child.exitCode === null ? "running, not ready" : `exited with code ${service.child.exitCode}`
  report(`the services did not start: wallet ${state(wallet)}, worker ${state(worker)}`)
  for (const service of [worker, wallet]) service.child.kill("SIGTERM")
  await Promise.all([worker.exited, wallet.exited])
  await db.close()
  process.exit(1)
}

let stamp = Date.now()
const agent = new Agent({ keepAlive: true, maxSockets: SENDERS })
/** One signed webhook for the SMS of name index `i`: the SMS id, and when it was sent (epoch ms, sub-ms). */
const push = (i: number) => {
  // Phone i % DEVICES forwards its own account's messages in order: each balance is the last one
  // plus this deposit, as a bank prints it (no gap in balance continuity).
  const text = depositText(hangulName(i), 10_000, 1_000_000 + 10_000 * (Math.floor(i / DEVICES) + 1))
  const device = `bench-${i % DEVICES}`
  // Unique per device: a signature seen with another message would be a replay.
  const body = Buffer.from(smsForwarderFormBody({ from: DEPOSIT_SENDER, content: text, orgContent: text, timestamp: stamp++, secret: SECRET }))
  const sentAt = performance.timeOrigin + performance.now()
  return new Promise<{ readonly smsId: number; readonly sentAt: number }>((resolve, reject) => {
    const request = httpRequest({ host: "127.0.0.1", port: worker.port, path: `/push/${device}`, method: "POST", agent, headers: {
      "content-type": "application/x-www-form-urlencoded",
      "content-length": body.length
    } }, (response) => {
      let answer = ""
      response.on("data", (chunk) => (answer += chunk))
      response.on("end", () =>
        response.statusCode === 200 ? resolve({ smsId: JSON.parse(answer).data.sms_id, sentAt }) : reject(new Error(`push ${response.statusCode}: ${answer}`)))
    })
    request.on("error", reject)
    request.end(body)
  })
}

interface Approved {
  /** The ingest statement's transaction (the SMS row's created_at), the wallet's (the deposit's approved_at), the answer recorded (updated_at); epoch ms. */
  readonly stored: number
  readonly credited: number
  readonly at: number
  /**
   * Between them: the match pass (match_detail.decided_at) and the wallet's answer received
   * (match_detail.wallet.at), on the worker's clock (the same machine's). parse_loop's write leaves
   * no time of its own: its balance entry is placed after the match kick, off the money path.
   */
  readonly decided: number
  readonly answered: number
}

/** When each SMS was stored, credited and recorded approved, once all of them are approved. */
const approvedAt = async (ids: ReadonlyArray<number>, timeoutMs = 600_000): Promise<Map<number, Approved>> => {
  const until = Date.now() + timeoutMs
  const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::text`
  while (Date.now() < until) {
    const rows = await db.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ id: bigint; stored: string; credited: string; at: string; decided: string; answered: string }>`SELECT s.id,
          ${sql.literal(ms("s.created_at"))} AS stored, ${sql.literal(ms("d.approved_at"))} AS credited, ${sql.literal(ms("s.updated_at"))} AS at,
          ${sql.literal(ms("(s.match_detail->>'decided_at')::timestamptz"))} AS decided,
          ${sql.literal(ms("(s.match_detail->'wallet'->>'at')::timestamptz"))} AS answered
        FROM recon.shooter_sms AS s JOIN recon.deposit AS d ON d.id = s.deposit_id
        WHERE s.id IN ${sql.in(ids)} AND s.status = 'approved'`
    }))
    if (rows.length === ids.length) {
      return new Map(rows.map((r) => [Number(r.id), {
        stored: Number(r.stored),
        credited: Number(r.credited),
        at: Number(r.at),
        decided: Number(r.decided),
        answered: Number(r.answered)
      }]))
    }
    await sleep(200)
  }
  throw new Error("not every SMS was approved in time")
}

/** `count` webhooks at `rate` per second: their SMS ids and send times. */
const paced = async (from: number, count: number, rate: number) => {
  const sent: Array<{ readonly smsId: number; readonly sentAt: number }> = []
  const start = performance.now()
  const inFlight: Array<Promise<void>> = []
  for (let k = 0; k < count; k++) {
    const wait = start + k * (1000 / rate) - performance.now()
    if (wait > 0) await sleep(wait)
    inFlight.push(push(from + k).then((s) => void sent.push(s)))
  }
  await Promise.all(inFlight)
  return sent
}

// 1. The commit floor: 6 single-row commits one after another, 200 times.
const floor = await db.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const samples: Array<number> = []
  for (let i = 0; i < 220; i++) {
    const t0 = performance.now()
    for (let k = 0; k < 6; k++) yield* sql`INSERT INTO public.bench_commit DEFAULT VALUES`
    if (i >= 20) samples.push(performance.now() - t0)
  }
  return samples.sort((a, b) => a - b)
}))
const floorP50 = percentile(floor, 50)
report(`commit floor (6 sequential single-row commits, one client, 200 runs): p50 ${ms(floorP50)}, p99 ${ms(percentile(floor, 99))}`)
await sleep(30_000)
const idleRss = rssOf(worker.child.pid!)
report(`worker RSS idle (30 s after ready): ${idleRss.toFixed(1)} MB`)

// 2. Webhook → approved at a steady rate, after a warm-up.
await approvedAt((await paced(WARM, 200, RATE)).map((s) => s.smsId))
{
  report(`load average before the steady run: ${loadAverage()}`)
  const sent = await paced(STEADY, steadyCount, RATE)
  const done = await approvedAt(sent.map((s) => s.smsId))
  const sorted = (f: (s: (typeof sent)[number], a: Approved) => number) => sent.map((s) => f(s, done.get(s.smsId)!)).sort((a, b) => a - b)
  const latencies = sorted((s, a) => a.at - s.sentAt)
  report(`webhook → approved at a steady ${RATE} SMS/s for ${STEADY_SECONDS} s (${steadyCount} SMS): p50 ${ms(percentile(latencies, 50))}, ` +
    `p90 ${ms(percentile(latencies, 90))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(latencies.at(-1)!)}; ` +
    `p50 = ${(percentile(latencies, 50) / floorP50).toFixed(2)} × the commit floor (target p99 < 15 ms, p50 ≤ 2 ×)`)
  // Where the time goes (the three times are the transactions' starts, on the server's clock).
  const part = (label: string, values: ReadonlyArray<number>) => `${label} p50 ${ms(percentile(values, 50))} p99 ${ms(percentile(values, 99))}`
  report(`  of which: ${part("sent → stored", sorted((s, a) => a.stored - s.sentAt))}; ${part("stored → credited (parse, match, wallet)", sorted((_, a) => a.credited - a.stored))}; ` +
    `${part("credited → recorded", sorted((_, a) => a.at - a.credited))}`)
  report(`  by stage: ${part("stored → the match pass (parse_loop's write included)", sorted((_, a) => a.decided - a.stored))}; ` +
    `${part("→ the wallet's transaction", sorted((_, a) => a.credited - a.decided))}; ${part("→ its answer in the worker", sorted((_, a) => a.answered - a.credited))}; ` +
    `${part("→ recorded", sorted((_, a) => a.at - a.answered))}`)
}

// 3. pgbench -N (simple-update TPC-B, 8 clients, 20 s) on the same server while the services idle.
const bench = await pgbenchTps(db, 20)
const tps = bench.tps
report(Number.isNaN(tps) ? `pgbench: not run (${bench.why})` : `pgbench -N -c 8 -j 2 -T 20 (scale 10), same server: ${tps.toFixed(0)} tps; load average ${loadAverage()}`)

// 4. A burst from 50 concurrent senders.
{
  const postgresPids = () => spawnSync("pgrep", ["-f", "postgres"], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).map(Number)
  const postgresBefore = new Map(postgresPids().map((pid) => [pid, cpuTicks(pid)]))
  const ticks = () => ({
    worker: cpuTicks(worker.child.pid!),
    wallet: cpuTicks(wallet.child.pid!),
    // Backends that started during the burst count from zero; those that ended are not seen.
    postgres: postgresPids().reduce((sum, pid) => sum + cpuTicks(pid) - (postgresBefore.get(pid) ?? 0), 0),
    bench: cpuTicks(process.pid)
  })
  const before = { ...ticks(), postgres: 0 }
  const started = performance.timeOrigin + performance.now()
  const sent: Array<number> = []
  let next = 0
  await Promise.all(Array.from({ length: SENDERS }, async () => {
    while (next < BURST) {
      const i = next++
      sent.push((await push(BURST_FROM + i)).smsId)
    }
  }))
  const ingested = performance.timeOrigin + performance.now()
  const done = [...(await approvedAt(sent)).values()].map((a) => a.at).sort((a, b) => a - b)
  const finished = performance.timeOrigin + performance.now()
  const after = ticks()
  const seconds = (done.at(-1)! - started) / 1000
  const endToEnd = BURST / seconds
  const sustained = (0.8 * BURST) / ((percentile(done, 90) - percentile(done, 10)) / 1000)
  report(`burst of ${BURST.toLocaleString("en")} webhooks from ${SENDERS} senders: stored in ${((ingested - started) / 1000).toFixed(1)} s ` +
    `(${(BURST / ((ingested - started) / 1000)).toFixed(0)} SMS/s); all approved ${seconds.toFixed(1)} s after the first was sent: ` +
    `${endToEnd.toFixed(0)} approvals/s end to end, ${sustained.toFixed(0)}/s sustained (10 %–90 % of the approvals)`)
  report(`approvals/s ÷ pgbench -N tps: ${(endToEnd / tps).toFixed(2)} end to end, ${(sustained / tps).toFixed(2)} sustained (target ≥ 0.35, goal 0.5)`)
  const wall = (finished - started) / 1000
  const share = (name: keyof typeof before) => `${name} ${((after[name] - before[name]) / wall).toFixed(0)} %`
  report(`CPU during the burst (of one core): ${share("worker")}, ${share("wallet")}, ${share("postgres")}, ${share("bench")} (the load generator); load average ${loadAverage()}`)
  report(`worker RSS right after the burst: ${rssOf(worker.child.pid!).toFixed(1)} MB`)
  await sleep(30_000)
  report(`worker RSS 30 s after the burst: ${rssOf(worker.child.pid!).toFixed(1)} MB (idle before: ${idleRss.toFixed(1)} MB)`)
}

// 6. A backlog of parsed SMS (as parse_loop leaves them) against as many deposits, the loop told by NOTIFY.
{
  await db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`WITH p AS (INSERT INTO recon.player (name) SELECT 'backlog-' || g FROM generate_series(1, ${BACKLOG}) AS g RETURNING id, name)
      INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT id, name, 10000 FROM p`
    yield* sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount)
      SELECT 'bench', ${DEPOSIT_SENDER}, 'backlog-' || g, 'backlog-' || g, now(), 'parsed', '신한', 'backlog-' || g, 10000
      FROM generate_series(1, ${BACKLOG}) AS g`
  }))
  // The deposits' own NOTIFY may have started the loop already: the clock starts with the SMS.
  const started = performance.now()
  await db.run(Effect.gen(function*() {
    yield* (yield* SqlClient.SqlClient)`SELECT pg_notify('recon_changes', 'shooter_sms')`
  }))
  let approved = 0
  while (approved < BACKLOG) {
    await sleep(200)
    approved = await db.run(Effect.gen(function*() {
      const [row] = yield* (yield* SqlClient.SqlClient)<{ n: bigint }>`SELECT count(*) AS n FROM recon.shooter_sms WHERE payer_name LIKE 'backlog-%' AND status = 'approved'`
      return Number(row!.n)
    }))
  }
  const rate = BACKLOG / ((performance.now() - started) / 1000)
  report(`matching and the wallet alone: a backlog of ${BACKLOG.toLocaleString("en")} parsed SMS against as many deposits, approved at ${rate.toFixed(0)}/s = ` +
    `${(rate / tps).toFixed(2)} × pgbench -N tps; load average ${loadAverage()}`)
}

agent.destroy()
for (const service of [worker, wallet]) service.child.kill("SIGTERM")
await Promise.all([worker.exited, wallet.exited])
await db.close()
