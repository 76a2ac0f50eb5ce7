// Benchmark: `/health` latency of `all` while hostile clients hold 2,000 idle and stalled sockets
// and flood the sign-in route (figures printed, nothing asserted).
// node bench/hardening.ts   — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
// `all` runs as its own process, with the per-account and per-address sign-in limits raised (the
// worst case: an attacker spread over many addresses); an attacker process holds the sockets and
// runs the flood; this one times GET /health one request after another and watches the worker's
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


/**
 * The attacker, in a process of its own (so its busy event loop does not slow down the timing of
 * /health): HELD sockets spread over the three ports, half sending nothing and half half a
 * request line, each opened again as soon as the server closes it; and FLOOD concurrent sign-ins
 * with unknown accounts, one after another each. Prints its figures at SIGTERM.
 */
const attack = async (ports: { readonly recon: number; readonly push: number; readonly admin: number }) => {
  let running = true
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
      if (!running) return
      reopened++
      setTimeout(() => hold(port, stalled), 10)
    })
  }
  const portList = [ports.recon, ports.push, ports.admin]
  for (let i = 0; i < HELD; i++) {
    hold(portList[i % 3]!, i % 2 === 1)
    if (i % 200 === 199) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  let signIns = 0
  const statuses = new Map<number, number>()
  for (let c = 0; c < FLOOD; c++) {
    void (async () => {
      while (running) {
        const status = await fetch(`http://127.0.0.1:${ports.admin}/api/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ account: `nobody-${c}-${signIns}`, password: "not the password at all" })
        }).then(async (r) => (await r.arrayBuffer(), r.status), () => 0)
        signIns++
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
      }
    })()
  }
  const started = Date.now()
  process.once("SIGTERM", () => {
    const seconds = (Date.now() - started) / 1000
    const open = sockets.size
    running = false
    for (const socket of sockets) socket.destroy()
    console.log(`sockets open at the end ${open} of ${HELD}; ${reopened} closed by the servers and reopened during the run`)
    console.log(`sign-ins: ${(signIns / seconds).toFixed(1)}/s (${[...statuses].map(([s, n]) => `${s === 0 ? "failed" : s}: ${n}`).join(", ")})`)
    process.exit(0)
  })
}

if (process.argv[2] === "--attack") {
  await attack(JSON.parse(process.argv[3]!))
  await new Promise(() => {})
}

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

// 2 and 3 run in a process of their own, the attacker, so that its busy event loop does not
// slow down the timing of /health here.
const attacker = spawn(process.execPath, ["bench/hardening.ts", "--attack", JSON.stringify(ports)], { stdio: ["ignore", "pipe", "inherit"] })
let attackReport = ""
attacker.stdout!.on("data", (chunk) => (attackReport += chunk))
await new Promise((resolve) => setTimeout(resolve, 3_000))
const loadedHeartbeat = watchHeartbeat()
const loaded = await timeHealth(PHASE_MS)
const heartbeatLoaded = loadedHeartbeat()
attacker.kill("SIGTERM")
await new Promise((resolve) => attacker.on("exit", resolve))

console.log(`${HELD} sockets held (idle and stalled, reopened when closed) over the recon, push and admin ports; ${FLOOD} concurrent sign-ins with unknown accounts, per-account and per-address limits raised`)
line(`GET /health, ${HELD} sockets held + login flood`, loaded)
process.stdout.write(attackReport)
console.log(`heartbeat (written every 5 s): longest gap quiet ${(quiet.maxGapMs / 1000).toFixed(1)} s, under load ${(heartbeatLoaded.maxGapMs / 1000).toFixed(1)} s; probe verdicts not ok under load: ${heartbeatLoaded.notOk}`)

child.kill("SIGTERM")
await new Promise((resolve) => child.on("exit", resolve))
await db.close()
