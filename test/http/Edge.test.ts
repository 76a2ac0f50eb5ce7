// The rules every port keeps at its edge, through the four real servers (recon_service,
// wallet_service, admin_service, the worker's push port): a Content-Encoding other than identity
// is 415, a body whose bytes are not UTF-8 is 400 (never stored as U+FFFD), and a request Node's
// HTTP parser refuses still gets the envelope, on a connection then closed.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { maxHeaderSize } from "node:http"
import { gzipSync } from "node:zlib"
import { adminEnv, startAdmin } from "../admin/support.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { exchange } from "../support/rawHttp.ts"
import { ADMIN_TOKEN, post, RECON_TOKEN, type Running, startRecon } from "../support/recon.ts"
import { startWallet } from "../support/wallet.ts"
import { register, smsRows, startPushServer } from "../support/worker.ts"

// Short time-outs: a request left incomplete is answered 408 within a second.
const SHORT = { SVC_HTTP_HEADERS_TIMEOUT_MS: "300", SVC_HTTP_REQUEST_TIMEOUT_MS: "600" }

interface Service {
  readonly name: string
  readonly server: () => Running
  /** A GET route and a POST route with what they need to be let in. */
  readonly get: string
  readonly post: { readonly path: string; readonly headers: Record<string, string>; readonly body: string }
}

let db: string
let recon: Running
let wallet: Running
let admin: Running
let push: Running
beforeAll(async () => {
  db = await createMigratedDatabase("edge")
  recon = await startRecon(db, { SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN, ...SHORT })
  wallet = await startWallet(db, { SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN, ...SHORT })
  admin = await startAdmin(db, adminEnv(recon.url, SHORT))
  push = await startPushServer(db, SHORT)
  await register(db, { deviceId: "edge-fwd", format: "smsforwarder" })
}, 60_000)
afterAll(async () => {
  await Promise.all([recon, wallet, admin, push].map((server) => server?.close()))
})

const JSON_TYPE = { "content-type": "application/json" }
const services: ReadonlyArray<Service> = [
  {
    name: "recon_service",
    server: () => recon,
    get: "/health",
    post: { path: "/internal/recon/stats/top-info", headers: { ...JSON_TYPE, "x-internal-service-token": ADMIN_TOKEN }, body: "{}" }
  },
  {
    name: "wallet_service",
    server: () => wallet,
    get: "/health",
    post: { path: "/internal/wallet/deposit/agree", headers: { ...JSON_TYPE, "x-internal-service-token": RECON_TOKEN }, body: "{\"deposit_id\":999999}" }
  },
  {
    name: "admin_service",
    server: () => admin,
    get: "/",
    post: { path: "/api/auth/login", headers: JSON_TYPE, body: "{\"account\":\"nobody\",\"password\":\"x\"}" }
  },
  {
    name: "the worker's push port",
    server: () => push,
    get: "/health/live",
    post: {
      path: "/push/edge-fwd",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `from=15889999&content=${encodeURIComponent("입금 1원 edge")}&timestamp=${Date.now()}`
    }
  }
]

const assertEnvelope = (answer: { http: number; body: any }, status: number, msg: string, detail?: RegExp) => {
  assert.strictEqual(answer.http, status, JSON.stringify(answer.body))
  assert.strictEqual(answer.body.status, status)
  assert.strictEqual(answer.body.msg, msg)
  if (detail !== undefined) assert.match(answer.body.data.detail, detail)
}

const send = async (base: string, path: string, init: RequestInit) => {
  const response = await fetch(`${base}${path}`, init)
  const text = await response.text()
  return { http: response.status, headers: response.headers, body: text === "" ? null : JSON.parse(text) }
}

describe.each(services)("$name", ({ server, get, post: route }) => {
  it("refuses any Content-Encoding but identity with 415 on its routes, and takes identity", async () => {
    for (const coding of ["gzip", "br", "deflate", "x-custom", "identity, gzip", "GZIP"]) {
      for (const init of [
        { method: "GET", headers: { "content-encoding": coding } },
        { method: "POST", headers: { ...route.headers, "content-encoding": coding }, body: route.body }
      ]) {
        const answer = await send(server().url, init.method === "GET" ? get : route.path, init)
        assertEnvelope(answer, 415, "unsupported_media_type", /^Content-Encoding .+ is not accepted: send the body unencoded \(identity\)$/)
        assert.strictEqual(answer.headers.get("accept-encoding"), "identity")
      }
    }
    const identity = await send(server().url, route.path, { method: "POST", headers: { ...route.headers, "content-encoding": "identity" }, body: route.body })
    assert.notStrictEqual(identity.http, 415)
  })

  it("answers a request Node's parser refuses with the envelope and Connection: close", async () => {
    const host = new URL(server().url).host
    const cases: ReadonlyArray<readonly [string, number, string]> = [
      [`FOO ${get} HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 400, "the method is not one HTTP/1.1 knows"],
      [`GET /he\u0001alth HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 400, "the request target has characters HTTP does not allow"],
      [`GET ${get} HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${"a".repeat(maxHeaderSize)}\r\n\r\n`, 431, `the request's headers are over ${maxHeaderSize} bytes`],
      [`GET ${get} HTTP/1.1\r\nHost: ${host}\r\nBad Header: x\r\n\r\n`, 400, "the request is not valid HTTP/1.1"]
    ]
    for (const [request, status, detail] of cases) {
      const answer = await exchange(server().url, request)
      assert.strictEqual(answer.status, status, answer.raw)
      assert.strictEqual(answer.headers.connection, "close")
      assert.strictEqual(answer.headers["content-type"], "application/json")
      assert.strictEqual(Number(answer.headers["content-length"]), Buffer.byteLength(answer.body))
      const msg = { 400: "bad_request", 431: "request_header_fields_too_large" }[status]
      assert.deepStrictEqual(JSON.parse(answer.body), { status, msg, data: { detail, issues: [] } })
    }
  })

  it("answers a request not complete within its time-out 408 with the envelope", async () => {
    // A header that never ends, a byte every 100 ms: never idle, so only the request time-out ends it.
    const answer = await exchange(server().url, `GET ${get} HTTP/1.1\r\nHost: x\r\nX-Slow: `, { trickle: true })
    assert.strictEqual(answer.status, 408, answer.raw)
    assert.strictEqual(answer.headers.connection, "close")
    assert.deepStrictEqual(JSON.parse(answer.body), {
      status: 408,
      msg: "request_timeout",
      data: { detail: "the request was not complete within its time-out", issues: [] }
    })
  })
})

