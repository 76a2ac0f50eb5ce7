// Benchmark: `/health` latency of `all` while hostile clients hold 2,000 idle and stalled sockets
// and flood the sign-in route (figures printed, nothing asserted).
// node bench/hardening.ts   — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
// `all` runs as its own process, with the sign-in limits raised so that every sign-in of the flood
// is hashed (the worst case: an attacker spread over many addresses); this process holds the
// sockets, runs the flood, times GET /health one request after another, and watches the worker's
// heartbeat file by the probe's own rules.
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { cpus } from "node:os"
import { join } from "node:path"
import { freePort } from "../src/db/EmbeddedPostgres.ts"
import { judge } from "../src/health/probe.ts"
import { benchDatabase } from "./support.ts"

const HELD = Number(process.env.BENCH_HELD_SOCKETS ?? 2000)
const FLOOD = Number(process.env.BENCH_LOGIN_FLOOD ?? 100)
const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 15_000)

const db = await benchDatabase("hardening")
const ports = { recon: await freePort(), push: await freePort(), admin: await freePort() }
const heartbeat = join(db.dir, "worker.heartbeat")
const child: ChildProcess = spawn(process.execPath, ["src/main.ts", "all"], {
  env: {
    PATH: process.env.PATH ?? "",
    DATABASE_URL: db.url,
    LOG_LEVEL: "error",
    SVC_RECON_PORT: String(ports.recon),
    SVC_PUSH_PORT: String(ports.push),
    SVC_ADMIN_PORT: String(ports.admin),
    SVC_WORKER_HEARTBEAT_FILE: heartbeat,
    SVC_ADMIN_SIGNIN_MAX_PER_ADDRESS: "1000000",
    SVC_ADMIN_SIGNIN_MAX_PER_ACCOUNT: "1000000"
  },
  stdio: ["ignore", "ignore", "inherit"]
})
const health = `http://127.0.0.1:${ports.recon}/health`
for (let i = 0; ; i++) {
  if (await fetch(health, { signal: AbortSignal.timeout(1_000) }).then((r) => r.ok, () => false)) break
  if (i > 300) throw new Error("`all` did not come up")
  await new Promise((resolve) => setTimeout(resolve, 100))
}

/** GET /health one after another for `ms`: latencies, and the requests that failed or took over 5 s. */
const timeHealth = async (ms: number) => {
  const latencies: Array<number> = []
  let failed = 0
  const until = Date.now() + ms
  while (Date.now() < until) {
    const started = performance.now()
    const ok = await fetch(health, { signal: AbortSignal.timeout(5_000) }).then(async (r) => (await r.arrayBuffer(), r.ok), () => false)
    if (ok) latencies.push(performance.now() - started)
    else failed++
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return { latencies, failed }
}

/** The heartbeat as the probe judges it, and the longest gap between two writes seen. */
const watchHeartbeat = () => {
  let last = ""
  let lastChange = Date.now()
  let maxGap = 0
  let notOk = 0
  const timer = setInterval(() => {
    let text: string | undefined
    try {
      text = readFileSync(heartbeat, "utf8")
    } catch {
      text = undefined
    }
    if (!judge(heartbeat, text, Date.now()).ok) notOk++
    const writtenAt = text === undefined ? "" : (JSON.parse(text) as { written_at: string }).written_at
    if (writtenAt !== last) {
      maxGap = Math.max(maxGap, Date.now() - lastChange)
      last = writtenAt
      lastChange = Date.now()
    }
  }, 50)
  return () => {
    clearInterval(timer)
    return { maxGapMs: Math.max(maxGap, Date.now() - lastChange), notOk }
  }
}

const pct = (xs: Array<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}
const line = (name: string, run: { latencies: Array<number>; failed: number }) =>
  console.log(`${name.padEnd(44)} p50 ${pct(run.latencies, 50).toFixed(1)} ms  p99 ${pct(run.latencies, 99).toFixed(1)} ms  max ${Math.max(...run.latencies).toFixed(1)} ms  (${run.latencies.length} ok, ${run.failed} failed)`)

console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? "unknown"}), node ${process.version}; \`all\` as a process, clients here`)

// 1. Quiet.
const quietHeartbeat = watchHeartbeat()
line("GET /health, quiet", await timeHealth(PHASE_MS / 3))
const quiet = quietHeartbeat()

// 2. HELD sockets spread over the three ports: half send nothing, half half a request line, and
// each is opened again as soon as the server closes it.
let holding = true
let reopened = 0
const sockets = new Set<Socket>()
const hold = (port: number, stalled: boolean) => {
  const socket = connect(port, "127.0.0.1")
  sockets.add(socket)
  socket.on("connect", () => {
    if (stalled) socket.write("POST /internal/recon/shooter/sms/list HTTP/1.1\r\nHost: x\r\nX-Slow: ")
  })
  socket.on("error", () => {})
  socket.on("close", () => {
    sockets.delete(socket)
    if (!holding) return
    reopened++
    setTimeout(() => hold(port, stalled), 10)
  })
}
const portList = [ports.recon, ports.push, ports.admin]
for (let i = 0; i < HELD; i++) {
  hold(portList[i % 3]!, i % 2 === 1)
  if (i % 200 === 199) await new Promise((resolve) => setTimeout(resolve, 20))
}

// 3. The login flood: FLOOD concurrent sign-ins with unknown accounts, one after another each.
let flooding = true
let signIns = 0
const floodStatuses = new Map<number, number>()
const flood = Promise.all(Array.from({ length: FLOOD }, async (_, c) => {
  while (flooding) {
    const status = await fetch(`http://127.0.0.1:${ports.admin}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ account: `nobody-${c}-${signIns}`, password: "not the password at all" })
    }).then(async (r) => (await r.arrayBuffer(), r.status), () => 0)
    signIns++
    floodStatuses.set(status, (floodStatuses.get(status) ?? 0) + 1)
  }
}))

const loadedHeartbeat = watchHeartbeat()
const floodStarted = Date.now()
const loaded = await timeHealth(PHASE_MS)
const heartbeatLoaded = loadedHeartbeat()
const floodSeconds = (Date.now() - floodStarted) / 1000
flooding = false
await flood
const open = sockets.size
holding = false
for (const socket of sockets) socket.destroy()

console.log(`${HELD} sockets held (idle and stalled, reopened when closed) over the recon, push and admin ports; ${FLOOD} concurrent sign-ins with unknown accounts, limits raised so each is hashed`)
line(`GET /health, ${HELD} sockets held + login flood`, loaded)
console.log(`sockets open at the end ${open} of ${HELD}; ${reopened} closed by the servers and reopened during the run`)
console.log(`sign-ins: ${(signIns / floodSeconds).toFixed(1)}/s (${[...floodStatuses].map(([s, n]) => `${s === 0 ? "failed" : s}: ${n}`).join(", ")})`)
console.log(`heartbeat (written every 5 s): longest gap quiet ${(quiet.maxGapMs / 1000).toFixed(1)} s, under load ${(heartbeatLoaded.maxGapMs / 1000).toFixed(1)} s; probe verdicts not ok under load: ${heartbeatLoaded.notOk}`)

child.kill("SIGTERM")
await new Promise((resolve) => child.on("exit", resolve))
await db.close()
