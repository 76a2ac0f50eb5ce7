// Hostile connections against the real servers (recon, the worker's push port, admin) with short
// time-outs configured: sockets that send nothing or half a request line are closed, idle
// keep-alive connections too, and with many sockets held the health route still answers.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { connect, type Socket } from "node:net"
import type { Env } from "../../src/config/Keys.ts"
import { adminEnv, startAdmin } from "../admin/support.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { ADMIN_TOKEN, type Running, startRecon } from "../support/recon.ts"
import { startPushServer } from "../support/worker.ts"

const short: Env = {
  SVC_HTTP_HEADERS_TIMEOUT_MS: "300",
  SVC_HTTP_REQUEST_TIMEOUT_MS: "600",
  SVC_HTTP_KEEPALIVE_TIMEOUT_MS: "300"
}

interface Held {
  readonly socket: Socket
  /** Resolves with what the server sent once it closed the connection. */
  readonly closed: Promise<string>
}

const hold = (base: string, send?: string): Promise<Held> => {
  const { hostname, port } = new URL(base)
  return new Promise((resolve, reject) => {
    let received = ""
    const socket = connect(Number(port), hostname)
    const closed = new Promise<string>((done) => socket.on("close", () => done(received)))
    socket.on("data", (chunk) => (received += chunk))
    socket.on("error", () => {})
    socket.once("connect", () => {
      if (send !== undefined) socket.write(send)
      resolve({ socket, closed })
    })
    socket.once("error", reject)
  })
}

/** Closed by the server within `ms` (generous: this asserts that it happens, not how fast). */
const closedWithin = (held: Held, ms = 10_000): Promise<string | "still open"> =>
  Promise.race([held.closed, new Promise<"still open">((resolve) => setTimeout(() => resolve("still open"), ms))])

const servers: Array<{ readonly name: string; readonly health: string; start: (db: string, env: Env) => Promise<Running> }> = [
  { name: "recon_service", health: "/health", start: (db, env) => startRecon(db, { SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN, ...env }) },
  { name: "the worker's push port", health: "/health/live", start: (db, env) => startPushServer(db, env) },
  { name: "admin_service", health: "/", start: (db, env) => startAdmin(db, adminEnv("http://127.0.0.1:9", env)) }
]

let db: string
beforeAll(async () => {
  db = await createMigratedDatabase("conn")
}, 60_000)

describe.each(servers)("$name", ({ health, start }) => {
  let server: Running
  let capped: Running
  beforeAll(async () => {
    server = await start(db, short)
    capped = await start(db, { ...short, SVC_HTTP_HEADERS_TIMEOUT_MS: "60000", SVC_HTTP_REQUEST_TIMEOUT_MS: "60000", SVC_HTTP_MAX_CONNECTIONS: "50" })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await capped?.close()
  })

  it("closes a connection that sends nothing, and one that sends half a request line", async () => {
    const silent = await hold(server.url)
    const half = await hold(server.url, "GET /hea")
    assert.strictEqual(await closedWithin(silent), "")
    const answer = await closedWithin(half)
    assert.notStrictEqual(answer, "still open")
    // A request cut short by the headers time-out is answered 408 (the envelope) before closing.
    if (answer !== "") assert.match(answer, /^HTTP\/1\.1 408 [^]*\r\n\r\n\{"status":408,"msg":"request_timeout"/)
  })

  it("closes a connection that sent nothing without a word when its loop was busy as its time-outs fell due", async () => {
    // Both the socket's idle time-out and Node's request time-out check are due at once after the
    // pause (the server runs in this process): whichever runs first, no 408 is written.
    const silent = await hold(server.url)
    const busyUntil = performance.now() + 400
    while (performance.now() < busyUntil) {
      // the loop held, as by a long synchronous piece of work
    }
    assert.strictEqual(await closedWithin(silent), "")
  })

  it("closes a keep-alive connection left idle after its answer", async () => {
    const client = await hold(server.url, `GET ${health} HTTP/1.1\r\nHost: x\r\n\r\n`)
    const answer = await closedWithin(client)
    assert.match(answer, /^HTTP\/1\.1 200/)
  })

  it("still answers its health route while more sockets than its cap are held idle or stalled", async () => {
    const held = await Promise.all(Array.from({ length: 200 }, (_, i) => hold(capped.url, i % 2 === 0 ? undefined : "POST /x HTTP/1.1\r\nHost")))
    try {
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`${capped.url}${health}`)
        assert.strictEqual(response.status, 200)
        await response.arrayBuffer()
      }
      // The cap held: most of the stalled sockets were closed to make room.
      const open = held.filter((h) => !h.socket.destroyed && h.socket.readyState === "open").length
      assert.isAtMost(open, 50)
    } finally {
      for (const h of held) h.socket.destroy()
    }
  })
})

describe("2,000 held sockets", () => {
  it("recon_service's /health answers while 2,000 idle and stalled sockets are held", async () => {
    const recon = await startRecon(db)
    const held: Array<Held> = []
    try {
      for (let i = 0; i < 2000; i += 200) {
        held.push(...await Promise.all(Array.from({ length: 200 }, (_, j) => hold(recon.url, (i + j) % 3 === 0 ? "GET / HTTP/1.1\r\nX-A: " : undefined))))
      }
      const response = await fetch(`${recon.url}/health`)
      assert.strictEqual(response.status, 200)
      assert.deepStrictEqual(await response.json(), { status: "ok" })
    } finally {
      for (const h of held) h.socket.destroy()
      await recon.close()
    }
  }, 60_000)
})
