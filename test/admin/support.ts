// admin_service on loopback for tests: the real routes on a real HTTP server (port 0) over a real
// database, operators created the way the command does, and a websocket client that queues
// what it receives so a test can wait for the next message with a bound.
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Context, Exit, Scope } from "effect"
import { HttpServer } from "effect/http"
import { createServer, type Server } from "node:http"
import { adminListener, adminServer } from "../../src/admin/AdminServer.ts"
import { hashPassword } from "../../src/domain/Passwords.ts"
import { readAdminSettings } from "../../src/admin/Settings.ts"
import { type Env, readSync } from "../../src/config/Keys.ts"
import { AdminStore } from "../../src/admin/AdminStore.ts"
import { createMigratedDatabase, runSql, sql, sqlLayer } from "../support/database.ts"
import { ADMIN_TOKEN, httpSettings, type Running, RECON_TOKEN, startRecon } from "../support/recon.ts"

export const PASSWORD = "correct horse battery staple"

/** Stage B tokens: admin presents ADMIN_TOKEN to recon and accepts RECON_TOKEN (or the shared one) on sync. */
export const adminEnv = (reconUrl: string, extra: Env = {}): Env => ({
  RECON_SERVICE_URL: reconUrl,
  SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
  SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN,
  ...extra
})

export const settingsOf = (env: Env) => {
  return readSync(env, readAdminSettings())
}

/** admin_service as `admin` composes it, on 127.0.0.1 at a free port (the Effect to build inside a test's scope). */
export const adminLayer = (databaseUrl: string, env: Env, sql: Layer.Layer<SqlClient.SqlClient, unknown> = sqlLayer(databaseUrl)) =>
  adminServer(settingsOf(env), adminListener(0, httpSettings(env)), { http: httpSettings(env), disableListenLog: true }).pipe(
    Layer.provide(sql),
    Layer.orDie
  )

export const baseUrlOf = (context: Context.Context<HttpServer.HttpServer>) => {
  const address = Context.get(context, HttpServer.HttpServer).address
  return `http://127.0.0.1:${"port" in address ? address.port : 0}`
}

