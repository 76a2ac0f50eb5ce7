// Benchmark of order_match_loop (figures printed, nothing asserted): parsed → approved latency at a
// steady 100 SMS/s, approvals per second through the real wallet_service against `pgbench -N` on
// the same server, and the time to clear a backlog of parsed SMS against as many deposits.
// node bench/match.ts [backlog]   — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server;
// STEADY (seconds, default 30), BENCH_BACKLOG_SECONDS (stop the backlog early and report the rate).
// The worker (every loop) and wallet_service run in this process, as `all` runs them.
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Deferred, Effect, Layer, Redacted, References } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import { createServer } from "node:http"
import { cpus } from "node:os"
import { join } from "node:path"
import { readSync, readWalletSettings } from "../src/config/AppConfig.ts"
import { pgLayer } from "../src/db/Database.ts"
import { HealthRegistry } from "../src/health/HealthRegistry.ts"
import { walletRoutes } from "../src/http/WalletServer.ts"
import { Kicks } from "../src/loops/Loop.ts"
import { loops } from "../src/loops/index.ts"
import { Fatal } from "../src/config/Runner.ts"
import { workerCore } from "../src/loops/Runtime.ts"
import { benchDatabase } from "./support.ts"

const TOKEN = "bench-recon-token-0123456789"
const RATE = 100
const STEADY_SECONDS = Number(process.env.STEADY ?? 30)
const BACKLOG = Number(process.argv[2] ?? 100_000)
/** BENCH_BACKLOG_SECONDS: stop the backlog after this long and report the rate so far. */
const MAX_BACKLOG_SECONDS = Number(process.env.BENCH_BACKLOG_SECONDS ?? Infinity)

/** A command's exit code and output, without blocking the event loop (the worker keeps running). */
const run = (command: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  Effect.callback<{ readonly code: number; readonly output: string }>((resume) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("error", (error) => resume(Effect.succeed({ code: -1, output: String(error.message) })))
    child.on("close", (code) => resume(Effect.succeed({ code: code ?? -1, output })))
  })

const db = await benchDatabase("match")
const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const ms = (n: number) => `${n.toFixed(1)} ms`
const report = (line: string) => console.log(line)
const parseLoop = loops.some((loop) => (loop.name as string) === "parse_loop")
report(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, ${db.embedded ? "embedded PostgreSQL" : "DATABASE_URL"}`)

const sqlLayer = Layer.orDie(pgLayer(Redacted.make(db.url)))

/** `n` players `prefix-i`, each with one pending deposit of 10,000 from that name, and `n` parsed SMS from them. */
const arrange = (prefix: string, n: number, sms: boolean) =>
  db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO recon.player (name) SELECT ${prefix} || '-' || g FROM generate_series(1, ${n}) AS g`
    yield* sql`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
      SELECT id, name, 10000 FROM recon.player WHERE name LIKE ${`${prefix}-%`}`
    if (sms) {
      yield* sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount)
        SELECT 'bench', '15881688', ${prefix} || '-' || g, ${prefix} || g, now(), 'parsed', 'KB', ${prefix} || '-' || g, 10000
        FROM generate_series(1, ${n}) AS g`
    }
  }))

const countApproved = (prefix: string) =>
  db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.shooter_sms WHERE status = 'approved' AND payer_name LIKE ${`${prefix}-%`}`
    return Number(row!.n)
  }))

