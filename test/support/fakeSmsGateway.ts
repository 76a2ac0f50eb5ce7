// A local stand-in for the SMS Gateway for Android 3rd-party API's inbox export: records every
// request (path, Authorization header, JSON body) and answers per phone like the real server.
import { Effect } from "effect"
import { callLog, json, serveLoopback } from "./fakeServer.ts"

export interface ExportCall {
  readonly method: string | undefined
  readonly path: string | undefined
  readonly authorization: string | undefined
  readonly contentType: string | undefined
  readonly body: { readonly deviceId?: string; readonly since?: string; readonly until?: string } | undefined
}

/** How the gateway treats a phone's export: 202, HTTP 500, or never answering. */
export type Behaviour = "accept" | "fail" | "hang"

export interface FakeSmsGatewayOptions {
  /** Paths that answer; anything else is 404 (the real server's messages group: `/3rdparty/v1/messages/inbox/export`). */
  readonly routes?: ReadonlyArray<string>
  /** When set, requests without exactly these Basic credentials get 401. */
  readonly credentials?: { readonly username: string; readonly password: string }
}

export interface FakeSmsGateway {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly calls: Array<ExportCall>
  /** Export requests that reached a route (not 404/401). */
  readonly exports: () => ReadonlyArray<ExportCall>
  readonly behave: (deviceId: string, behaviour: Behaviour) => void
  /** Resumes once `n` requests have arrived. */
  readonly arrived: (n: number) => Effect.Effect<void>
}

export const fakeSmsGateway = (options: FakeSmsGatewayOptions = {}) =>
  Effect.gen(function*() {
    const routes = options.routes ?? ["/3rdparty/v1/inbox/export"]
    const log = callLog<ExportCall>()
    const accepted = new Set<ExportCall>()
    const behaviours = new Map<string, Behaviour>()
    const expected = options.credentials === undefined
      ? undefined
      : `Basic ${Buffer.from(`${options.credentials.username}:${options.credentials.password}`, "utf8").toString("base64")}`

    const origin = yield* serveLoopback((req, res, text) => {
      let body: ExportCall["body"]
      try {
        body = JSON.parse(text)
      } catch {
        body = undefined
      }
      const call: ExportCall = {
        method: req.method,
        path: req.url,
        authorization: req.headers.authorization,
        contentType: req.headers["content-type"],
        body
      }
      log.record(call)

      if (expected !== undefined && req.headers.authorization !== expected) return json(res, 401, { message: "Unauthorized" })
      if (req.method !== "POST" || !routes.includes(req.url ?? "")) return json(res, 404, { message: "Cannot POST" })
      // The server validates deviceId (required) and since <= until, both RFC 3339.
      const since = Date.parse(body?.since ?? "")
      const until = Date.parse(body?.until ?? "")
      if (!body?.deviceId || Number.isNaN(since) || Number.isNaN(until) || since > until) {
        return json(res, 400, { message: "invalid request" })
      }
      accepted.add(call)
      const behaviour = behaviours.get(body.deviceId) ?? "accept"
      if (behaviour === "hang") return
      if (behaviour === "fail") return json(res, 500, { message: "failed to export inbox" })
      res.writeHead(202, { "content-type": "text/plain; charset=utf-8" }).end("Accepted")
    })

    const gateway: FakeSmsGateway = {
      origin,
      calls: log.calls,
      exports: () => log.calls.filter((call) => accepted.has(call)),
      behave: (deviceId, behaviour) => void behaviours.set(deviceId, behaviour),
      arrived: log.arrived
    }
    return gateway
  })
