// A hostile mix against every route of the four services of `all` (recon, wallet, admin, the
// worker's push port): bodies at and over the 64 KiB cap, JSON nested 10,000 deep, long keywords,
// wrong types, no token and a wrong one, unknown devices and odd paths. Used by the fuzz test
// (test/http/HostileFuzz.test.ts: no 5xx, no refused request that changes state) and by the memory
// benchmark (bench/hostile.ts: the same mix, round after round).
import { AdminApi } from "../../src/api/AdminApi.ts"
import { ReconApi } from "../../src/api/ReconApi.ts"
import { WalletApi } from "../../src/api/WalletApi.ts"
import { SOCKET_PATH } from "../../src/admin/TopInfoSocket.ts"
import { EXPORT_PATH } from "../../src/admin/SmsExport.ts"

export interface Bases {
  readonly recon: string
  readonly wallet: string
  readonly admin: string
  readonly push: string
}

export interface Credentials {
  /** The token recon_service takes from admin_service, and wallet_service's from recon_service. */
  readonly admin: string
  readonly recon: string
  /** An operator's session for admin_service's /api routes (none: only the refusals before it). */
  readonly session?: string
}

export interface HostileRequest {
  readonly url: string
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  readonly headers: Record<string, string>
  readonly body?: string
}

const routesOf = (api: { readonly groups: Record<string, { readonly endpoints: Record<string, { readonly path: string; readonly method: string }> }> }) =>
  Object.values(api.groups).flatMap((group) => Object.values(group.endpoints).map((endpoint) => ({ path: endpoint.path, method: endpoint.method })))

/** JSON nested `depth` deep, as arrays or objects. */
const deep = (depth: number, object: boolean) => object ? `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}` : `${"[".repeat(depth)}${"]".repeat(depth)}`

/** The bodies every JSON route gets: each is wrong in one way (or, for a list route, harmlessly right). */
const bodies = (): ReadonlyArray<string> => [
  "{}",
  "[]",
  "null",
  "{\"id\":\"1; DROP TABLE recon.shooter_sms\"}",
  "{\"id\":-1,\"keyword\":\"%\"}",
  "{\"id\":1e309}",
  "{\"id\":99999999999999999999}",
  `{"keyword":"${"가%_\\\\".repeat(4096)}"}`,
  `{"keyword":"${"x".repeat(60_000)}"}`,
  `{"device_id":"${"d".repeat(64 * 1024 - 20)}"}`,
  `{"pad":"${"y".repeat(64 * 1024 + 10)}"}`,
  deep(10_000, false),
  deep(10_000, true),
  "{\"a\":",
  "\uFEFF{}",
  "{\"__proto__\":{\"polluted\":1},\"constructor\":{\"prototype\":{\"x\":1}}}"
]

/**
 * The mix for one round: every JSON route of recon, wallet and admin with each body (with the
 * right caller's token, so the schema and the handler see it; the first body also with none and
 * a wrong one), pushes to unknown and odd devices, odd paths on every port.
 */