await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  // wallet_service on a free port.
  const walletSettings = readSync({ SVC_INTERNAL_SERVICE_TOKEN_RECON: TOKEN }, readWalletSettings)
  const server = yield* Layer.build(HttpRouter.serve(walletRoutes(walletSettings).pipe(Layer.provide(sqlLayer), Layer.orDie), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.orDie
  ) as Layer.Layer<HttpServer.HttpServer>)
  const address = Context.get(server, HttpServer.HttpServer).address
  const walletUrl = `http://127.0.0.1:${"port" in address ? address.port : 0}`

  const fatal = yield* Deferred.make<never, unknown>()
  const worker = yield* Layer.build(workerCore({
    port: 0,
    heartbeatFile: join(db.dir, "bench.heartbeat"),
    chatbot: { enabled: false, token: undefined, apiUrl: "http://127.0.0.1:9", chatIds: [] },
    walletUrl,
    adminUrl: "http://127.0.0.1:9",
    callerToken: Redacted.make(TOKEN),
    depositTtlHours: 24
  }).pipe(Layer.provideMerge(Fatal.layerOn(fatal)), Layer.provideMerge(sqlLayer), Layer.orDie))
  const registry = Context.get(worker, HealthRegistry)
  const kicks = Context.get(worker, Kicks)
  while (!(yield* registry.ready)) yield* Effect.sleep("20 millis")
  const sql = Context.get(worker, SqlClient.SqlClient)

  // 1. Latency at a steady rate: each SMS committed as parse_loop leaves it, then the kick parse_loop sends.
  {
    yield* Effect.promise(() => arrange("warm", 200, true))
    yield* kicks.kick("order_match_loop")
    while ((yield* Effect.promise(() => countApproved("warm"))) < 200) yield* Effect.sleep("50 millis")
    const n = RATE * STEADY_SECONDS
    yield* Effect.promise(() => arrange("steady", n, false))
    const sent = new Map<number, number>()
    const start = performance.now()
    const origin = Date.now() - start
    for (let i = 1; i <= n; i++) {
      const due = start + (i - 1) * (1000 / RATE)
      const wait = due - performance.now()
      if (wait > 0) yield* Effect.sleep(`${wait} millis`)
      const at = origin + performance.now()
      const [row] = yield* sql<{ id: bigint }>`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount)
        VALUES ('bench', '15881688', ${`steady-${i}`}, ${`steady${i}`}, now(), 'parsed', 'KB', ${`steady-${i}`}, 10000) RETURNING id`
      sent.set(Number(row!.id), at)
      yield* kicks.kick("order_match_loop")
    }
    while ((yield* Effect.promise(() => countApproved("steady"))) < n) yield* Effect.sleep("50 millis")
    const rows = yield* sql<{ id: bigint; at: Date }>`SELECT id, updated_at AS at FROM recon.shooter_sms WHERE payer_name LIKE 'steady-%'`
    const latencies = rows.map((r) => r.at.getTime() - sent.get(Number(r.id))!).sort((a, b) => a - b)
    report(`${parseLoop ? "parsed" : "parsed (no parse_loop in this build: not the webhook)"} → approved at a steady ${RATE} SMS/s for ${STEADY_SECONDS} s (${n} SMS): ` +
      `p50 ${ms(percentile(latencies, 50))}, p90 ${ms(percentile(latencies, 90))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(latencies[latencies.length - 1]!)}`)
  }

  // 2. pgbench -N (simple-update TPC-B, 8 clients, 20 s) on the same server while the worker idles.
  const pg = new URL(db.url)
  const env = { ...process.env, PGHOST: pg.hostname, PGPORT: pg.port, PGUSER: decodeURIComponent(pg.username), PGPASSWORD: decodeURIComponent(pg.password) }
  const dbName = pg.pathname.slice(1)
  const init = yield* run("pgbench", ["-i", "-q", "-s", "10", dbName], env)
  let tps = NaN
  if (init.code !== 0) {
    report(`pgbench: not run (${init.output.trim().split("\n").pop()})`)
  } else {
    const bench = yield* run("pgbench", ["-N", "-c", "8", "-j", "2", "-T", "20", dbName], env)
    tps = Number(/tps = ([\d.]+)/.exec(bench.output)?.[1] ?? NaN)
    report(`pgbench -N -c 8 -j 2 -T 20 (scale 10) on the same server: ${tps.toFixed(0)} tps`)
  }

  // 3. A backlog: parsed SMS and their deposits already there, the loop kicked once.
  {
    yield* Effect.promise(() => arrange("backlog", BACKLOG, true))
    const start = performance.now()
    yield* kicks.kick("order_match_loop")
    let last = 0
    let notReady = 0
    let lastReport = start
    while (last < BACKLOG && performance.now() - start < MAX_BACKLOG_SECONDS * 1000) {
      yield* Effect.sleep("200 millis")
      last = yield* Effect.promise(() => countApproved("backlog"))
      if (!(yield* registry.ready)) notReady++
      if (performance.now() - lastReport > 30_000) {
        lastReport = performance.now()
        report(`  … ${last.toLocaleString("en")} approved after ${((lastReport - start) / 1000).toFixed(0)} s (${(last / ((lastReport - start) / 1000)).toFixed(0)}/s)`)
      }
    }
    const seconds = (performance.now() - start) / 1000
    const rate = last / seconds
    const ready = notReady === 0 ? "yes" : `no, ${notReady} samples not ready`
    report(last < BACKLOG
      ? `backlog of ${BACKLOG.toLocaleString("en")} parsed SMS against as many deposits: NOT cleared, stopped after ${seconds.toFixed(0)} s with ${last.toLocaleString("en")} approved (${rate.toFixed(0)}/s; at that rate ${(BACKLOG / rate).toFixed(0)} s in all); worker ready throughout: ${ready}`
      : `backlog of ${BACKLOG.toLocaleString("en")} parsed SMS against as many deposits: cleared in ${seconds.toFixed(1)} s, ${rate.toFixed(0)} approvals/s end to end; worker ready throughout: ${ready}`)
    report(`approvals/s ÷ pgbench -N tps = ${(rate / tps).toFixed(2)}`)
  }
})).pipe(Effect.provideService(References.MinimumLogLevel, "Warn"))).finally(() => db.close())
process.exit(0)
