// The rest of admin's surface: the removed compatibility paths and unknown routes (404 envelope
// on GET and POST), the console's page and files, the worker-health proxy (ok / not configured /
// unreachable), and the database going away (503 envelope, an `unavailable` websocket message).
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { connect, createServer as createTcpServer, type Socket } from "node:net"
import { CONSOLE_DIR } from "../../src/admin/Console.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { type Running, startRecon } from "../support/recon.ts"
import { adminEnv, createOperator, fakeWorker, login, openSocket, request, startAdmin } from "./support.ts"

let db: string
let recon: Running
beforeAll(async () => {
  db = await createMigratedDatabase("admin_routes")
  recon = await startRecon(db)
  await createOperator(db, "alice")
  return () => recon.close()
})

const removed = [
  "/api/admin/pushsvc/list",
  "/api/admin/pushsvc/add_device",
  "/api/admin/pushsvc/delete",
  "/api/admin/shooter/sms/list",
  "/api/admin/shooter/sms/check",
  "/api/admin/shooter/template/recharge/list",
  "/api/admin/shooter/phone/add",
  "/api/admin/shooter/device/list",
  "/api/admin/shooter/top-info",
  "/shooter/device/list",
  "/shooter/device/trust",
  "/shooter/device/delete"
]
const unknown = ["/nope", "/api", "/api/top-info/extra", "/internal/recon/stats/top-info", "/ws", "/index.html"]
const notFound = { status: 404, msg: "not_found", data: { detail: "no such route", issues: [] } }

describe("routes that do not exist", () => {
  let admin: Running
  beforeAll(async () => {
    admin = await startAdmin(db, adminEnv(recon.url))
    return () => admin.close()
  })

  it("every removed compatibility path is the unknown-route 404 envelope, on GET and on POST, signed in or not", async () => {
    const token = await login(admin.url, "alice")
    for (const path of [...removed, ...unknown]) {
      for (const init of [{}, { body: {} }, { token }, { token, body: { page: 1 } }]) {
        const answer = await request(admin.url, path, init)
        assert.deepStrictEqual([answer.http, answer.body], [404, notFound], `${path} ${JSON.stringify(init)}`)
      }
    }
  })

  it("a known path with the wrong method is 404 too", async () => {
    for (const [method, path] of [["GET", "/internal/meta/ws/sync"], ["GET", "/api/auth/login"], ["POST", "/api/top-info"], ["POST", "/"]]) {
      const answer = await request(admin.url, path!, { method: method!, ...(method === "POST" ? { body: {} } : {}) })
      assert.deepStrictEqual([answer.http, answer.body], [404, notFound], `${method} ${path}`)
    }
  })

  it("GET / is the console, Korean first (?lang=en English), with a policy that allows only its own files", async () => {
    const response = await fetch(`${admin.url}/`)
    assert.strictEqual(response.status, 200)
    assert.match(response.headers.get("content-type") ?? "", /^text\/html/)
    const policy = response.headers.get("content-security-policy") ?? ""
    assert.include(policy, "default-src 'none'")
    assert.include(policy, "script-src 'self'")
    assert.notInclude(policy, "unsafe-inline")
    const html = await response.text()
    assert.include(html, '<html lang="ko">')
    for (const id of ["signin-form", "counters", "recon-state", "worker-panel", "queue-list", "search-form", "audit-rows", "registrations", "alerts"]) {
      assert.include(html, `data-testid="${id}"`)
    }
    const english = await (await fetch(`${admin.url}/?lang=en`)).text()
    assert.include(english, '<html lang="en">')
    assert.include(english, "<title>recon operator console</title>")
    assert.include(await (await fetch(`${admin.url}/?lang=fr`)).text(), '<html lang="ko">')
    // Every module, stylesheet and word list the page loads is served, with its type.
    for (const [path, type] of [["/console/app.js", "text/javascript"], ["/console/console.css", "text/css"], ["/console/words.json", "application/json"]]) {
      const asset = await fetch(`${admin.url}${path}`)
      assert.strictEqual(asset.status, 200, path)
      assert.match(asset.headers.get("content-type") ?? "", new RegExp(`^${type}`), path)
      assert.strictEqual(asset.headers.get("x-content-type-options"), "nosniff")
    }
    assert.strictEqual((await fetch(`${admin.url}/console/../package.json`)).status, 404)
    assert.strictEqual((await fetch(`${admin.url}/console/nothing.js`)).status, 404)
  })

  it("the console's word list has every key in Korean and English, and every data-i18n key of the page", () => {
    const words = JSON.parse(readFileSync(new URL("words.json", CONSOLE_DIR), "utf8")) as Record<string, Record<string, string>>
    assert.deepStrictEqual(Object.keys(words["en"]!).sort(), Object.keys(words["ko"]!).sort())
    const html = readFileSync(new URL("index.html", CONSOLE_DIR), "utf8")
    const keys = [...html.matchAll(/data-i18n(?:-placeholder|-aria)?="([^"]+)"/g)].map((m) => m[1]!)
    assert.isAbove(keys.length, 50)
    assert.deepStrictEqual(keys.filter((k) => !(k in words["ko"]!)), [])
    for (const status of ["received", "need_check", "rejected", "duplicate", "ignored", "parse_failed", "parsed", "unmatched", "manual_review", "approving", "approved"]) {
      assert.property(words["ko"], `s_${status}`)
    }
  })
})