export const hostileMix = (bases: Bases, credentials: Credentials): ReadonlyArray<HostileRequest> => {
  const out: Array<HostileRequest> = []
  const json = { "content-type": "application/json" }
  const services: ReadonlyArray<{ readonly base: string; readonly routes: ReturnType<typeof routesOf>; readonly auth: Record<string, string> }> = [
    { base: bases.recon, routes: routesOf(ReconApi as never), auth: { "x-internal-service-token": credentials.admin } },
    { base: bases.wallet, routes: routesOf(WalletApi as never), auth: { "x-internal-service-token": credentials.recon } },
    {
      base: bases.admin,
      routes: routesOf(AdminApi as never),
      auth: credentials.session === undefined ? {} : { authorization: `Bearer ${credentials.session}` }
    }
  ]
  for (const { base, routes, auth } of services) {
    for (const { path, method } of routes) {
      if (method === "GET") {
        for (const query of ["", "?lang=en", `?q=${"k".repeat(8000)}`, "?a=1&a=2&a[]=3", "?%zz"]) {
          out.push({ url: `${base}${path}${query}`, method: "GET", headers: { ...auth } })
        }
        continue
      }
      out.push({ url: `${base}${path}`, method: "POST", headers: { ...json }, body: "{}" })
      out.push({ url: `${base}${path}`, method: "POST", headers: { ...json, "x-internal-service-token": "wrong", authorization: "Bearer wrong" }, body: "{}" })
      for (const body of bodies()) out.push({ url: `${base}${path}`, method: "POST", headers: { ...json, ...auth }, body })
      out.push({ url: `${base}${path}`, method: "POST", headers: { ...auth, "content-type": "text/plain" }, body: "id=1" })
      out.push({ url: `${base}${path}`, method: "PUT", headers: { ...json, ...auth }, body: "{}" })
    }
  }
  // Requests refused for what is already there (409 from the second round, or at once): the
  // template, phone and registration the first ones added.
  const template = {
    bank: "퍼즈상호",
    sample: "[퍼즈상호] 김하나 입금 7,700원 퍼즈지점",
    sender: "01055556666",
    rule: "\\] (?P<name>\\S+) 입금 (?P<amount>[\\d,]+)원"
  }
  const recon = { ...json, "x-internal-service-token": credentials.admin }
  for (const [path, body] of [
    ["/internal/recon/shooter/template/recharge/add", template],
    ["/internal/recon/shooter/template/recharge/add", template],
    ["/internal/recon/shooter/phone/add", { phone: "01099990000" }],
    ["/internal/recon/shooter/phone/add", { phone: "01099990000" }],
    ["/internal/recon/pushsvc/add_device", { device_id: "fuzz-dup", format: "smsforwarder" }],
    ["/internal/recon/pushsvc/add_device", { device_id: "fuzz-dup", format: "smsforwarder" }],
    ["/internal/recon/shooter/template/recharge/delete", { id: 999_999 }],
    ["/internal/recon/shooter/sms/resolve", { id: 999_999, operator: "fuzz", action: "approve" }]
  ] as const) {
    out.push({ url: `${bases.recon}${path}`, method: "POST", headers: recon, body: JSON.stringify(body) })
  }
  // Admin's own routes: the export with long filters, the websocket path without an upgrade.
  const session: Record<string, string> = credentials.session === undefined ? {} : { authorization: `Bearer ${credentials.session}` }
  for (const query of ["", `?keyword=${"키".repeat(3000)}`, "?status=nope", "?since=yesterday", "?lang=xx"]) {
    out.push({ url: `${bases.admin}${EXPORT_PATH}${query}`, method: "GET", headers: { ...session } })
  }
  out.push({ url: `${bases.admin}${SOCKET_PATH}?token=${"t".repeat(4000)}`, method: "GET", headers: {} })
  // The push port: unknown devices, a long id, forms at and over the cap, JSON where a form goes.
  const form = { "content-type": "application/x-www-form-urlencoded" }
  for (const device of ["nobody", "d".repeat(2000), "%00", "..%2F..%2Fetc", "한글"]) {
    out.push({ url: `${bases.push}/push/${device}`, method: "POST", headers: form, body: `from=1588&content=${encodeURIComponent("입금 1원")}&timestamp=1` })
  }
  out.push({ url: `${bases.push}/push/nobody`, method: "POST", headers: form, body: `content=${"a".repeat(64 * 1024 - 10)}` })
  out.push({ url: `${bases.push}/push/nobody`, method: "POST", headers: form, body: `content=${"a".repeat(64 * 1024 + 10)}` })
  out.push({ url: `${bases.push}/push/nobody`, method: "POST", headers: json, body: deep(10_000, true) })
  // Odd paths on every port.
  for (const base of [bases.recon, bases.wallet, bases.admin, bases.push]) {
    for (const path of ["//", "/%2e%2e/", "/health/../health", `/${"p".repeat(6000)}`, "/console/../../package.json", "/;", "/?"]) {
      out.push({ url: `${base}${path}`, method: "GET", headers: {} })
    }
  }
  return out
}

export interface Answered {
  readonly request: HostileRequest
  readonly status: number
  readonly body: string
}

/** Sends one request (0: the connection failed or took over 10 s) and reads its whole answer. */
export const send = async (request: HostileRequest): Promise<Answered> => {
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: AbortSignal.timeout(10_000)
    })
    return { request, status: response.status, body: await response.text() }
  } catch (error) {
    return { request, status: 0, body: String(error) }
  }
}