export const startAdmin = async (databaseUrl: string, env: Env, sql?: Layer.Layer<SqlClient.SqlClient, unknown>): Promise<Running> => {
  const scope = Scope.makeUnsafe()
  const context = await Effect.runPromise(Layer.buildWithScope(adminLayer(databaseUrl, env, sql), scope))
  return { url: baseUrlOf(context), close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

export const createOperator = (databaseUrl: string, account: string, password = PASSWORD): Promise<number> =>
  runSql(databaseUrl, Effect.gen(function*() {
    const store = yield* AdminStore
    return yield* store.createOperator(account, yield* hashPassword(password))
  }).pipe(Effect.provide(AdminStore.layer), Effect.orDie))

export { sql }

/** A database, recon_service and admin_service on it, and operator `account` signed in: what the console's route tests stand on. */
export const consoleBed = async (prefix: string, env: Env = {}, account = "ada") => {
  const db = await createMigratedDatabase(prefix)
  const recon = await startRecon(db)
  const admin = await startAdmin(db, adminEnv(recon.url, env))
  await createOperator(db, account)
  const token = await login(admin.url, account)
  return {
    db,
    recon,
    admin,
    token,
    close: async () => {
      await admin.close()
      await recon.close()
    }
  }
}

export interface Answer {
  readonly http: number
  readonly body: any
  readonly headers: Headers
}

export const request = async (
  base: string,
  path: string,
  init: { readonly method?: string; readonly token?: string; readonly body?: unknown; readonly headers?: Record<string, string> } = {}
): Promise<Answer> => {
  const headers: Record<string, string> = { ...init.headers }
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`
  if (init.body !== undefined) headers["content-type"] ??= "application/json"
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) })
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: the test sees the text
  }
  return { http: response.status, body, headers: response.headers }
}

export const login = async (base: string, account: string, password = PASSWORD): Promise<string> => {
  const answer = await request(base, "/api/auth/login", { body: { account, password } })
  if (answer.http !== 200) throw new Error(`login failed: ${answer.http} ${JSON.stringify(answer.body)}`)
  return answer.body.data.token
}

/** Sets recon.deposit rows: `pending` pending deposits, `manual` of them with task_status 6. */
export const setDeposits = (databaseUrl: string, pending: number, manual: number) =>
  sql(databaseUrl, (sql) =>
    Effect.gen(function*() {
      yield* sql`DELETE FROM recon.deposit`
      yield* sql`INSERT INTO recon.player (id, name) VALUES (1, '홍길동') ON CONFLICT (id) DO NOTHING`
      yield* sql`INSERT INTO recon.deposit (player_id, from_bank_owner, amount, status, task_status)
        SELECT 1, '홍길동', 10000 + g, 'pending', CASE WHEN g <= ${manual} THEN 6 ELSE NULL END
        FROM generate_series(1, ${pending}) AS g`
    }))

/** Inserts SMS rows in the given statuses (one each), for recon's four counters. */
export const addSms = (databaseUrl: string, statuses: ReadonlyArray<string>) =>
  sql(databaseUrl, (sql) =>
    Effect.forEach(statuses, (status, i) =>
      sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
        VALUES ('dev-1', '15889999', ${`body ${i} ${Math.random()}`}, ${`body${i}${Math.random()}`}, now(), ${status})`, { discard: true }))

export interface TopInfoMessage {
  readonly type: string
  readonly data: Record<string, any>
  readonly at: string
}

/** A websocket client (Node's global WebSocket) that queues what it receives. */
export interface SocketClient {
  readonly next: (timeoutMs?: number) => Promise<TopInfoMessage>
  /** Resolves when nothing arrives within `ms` (for "no message yet" checks). */
  readonly nothingWithin: (ms: number) => Promise<boolean>
  readonly received: () => number
  readonly close: () => void
  /** The close code, once the connection has closed (1001: the server is stopping). */
  readonly closed: Promise<number>
}

export const openSocket = (base: string, token: string, query = ""): Promise<SocketClient> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base.replace(/^http/, "ws")}/ws/top-info?token=${encodeURIComponent(token)}${query}`)
    const queue: Array<TopInfoMessage> = []
    const waiters: Array<(m: TopInfoMessage) => void> = []
    let count = 0
    const closed = new Promise<number>((res) => (ws.onclose = (event) => res(event.code)))
    ws.onmessage = (event) => {
      count += 1
      const message = JSON.parse(String(event.data)) as TopInfoMessage
      const waiter = waiters.shift()
      if (waiter) waiter(message)
      else queue.push(message)
    }
    ws.onerror = () => reject(new Error("websocket error"))
    ws.onopen = () =>
      resolve({
        next: (timeoutMs = 5_000) =>
          queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((res, rej) => {
            const timer = setTimeout(() => {
              waiters.splice(waiters.indexOf(done), 1)
              rej(new Error(`no websocket message within ${timeoutMs} ms`))
            }, timeoutMs)
            const done = (m: TopInfoMessage) => {
              clearTimeout(timer)
              res(m)
            }
            waiters.push(done)
          }),
        nothingWithin: (ms) =>
          new Promise((res) => {
            const before = count
            setTimeout(() => res(count === before && queue.length === 0), ms)
          }),
        received: () => count,
        close: () => ws.close(),
        closed
      })
  })

export const sync = (base: string, token: string | null = RECON_TOKEN, body: unknown = {}, headers: Record<string, string> = {}) =>
  request(base, "/internal/meta/ws/sync", {
    body: body === undefined ? "" : body,
    headers: { "content-type": "application/json", ...(token === null ? {} : { "x-internal-service-token": token }), ...headers }
  })

/** A fake worker health port: answers /health/ready with `status` and the contract's JSON. */
/** The worker's eight loops, all fresh: what a healthy worker reports. */
export const allLoops = () => Object.fromEntries([
  ["pushsvc_listener_supervisor", 20], ["missing_sms_sync_loop", 90], ["sms_id_sync_loop", 30], ["phone_whitelist_loop", 30],
  ["parse_loop", 30], ["order_match_loop", 90], ["chatbot_poll_loop", 60], ["webhook_delivery_loop", 60]
].map(([name, ttl]) => [name, { state: "running", last_success_at: new Date().toISOString(), ttl_s: ttl, fresh: true, restarts: 0 }]))

export const fakeWorker = (status: number, ready: boolean, loops?: () => Record<string, unknown>) =>
  new Promise<{ url: string; server: Server }>((resolve) => {
    const server = createServer((req, res) => {
      if (req.url !== "/health/ready") return void res.writeHead(404).end()
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({
        ready,
        pid: 4242,
        written_at: new Date().toISOString(),
        loops: loops?.() ?? {
          parse_loop: { state: "running", last_success_at: new Date().toISOString(), ttl_s: 30, fresh: true, restarts: 0 },
          order_match_loop: { state: ready ? "running" : "stale", last_success_at: null, ttl_s: 30, fresh: ready, restarts: 2 }
        }
      }))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve({ url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`, server })
    })
  })

