// Benchmark of recon_worker (figures printed, nothing asserted): readiness detection after a loop
// fiber exits, `probe` time, webhook ingest throughput and latency with 50 concurrent senders,
// and the worker's RSS when idle.
// node bench/worker.ts   — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
import { Context, Deferred, Effect, Fiber, Layer, Option, Redacted, References, Schedule, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { spawn, spawnSync } from "node:child_process"
import { Agent } from "node:http"
import { existsSync } from "node:fs"
import { cpus } from "node:os"
import { join } from "node:path"
import { pgLayer } from "../src/db/Database.ts"
import { freePort } from "../src/db/EmbeddedPostgres.ts"
import { smsForwarderFormBody } from "../src/domain/SmsForwarder.ts"
import { HealthRegistry } from "../src/health/HealthRegistry.ts"
import { Fatal } from "../src/commands/Lifecycle.ts"
import { WorkerRuntime, workerCore } from "../src/worker/Runtime.ts"
import { benchDatabase, cpuTicks, pushTry, rssOf, serverCpuTicks } from "./support.ts"

const SENDERS = 50
const SMS_TOTAL = 20_000
const DEVICES = 10

const db = await benchDatabase("worker")
const { url, dir } = db
const sqlLayer = (url: string) => Layer.orDie(pgLayer(Redacted.make(url)))
await db.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (let d = 0; d < DEVICES; d++) {
    yield* sql`INSERT INTO recon.shooter_device (device_id, trusted) VALUES (${`bench-${d}`}, true)`
    yield* sql`INSERT INTO recon.shooter_push (device_id, format, secret) VALUES (${`bench-${d}`}, 'smsforwarder', 'bench-secret')`
  }
  yield* sql`INSERT INTO recon.shooter_phone (phone) VALUES ('15889999')`
}))

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const ms = (n: number) => `${n.toFixed(2)} ms`
const lines: Array<string> = []
const report = (line: string) => {
  lines.push(line)
  console.log(line)
}
report(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, ${db.embedded ? "embedded PostgreSQL" : "DATABASE_URL"}`)

// 1. Readiness detection: from interrupting a loop's fiber to the registry publishing `false`.
{
  const heartbeat = join(dir, "inproc.heartbeat")
  const measured: { readonly samples: Array<number>; readonly afterExit: Array<number>; readonly slow: Array<string> } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const fatal = yield* Deferred.make<never, unknown>()
    const context = yield* Layer.build(workerCore({
      port: 0,
      heartbeatFile: heartbeat,
      chatbot: { enabled: false, token: undefined, apiUrl: "http://127.0.0.1:9", chatIds: [] },
      walletUrl: "http://127.0.0.1:9",
      adminUrl: "http://127.0.0.1:9",
      callerToken: undefined,
      depositTtlHours: 24
    }, undefined, { maxRestarts: 1000, backoff: Schedule.spaced("10 millis") }).pipe(Layer.provideMerge(Fatal.layerOn(fatal)), Layer.provideMerge(sqlLayer(url)), Layer.orDie))
    const registry = Context.get(context, HealthRegistry)
    const runtime = Context.get(context, WorkerRuntime)
    const waitReady = Effect.gen(function*() {
      while (!(yield* registry.ready)) yield* Effect.sleep("5 millis")
    })
    yield* waitReady
    const samples: Array<number> = []
    const afterExit: Array<number> = []
    const slow: Array<string> = []
    // The first exit of each loop runs code for the first time (JIT): 10 warm-up exits, not counted.
    for (let i = 0; i < 110; i++) {
      const name = runtime.supervisor.names[i % runtime.supervisor.names.length]!
      const seen = yield* Deferred.make<number>()
      const watcher = yield* Effect.forkChild(Stream.runForEach(registry.readiness, (ready) =>
        ready ? Effect.void : Deferred.succeed(seen, performance.now())))
      yield* Effect.yieldNow
      const fiber = Option.getOrThrow(yield* runtime.supervisor.fiber(name))
      const started = performance.now()
      yield* Effect.forkChild(Fiber.interrupt(fiber))
      const at = yield* Deferred.await(seen)
      const exitedAt = yield* Fiber.await(fiber).pipe(Effect.as(performance.now()))
      if (i >= 10) {
        samples.push(at - started)
        // Negative when readiness fell before the fiber had finished exiting (reported inside it).
        afterExit.push(at - exitedAt)
        if (at - started > 5) slow.push(`${name} ${(at - started).toFixed(1)} ms`)
      }
      yield* Fiber.interrupt(watcher)
      yield* waitReady
    }
    return { samples: samples.sort((a, b) => a - b), afterExit: afterExit.sort((a, b) => a - b), slow }
  }).pipe(Effect.provideService(References.MinimumLogLevel, "None"))))
  const { samples, afterExit, slow } = measured
  report(`readiness detection, from interrupting a loop's fiber to the readiness stream publishing false (${samples.length} exits): p50 ${ms(percentile(samples, 50))}, p95 ${ms(percentile(samples, 95))}, p99 ${ms(percentile(samples, 99))}, max ${ms(samples.at(-1)!)} (target < 10 ms)${slow.length > 0 ? `; over 5 ms: ${slow.join(", ")}` : ""}`)
  report(`readiness false relative to the fiber's exit (negative: before it had finished exiting): max ${ms(afterExit.at(-1)!)}`)
}