describe("GET /api/worker-health", () => {
  it("passes the worker's JSON through, ready (200) and not ready (503) alike", async () => {
    for (const [status, ready] of [[200, true], [503, false]] as const) {
      const worker = await fakeWorker(status, ready)
      const admin = await startAdmin(db, adminEnv(recon.url, { WORKER_HEALTH_URL: worker.url }))
      try {
        const answer = await request(admin.url, "/api/worker-health", { token: await login(admin.url, "alice") })
        assert.strictEqual(answer.http, 200)
        assert.strictEqual(answer.body.data.status, "ok")
        assert.isNull(answer.body.data.detail)
        assert.strictEqual(answer.body.data.health.ready, ready)
        assert.strictEqual(answer.body.data.health.loops.order_match_loop.restarts, 2)
        assert.isTrue(answer.headers.get("authorization")?.startsWith("Bearer "))
      } finally {
        await admin.close()
        worker.server.close()
      }
    }
  })

  it("not configured, unreachable, and only for an operator", async () => {
    const unset = await startAdmin(db, adminEnv(recon.url))
    const down = await startAdmin(db, adminEnv(recon.url, { WORKER_HEALTH_URL: "http://127.0.0.1:9" }))
    try {
      const token = await login(unset.url, "alice")
      assert.deepStrictEqual((await request(unset.url, "/api/worker-health", { token })).body.data, {
        status: "not_configured", detail: "WORKER_HEALTH_URL is not set", health: null
      })
      const unreachable = (await request(down.url, "/api/worker-health", { token })).body.data
      assert.strictEqual(unreachable.status, "unreachable")
      assert.isNull(unreachable.health)
      assert.strictEqual((await request(down.url, "/api/worker-health")).http, 401)
    } finally {
      await unset.close()
      await down.close()
    }
  })
})

/** A TCP proxy in front of PostgreSQL, so a test can take the database away from admin only. */
const proxyTo = (databaseUrl: string) =>
  new Promise<{ url: string; cut: () => void }>((resolve) => {
    const target = new URL(databaseUrl)
    const sockets = new Set<Socket>()
    const server = createTcpServer((client) => {
      const upstream = connect(Number(target.port), target.hostname)
      for (const s of [client, upstream]) {
        sockets.add(s)
        s.on("error", () => {})
        s.on("close", () => sockets.delete(s))
      }
      client.pipe(upstream).pipe(client)
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const proxied = new URL(databaseUrl)
      proxied.hostname = "127.0.0.1"
      proxied.port = String(typeof address === "object" && address ? address.port : 0)
      resolve({
        url: proxied.toString(),
        cut: () => {
          server.close()
          for (const s of sockets) s.destroy()
        }
      })
    })
  })

describe("the database going away", () => {
  it("top-info answers the 503 envelope, sync too, and websocket clients get an `unavailable` message", async () => {
    const proxy = await proxyTo(db)
    const admin = await startAdmin(proxy.url, adminEnv(recon.url))
    try {
      const token = await login(admin.url, "alice")
      const client = await openSocket(admin.url, token)
      assert.strictEqual((await client.next()).type, "top-info")
      proxy.cut()
      const answer = await request(admin.url, "/api/top-info", { token })
      assert.deepStrictEqual([answer.http, answer.body], [503, { status: 503, msg: "unavailable", data: { detail: "the database is unreachable", issues: [] } }])
      // Still an authenticated answer: the session slides even while the database is away.
      assert.isTrue(answer.headers.get("authorization")?.startsWith("Bearer "))
      const synced = await request(admin.url, "/internal/meta/ws/sync", { body: {}, headers: { "x-internal-service-token": adminEnv("").SVC_INTERNAL_SERVICE_TOKEN_RECON! } })
      assert.strictEqual(synced.http, 503)
      const message = await client.next()
      assert.strictEqual(message.type, "unavailable")
      assert.strictEqual((message as unknown as { detail: string }).detail, "the database is unreachable")
      client.close()
    } finally {
      await admin.close()
    }
  })
})