describe("body bytes that are not UTF-8", () => {
  // `{"note":"<0xff>"}`-like bodies: a byte no UTF-8 text has, and a surrogate encoded in UTF-8 (CESU-8).
  const withBytes = (json: string, bytes: ReadonlyArray<number>) => {
    const [before, after] = json.split("@")
    return Buffer.concat([Buffer.from(before!), Buffer.from(bytes), Buffer.from(after!)])
  }
  const BAD = [[0xff], [0xed, 0xa0, 0x80], [0xc3]]

  it("are 400 on every JSON route, and nothing is stored in their place as U+FFFD", async () => {
    for (const bytes of BAD) {
      const routes = [
        { base: recon.url, path: "/internal/recon/shooter/phone/add", headers: { ...JSON_TYPE, "x-internal-service-token": ADMIN_TOKEN }, body: withBytes("{\"phone\":\"010-5555-0001\",\"note\":\"@\"}", bytes) },
        { base: wallet.url, path: "/internal/wallet/deposit/agree", headers: { ...JSON_TYPE, "x-internal-service-token": RECON_TOKEN }, body: withBytes("{\"deposit_id\":1,\"x\":\"@\"}", bytes) },
        { base: admin.url, path: "/api/auth/login", headers: JSON_TYPE, body: withBytes("{\"account\":\"@\",\"password\":\"x\"}", bytes) }
      ]
      for (const route of routes) {
        assertEnvelope(await send(route.base, route.path, { method: "POST", headers: route.headers, body: route.body }), 400, "bad_request", /^the body is not valid UTF-8$/)
      }
      const pushed = await send(push.url, "/push/edge-fwd", { method: "POST", headers: JSON_TYPE, body: withBytes(`{"from":"15889999","content":"입금 @","timestamp":"${Date.now()}"}`, bytes) })
      assertEnvelope(pushed, 400, "bad_request", /not valid UTF-8/)
      const form = await send(push.url, "/push/edge-fwd", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `from=15889999&timestamp=${Date.now()}&content=${bytes.map((b) => `%${b.toString(16).toUpperCase()}`).join("")}`
      })
      assertEnvelope(form, 400, "bad_request", /%-escapes are not UTF-8/)
    }
    const phones = await post(recon.url, "/internal/recon/shooter/phone/list", { keyword: "5555" })
    assert.strictEqual(phones.body.data.total, 0)
    assert.isFalse((await smsRows(db, ["edge-fwd"])).some((row) => row.body.includes("\uFFFD")))
  })
})

describe("the push route, encoded bodies", () => {
  it("refuses a really gzipped body with 415 (nothing is inflated) and stores nothing", async () => {
    const before = (await smsRows(db, ["edge-fwd"])).length
    const body = gzipSync(Buffer.from(`from=15889999&content=${encodeURIComponent("입금 2원 gzip")}&timestamp=${Date.now()}`))
    const answer = await send(push.url, "/push/edge-fwd", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "content-encoding": "gzip" },
      body
    })
    assertEnvelope(answer, 415, "unsupported_media_type")
    assert.strictEqual((await smsRows(db, ["edge-fwd"])).length, before)
  })
})

describe.each(services)("$name: odd request targets", ({ server }) => {
  it("answers //, / /, //x and ///? with a 4xx envelope, never a 5xx", async () => {
    const host = new URL(server().url).host
    for (const target of ["//", "///", "//x", "//x/y?lang=en", "/%20/", "/ /", "//?token=a", "/%2F%2F", "//:0", "//[::1"]) {
      const answer = await exchange(server().url, `GET ${target.replace(" ", "%20")} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
      assert.isTrue(answer.status >= 200 && answer.status < 500, `${target}: ${answer.raw}`)
      if (answer.status >= 400) assert.strictEqual(JSON.parse(answer.body).status, answer.status, answer.raw)
    }
  })
})
