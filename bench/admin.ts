// Benchmark: sync-to-websocket latency of admin_service, and the time of a refused sign-in with a
// wrong password and with an unknown account (figures printed, nothing asserted).
// node bench/admin.ts   — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
// recon_service and admin_service run as their own processes (`node src/main.ts recon|admin`), as in
// production; this process holds 100 websocket clients, sends the syncs one after another and
// measures, per client, the time from sending POST /internal/meta/ws/sync to the message arriving.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import { cpus } from "node:os"
import { hashPassword } from "../src/domain/Passwords.ts"
import { AdminStore } from "../src/admin/AdminStore.ts"
import { freePort } from "../src/db/EmbeddedPostgres.ts"
import { benchDatabase } from "./support.ts"

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 100)
const SYNCS = Number(process.env.BENCH_SYNCS ?? 200)
const WARMUP = 10
const ADMIN_TOKEN = "bench-admin-token-0123456789"
const RECON_TOKEN = "bench-recon-token-0123456789"
const PASSWORD = "bench-password-0123456789"

const db = await benchDatabase("admin")
const { url } = db

// A realistic amount of rows behind the counters: 20 000 deposits, 100 000 SMS.
await db.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO recon.player (id, name) VALUES (1, '홍길동')`
  yield* sql`INSERT INTO recon.deposit (player_id, from_bank_owner, amount, status, task_status)
    SELECT 1, '홍길동', 1000 + g, (ARRAY['pending','approved','approved','expired'])[1 + g % 4], CASE WHEN g % 50 = 0 THEN 6 END
    FROM generate_series(1, 20000) AS g`
  yield* sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
    SELECT 'dev-' || (g % 20), '15889999', 'body ' || g, 'body' || g, now() - (g || ' seconds')::interval,
      (ARRAY['approved','approved','approved','approved','approved','approved','ignored','duplicate','need_check','parse_failed','unmatched','manual_review'])[1 + g % 12]
    FROM generate_series(1, 100000) AS g`
  yield* sql`ANALYZE`
  const store = yield* AdminStore
  yield* Effect.orDie(store.createOperator("bench", yield* hashPassword(PASSWORD)))
}).pipe(Effect.provide(AdminStore.layer)))

const children: Array<ChildProcess> = []
const startService = (command: string, env: Record<string, string>) => {
  const child = spawn(process.execPath, ["src/main.ts", command], {
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: url, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "inherit", "inherit"]
  })
  children.push(child)
}
const waitUp = async (probe: string) => {
  for (let i = 0; i < 300; i++) {
    if (await fetch(probe, { signal: AbortSignal.timeout(1_000) }).then((r) => r.ok, () => false)) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${probe} did not come up`)
}

const reconPort = await freePort()
const adminPort = await freePort()
startService("recon", { SVC_RECON_PORT: String(reconPort), SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN })
startService("admin", {
  SVC_ADMIN_PORT: String(adminPort),
  RECON_SERVICE_URL: `http://127.0.0.1:${reconPort}`,
  SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
  SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN,
  // The refused sign-ins timed below are more than the default limits let through (and each
  // would log a warning).
  SVC_ADMIN_SIGNIN_MAX_PER_ACCOUNT: "1000",
  SVC_ADMIN_SIGNIN_MAX_PER_ADDRESS: "1000",
  LOG_LEVEL: "error"
})
const admin = `http://127.0.0.1:${adminPort}`
await waitUp(`http://127.0.0.1:${reconPort}/health`)
await waitUp(`${admin}/`)

const login = await fetch(`${admin}/api/auth/login`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ account: "bench", password: PASSWORD })
}).then((r) => r.json() as Promise<{ data: { token: string } }>)
const token = login.data.token

