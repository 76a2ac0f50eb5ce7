// Benchmark of balance continuity on a merchant's busy account (issue 34; figures printed, nothing
// asserted): N messages (100,000 by default; BALANCE_BENCH_N) of one KB account at 100 SMS/s,
// printed times in minutes, forwarded by two phones (each message from both, the second 1.5 s
// later); 1 % withheld (neither phone's copy arrives) and 0.5 % delivered late (both copies 2 to
// 60 s late, after later messages). The placer is driven directly against the real database, the
// way parse_loop's placer calls it (BalanceStore.record on what 50 ms of traffic brought, then
// BalanceStore.announce as a pass does every 5 s), on a clock that follows the traffic's time.
// The push webhook and parse_loop in front of it are left out: at 200 pushes a second for 1,000 s
// this machine (2 shared cores) would measure the ingest path, not placement.
// Printed: open gaps at the end against the withheld messages (false gaps: open gaps no withheld
// message explains), balance.gap events (alerts) for gaps a late message closed, the account's
// last balance, and per 10,000 messages the PostgreSQL execution time per message
// (pg_stat_statements) and the wall time per message.
// node bench/balances.ts — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
import { Clock, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { cpus } from "node:os"
import { BalanceStore } from "../src/db/BalanceStore.ts"
import { pgLayer } from "../src/db/Database.ts"
import type { BalanceFact } from "../src/domain/BalanceSequence.ts"
import { benchDatabase, loadAverage } from "./support.ts"

const N = Number(process.env.BALANCE_BENCH_N ?? 100_000)
const SEGMENT = 10_000
const RATE_MS = 10 // 100 SMS a second
const BATCH_MS = 50 // the placer places what 50 ms brought
const ANNOUNCE_EVERY_MS = 5_000 // a parse_loop pass
const GRACE_S = 120
const T0 = Date.parse("2026-11-02T00:00:00Z")
const ACCOUNT = "902002**3355"

// Persistent: the embedded server is restarted once to load pg_stat_statements (without fsync, as the other benchmarks run).
const db = await benchDatabase("balances", { persistent: true })
const report = (line: string) => console.log(line)
report(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, ${db.embedded ? "embedded PostgreSQL" : "DATABASE_URL"}, load ${loadAverage()}`)

// pg_stat_statements, where the server can load it (the embedded one can, after a restart).
let statements = false
if (db.restart !== undefined) {
  for (const setting of ["shared_preload_libraries = 'pg_stat_statements'", "fsync = off", "synchronous_commit = off"]) {
    await db.run(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql.unsafe(`ALTER SYSTEM SET ${setting}`)))
  }
  await db.restart()
}
statements = await db.run(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql.unsafe(`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`))).then(() => true, () => false)

// A deterministic walk: mostly deposits, every fifth money going out.
let seed = 7
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
interface Txn { readonly i: number; readonly direction: "in" | "out"; readonly amount: number; readonly balance: number; readonly at: number }
const txns: Array<Txn> = []
let balance = 50_000_000
for (let i = 0; i < N; i++) {
  const direction = i % 5 === 4 ? "out" : "in"
  const amount = 1_000 + Math.floor(random() * 4_990) * 100
  balance += direction === "in" ? amount : -amount
  txns.push({ i, direction, amount, balance, at: T0 + i * RATE_MS })
}
// 1 % withheld, never two side by side; 0.5 % late (not the withheld ones), 2 to 60 s late.
const withheld = new Set<number>()
for (let k = 0; k < N / 100; k++) withheld.add(k * 100 + 25 + Math.floor(random() * 50))
const late = new Map<number, number>()
while (late.size < N / 200) {
  const i = 10 + Math.floor(random() * (N - 20))
  if (!withheld.has(i) && !late.has(i)) late.set(i, 2_000 + Math.floor(random() * 58_000))
}

// Each message's two copies (phone A at once, phone B 1.5 s later), in arrival order, with their SMS rows.
interface Copy { readonly txn: Txn; readonly device: string; readonly arrives: number }
const copies: Array<Copy> = []
for (const txn of txns) {
  if (withheld.has(txn.i)) continue
  const delay = late.get(txn.i) ?? 0
  copies.push({ txn, device: "phone-a", arrives: txn.at + 200 + delay })
  copies.push({ txn, device: "phone-b", arrives: txn.at + 1_500 + delay })
}
copies.sort((a, b) => a.arrives - b.arrives)
const ids = await db.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ id: bigint; g: number }>`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
    SELECT CASE WHEN g % 2 = 0 THEN 'phone-a' ELSE 'phone-b' END, '16449999', 'balance ' || g, 'balance ' || g, now(), 'parsed'
    FROM generate_series(0, ${copies.length - 1}) AS g
    RETURNING id, substr(body, 9)::int AS g`
  // A merchant's webhook subscribed to balance.gap: an announced gap writes its event.
  yield* sql`INSERT INTO recon.webhook (url, secret, events) VALUES ('http://127.0.0.1:9/hook', 'a-secret-of-16-chars', '{balance.gap}')`
  return new Map(rows.map((r) => [r.g, Number(r.id)]))
}))
const fact = (copy: Copy, k: number): BalanceFact => ({
  smsId: ids.get(k)!,
  receivedAt: new Date(copy.arrives),
  deviceId: copy.device,
  sender: "16449999",
  bank: "KB국민",
  account: ACCOUNT,
  direction: copy.txn.direction,
  amount: String(copy.txn.amount),
  balance: String(copy.txn.balance),
  txnAt: new Date(Math.floor(copy.txn.at / 60_000) * 60_000)
})

// The placer on one pool, on a clock that is the traffic's.
let now = T0
const clock: Clock.Clock = {
  currentTimeMillisUnsafe: () => now,
  currentTimeMillis: Effect.sync(() => now),
  currentTimeNanosUnsafe: () => BigInt(now) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(now) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => process.hrtime.bigint(),
  monotonicTimeNanos: Effect.sync(() => process.hrtime.bigint()),
  sleep: () => Effect.void
}
const runtime = ManagedRuntime.make(Layer.orDie(pgLayer(Redacted.make(db.url), { maxConnections: 2 })))
const store = await runtime.runPromise(BalanceStore.make)
const run = <A, E>(effect: Effect.Effect<A, E>) => runtime.runPromise(Effect.provideService(effect, Clock.Clock, clock))
const pgTime = () =>
  statements
    ? runtime.runPromise(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
      sql<{ ms: number; calls: bigint }>`SELECT COALESCE(sum(total_exec_time), 0)::float8 AS ms, COALESCE(sum(calls), 0) AS calls
        FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND query NOT LIKE '%pg_stat_statements%'`)).then(([r]) => ({ ms: r!.ms, calls: Number(r!.calls) }))
    : Promise.resolve({ ms: Number.NaN, calls: 0 })

report(`${N.toLocaleString("en")} messages on one account, ${copies.length.toLocaleString("en")} copies from two phones; ${withheld.size} withheld, ${late.size} late (2-60 s)`)
report("messages        PostgreSQL ms/message  statements/message  wall ms/message")
let k = 0
let nextAnnounce = T0 + ANNOUNCE_EVERY_MS
let announced = 0
for (let segment = 0; segment < N / SEGMENT; segment++) {
  const until = T0 + (segment + 1) * SEGMENT * RATE_MS
  const before = await pgTime()
  const started = performance.now()
  while (k < copies.length && (copies[k]!.arrives < until || segment === N / SEGMENT - 1)) {
    const windowEnd = copies[k]!.arrives + BATCH_MS
    const batch: Array<BalanceFact> = []
    while (k < copies.length && copies[k]!.arrives < windowEnd) batch.push(fact(copies[k]!, k++))
    now = windowEnd
    await run(store.record(batch))
    if (now >= nextAnnounce) {
      announced += await run(store.announce(GRACE_S))
      nextAnnounce = now + ANNOUNCE_EVERY_MS
    }
  }
  const wall = performance.now() - started
  const after = await pgTime()
  report(`${String((segment * SEGMENT + 1).toLocaleString("en")).padStart(7)}-${String(((segment + 1) * SEGMENT).toLocaleString("en")).padEnd(8)}` +
    `${((after.ms - before.ms) / SEGMENT).toFixed(3).padStart(22)}${((after.calls - before.calls) / SEGMENT).toFixed(1).padStart(20)}${(wall / SEGMENT).toFixed(3).padStart(17)}`)
}
// Past the grace period after the last message: what is still open is announced.
now += (GRACE_S + 10) * 1000
announced += await run(store.announce(GRACE_S))

const result = await runtime.runPromise(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const gaps = yield* sql<{ unexplained: string; closed: boolean; announced: boolean; before_balance: string; after_balance: string }>`
    SELECT g.unexplained::text AS unexplained, g.closed_at IS NOT NULL AS closed, g.announced_at IS NOT NULL AS announced,
      b.balance::text AS before_balance, a.balance::text AS after_balance
    FROM recon.balance_gap AS g JOIN recon.balance_entry AS a ON a.sms_id = g.after_sms_id JOIN recon.balance_entry AS b ON b.sms_id = g.before_sms_id`
  const [account] = yield* sql<{ last_balance: string }>`SELECT last_balance::text FROM recon.balance_account WHERE account = ${ACCOUNT}`
  const [entries] = yield* sql<{ placed: bigint; copies: bigint }>`SELECT count(*) FILTER (WHERE duplicate_of IS NULL) AS placed,
    count(*) FILTER (WHERE duplicate_of IS NOT NULL) AS copies FROM recon.balance_entry`
  const [events] = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.webhook_event WHERE type = 'balance.gap'`
  return { gaps, account: account!, entries: entries!, events: Number(events!.n) }
}))
// A withheld message explains the open gap whose last end is the message after it.
const byBalance = new Map(txns.map((t) => [t.balance, t]))
const explained = (g: { unexplained: string; before_balance: string }) => {
  const next = byBalance.get(Number(g.before_balance))
  const missing = next === undefined ? undefined : txns[next.i - 1]
  return missing !== undefined && withheld.has(missing.i) && Number(g.unexplained) === (missing.direction === "in" ? missing.amount : -missing.amount)
}
const open = result.gaps.filter((g) => !g.closed)
const closed = result.gaps.filter((g) => g.closed)
const finalBalance = txns[N - 1]!.balance
report(`placed ${Number(result.entries.placed).toLocaleString("en")} messages, ${Number(result.entries.copies).toLocaleString("en")} copies found as duplicates`)
report(`open gaps at the end: ${open.length} (withheld: ${withheld.size}); explained by a withheld message: ${open.filter(explained).length}; false gaps: ${open.filter((g) => !explained(g)).length}`)
report(`gaps a late message closed: ${closed.length}, of them announced (balance.gap, an alert): ${closed.filter((g) => g.announced).length}`)
report(`balance.gap events: ${result.events} (announce calls said ${announced}); the account's last balance ${result.account.last_balance} (the newest message's: ${finalBalance})`)
if (statements && process.env.BALANCE_BENCH_TOP === "1") {
  const top = await runtime.runPromise(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
    sql<{ query: string; calls: bigint; mean: number; total: number }>`SELECT left(regexp_replace(query, '\s+', ' ', 'g'), 160) AS query, calls,
      mean_exec_time::float8 AS mean, total_exec_time::float8 AS total FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 8`))
  for (const t of top) report(`  ${t.total.toFixed(0).padStart(7)} ms ${String(t.calls).padStart(7)} calls ${t.mean.toFixed(3).padStart(8)} ms  ${t.query}`)
}
await runtime.dispose()
await db.close()