// 2. The worker process: probe time, idle RSS, ingest throughput.
const entry = existsSync("dist/main.js") ? "dist/main.js" : "src/main.ts"
const port = await freePort()
const heartbeat = join(dir, "worker.heartbeat")
// BENCH_NODE_ARGS: extra Node flags for the worker (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "")
const worker = spawn(process.execPath, [...nodeArgs, entry, "worker"], {
  env: { PATH: process.env.PATH ?? "", DATABASE_URL: url, SVC_PUSH_PORT: String(port), SVC_WORKER_HEARTBEAT_FILE: heartbeat, LOG_LEVEL: "warn",
    SVC_INTERNAL_SERVICE_TOKEN_RECON: "bench-recon-token" },
  stdio: ["ignore", "inherit", "inherit"]
})
const base = `http://127.0.0.1:${port}`
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))
while (!(await fetch(`${base}/health/ready`).then((r) => r.ok, () => false))) await sleep(50)
await sleep(10_000)
report(`worker RSS when idle (10 s after ready, ${entry}): ${rssOf(worker.pid!).toFixed(1)} MB (target < 120 MB)`)

const probeTimes: Array<number> = []
for (let i = 0; i < 20; i++) {
  const started = performance.now()
  const result = spawnSync(process.execPath, [entry, "probe"], { env: { PATH: process.env.PATH ?? "", SVC_WORKER_HEARTBEAT_FILE: heartbeat } })
  probeTimes.push(performance.now() - started)
  if (result.status !== 0) report(`probe exited ${result.status}: ${String(result.stdout)}`)
}
probeTimes.sort((a, b) => a - b)
report(`probe (${entry}, 20 runs, process start to exit): p50 ${ms(percentile(probeTimes, 50))}, max ${ms(probeTimes.at(-1)!)} (target < 150 ms)`)

const postgresTicks = () => serverCpuTicks(db)
const ticksBefore = { worker: cpuTicks(worker.pid!), bench: cpuTicks(process.pid), postgres: postgresTicks() }
const latencies: Array<number> = []
let next = 0
let failed = 0
const stamp = Date.now()
// Bodies signed beforehand and a plain keep-alive HTTP client: the load generator shares the two
// cores with the worker and PostgreSQL, so it should cost as little as it can.
const bodies = Array.from({ length: SMS_TOTAL }, (_, i) => {
  const text = `[Web발신]\nKB국민 11/22 10:${String(i % 60).padStart(2, "0")}\n홍길동\n입금 ${10_000 + (i % 90_000)}원\n잔액 ${100_000_000 + i}`
  return Buffer.from(smsForwarderFormBody({ from: "1588-9999", content: text, orgContent: text, timestamp: stamp + i, secret: "bench-secret" }))
})
const agent = new Agent({ keepAlive: true, maxSockets: SENDERS })
const started = performance.now()
await Promise.all(Array.from({ length: SENDERS }, async () => {
  while (next < SMS_TOTAL) {
    const i = next++
    const t0 = performance.now()
    const status = await pushTry(port, `/push/bench-${i % DEVICES}`, bodies[i]!, agent, 60_000)
    latencies.push(performance.now() - t0)
    if (status !== 200) failed++
  }
}))
agent.destroy()
const seconds = (performance.now() - started) / 1000
latencies.sort((a, b) => a - b)
const stored = await db.run(Effect.gen(function*() {
  const [row] = yield* (yield* SqlClient.SqlClient)<{ n: bigint }>`SELECT count(*) AS n FROM recon.shooter_sms`
  return Number(row!.n)
}))
report(`ingest: ${SMS_TOTAL} SMS from ${SENDERS} concurrent senders over ${DEVICES} devices in ${seconds.toFixed(1)} s = ${(stored / seconds).toFixed(0)} SMS/s stored (${stored} rows, ${failed} non-200); latency p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(latencies.at(-1)!)} (target >= 2000 SMS/s)`)
const share = (name: keyof typeof ticksBefore, now: number) => `${name} ${((now - ticksBefore[name]) / 100 / seconds * 100).toFixed(0)} %`
report(`CPU during the ingest (of one core): ${share("worker", cpuTicks(worker.pid!))}, ${share("postgres", postgresTicks())}, ${share("bench", cpuTicks(process.pid))} (the load generator, on the same 2 cores)`)
report(`worker RSS after the ingest: ${rssOf(worker.pid!).toFixed(1)} MB`)

worker.kill("SIGTERM")
await new Promise((resolve) => worker.on("exit", resolve))
await db.close()