// Refused sign-ins, alternating: a wrong password for "bench" and an unknown account. Both run one
// scrypt derivation at the same parameters (test/admin/Session.test.ts checks it): the times say
// whether that makes them cost the same.
const SIGN_INS = Number(process.env.BENCH_SIGN_INS ?? 20)
const refusedSignIn = async (account: string) => {
  const started = performance.now()
  const response = await fetch(`${admin}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ account, password: "not the password at all" })
  })
  await response.arrayBuffer()
  if (response.status !== 401) throw new Error(`refused sign-in answered ${response.status}`)
  return performance.now() - started
}
const wrongPassword: Array<number> = []
const unknownAccount: Array<number> = []
for (let i = 0; i < 2 + SIGN_INS; i++) {
  const wrong = await refusedSignIn("bench")
  const unknown = await refusedSignIn(`nobody-${i}`)
  if (i < 2) continue // warm-up
  wrongPassword.push(wrong)
  unknownAccount.push(unknown)
}

/** One client: resolves `waiter` with the arrival time of the first message read after `since`. */
interface Client {
  readonly ws: WebSocket
  waiter: { readonly since: number; readonly resolve: (arrivedAt: number) => void } | undefined
}
const clients: Array<Client> = await Promise.all(Array.from({ length: CLIENTS }, () =>
  new Promise<Client>((resolve, reject) => {
    const client: Client = { ws: new WebSocket(`${admin.replace(/^http/, "ws")}/ws/top-info?token=${token}`), waiter: undefined }
    let first = true
    client.ws.onmessage = (event) => {
      const arrivedAt = performance.now()
      if (first) {
        first = false
        return resolve(client)
      }
      // `at` is when admin read the counters: a periodic push read before the sync was sent is not the sync's message.
      const at = Date.parse((JSON.parse(String(event.data)) as { at: string }).at)
      const waiter = client.waiter
      if (waiter !== undefined && at >= waiter.since) {
        client.waiter = undefined
        waiter.resolve(arrivedAt)
      }
    }
    client.ws.onerror = () => reject(new Error("websocket error"))
  })))

const perClient: Array<number> = []
const perSync: Array<number> = []
const responses: Array<number> = []
for (let i = 0; i < WARMUP + SYNCS; i++) {
  const sinceWall = Date.now() - 1 // `at` has millisecond precision
  const arrivals = clients.map((client) => new Promise<number>((resolve) => (client.waiter = { since: sinceWall, resolve })))
  const sent = performance.now()
  const response = await fetch(`${admin}/internal/meta/ws/sync`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-internal-service-token": RECON_TOKEN },
    body: "{}"
  })
  const answered = performance.now()
  await response.arrayBuffer()
  const times = await Promise.all(arrivals)
  if (i < WARMUP) continue
  responses.push(answered - sent)
  for (const t of times) perClient.push(t - sent)
  perSync.push(Math.max(...times) - sent)
}

const pct = (xs: Array<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const line = (name: string, xs: Array<number>) =>
  console.log(`${name.padEnd(34)} p50 ${pct(xs, 50).toFixed(1)} ms  p95 ${pct(xs, 95).toFixed(1)} ms  p99 ${pct(xs, 99).toFixed(1)} ms  max ${Math.max(...xs).toFixed(1)} ms`)

console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? "unknown"}), node ${process.version}; recon and admin as processes, clients here`)
console.log(`${CLIENTS} websocket clients, ${SYNCS} syncs one after another (after ${WARMUP} warm-up), 20k deposits and 100k SMS behind the counters`)
line("sync sent -> message, per client", perClient)
line("sync sent -> last client has it", perSync)
line("sync sent -> HTTP 200", responses)
line("sign-in refused, wrong password", wrongPassword)
line("sign-in refused, unknown account", unknownAccount)
console.log(`unknown account / wrong password, p50: ${(pct(unknownAccount, 50) / pct(wrongPassword, 50)).toFixed(2)} (${SIGN_INS} of each, alternating)`)
const p99 = pct(perClient, 99)
console.log(`target p99 < 50 ms per client: ${p99 < 50 ? "met" : "NOT met"} (${p99.toFixed(1)} ms)`)

for (const client of clients) client.ws.close()
for (const child of children) child.kill("SIGTERM")
await Promise.all(children.map((child) => new Promise((resolve) => child.exitCode !== null ? resolve(null) : child.once("exit", resolve))))
await db.close()
