// SMS Gateway for Android (android-sms-gateway) 3rd-party API: the inbox export that makes a phone
// re-send received messages through its `sms:received` webhook. Credentials ride in the api_url.
import { Context, DateTime, Duration, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { callJson, clip, scrubber } from "./Upstream.ts"

/** A failed export request. `reason` is safe to log: it never holds the URL or the credentials. */
export class SmsGatewayExportFailed extends Schema.TaggedError<SmsGatewayExportFailed>()("SmsGatewayExportFailed", {
  reason: Schema.String,
  status: Schema.optionalKey(Schema.Int)
}) {}

export interface ExportRequest {
  /** SMS Gateway's own id of the phone (the webhook's `deviceId`). */
  readonly deviceId: string
  readonly since: DateTime.Utc
  readonly until: DateTime.Utc
}

/** An api_url taken apart: the base without userinfo, and the Basic credentials it carried. */
export interface GatewayEndpoint {
  readonly base: URL
  readonly credentials: Option.Option<{ readonly username: string; readonly password: Redacted.Redacted<string> }>
}

/** One request's time limit: the gateway only queues the export, so it answers at once. */
export const EXPORT_TIMEOUT = Duration.seconds(10)

/**
 * The export route relative to api_url. The contract (PUSH_PROTOCOL) names `{api_url}/inbox/export`,
 * which is where the official clients post (client-ts `exportInbox`, client-php
 * `RequestInboxExport`: `…/3rdparty/v1/inbox/export`). The server itself routes it under the
 * messages group (`/3rdparty/v1/messages/inbox/export`, as docs.sms-gate.app "Reading Messages"
 * shows; the phone's local server likewise), so a 404/405 on the first is retried on the second.
 */
const EXPORT_PATHS = ["/inbox/export", "/messages/inbox/export"] as const

const safeDecode = (part: string): string => Result.getOrElse(Result.try(() => decodeURIComponent(part)), () => part)

/** Parses an api_url (`https://user:pass@host/3rdparty/v1`); the error never echoes the URL. */
export const parseApiUrl = (apiUrl: string): Result.Result<GatewayEndpoint, SmsGatewayExportFailed> => {
  const parsed = Result.try({
    try: () => new URL(apiUrl.trim()),
    catch: () => new SmsGatewayExportFailed({ reason: "api_url is not a valid URL" })
  })
  return Result.flatMap(parsed, (url) => {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return Result.fail(new SmsGatewayExportFailed({ reason: "api_url is not an http(s) URL" }))
    }
    // WHATWG URL keeps userinfo percent-encoded; fetch refuses URLs that carry it.
    const credentials = url.username === "" && url.password === ""
      ? Option.none()
      : Option.some({ username: safeDecode(url.username), password: Redacted.make(safeDecode(url.password)) })
    const base = new URL(url.href)
    base.username = ""
    base.password = ""
    base.hash = ""
    base.pathname = base.pathname.replace(/\/+$/, "")
    return Result.succeed({ base, credentials })
  })
}

const routeOf = (base: URL, path: string): URL => {
  const url = new URL(base.href)
  url.pathname = `${base.pathname}${path}`
  return url
}

/** The gateway's error body: `{"message": …}`. */
const decodeGatewayError = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({ message: Schema.String })))

export class SmsGatewayClient extends Context.Service<SmsGatewayClient, {
  /** Asks the gateway at `apiUrl` to re-send the phone's inbox of [since, until] (success: 2xx, documented 202). */
  readonly exportInbox: (apiUrl: string, request: ExportRequest) => Effect.Effect<void, SmsGatewayExportFailed>
}>()("recon/clients/SmsGatewayClient") {
  /** Built from the HttpClient of the layer graph (the worker's fetch client). */
  static readonly make = Effect.gen(function*() {
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)

    /** One export request: its status when not 2xx, else nothing (the body of a 2xx is not read for meaning). */
    const post = (endpoint: GatewayEndpoint, path: string, request: ExportRequest) => {
      const scrub = scrubber(Option.match(endpoint.credentials, { onNone: () => "", onSome: (c) => Redacted.value(c.password) }))
      const httpRequest = HttpClientRequest.post(routeOf(endpoint.base, path)).pipe(
        HttpClientRequest.acceptJson,
        HttpClientRequest.bodyJsonUnsafe({
          deviceId: request.deviceId,
          since: DateTime.formatIso(request.since),
          until: DateTime.formatIso(request.until)
        }),
        (r) => Option.match(endpoint.credentials, { onNone: () => r, onSome: (c) => HttpClientRequest.basicAuth(r, c.username, c.password) })
      )
      return callJson(client, httpRequest, { body: Schema.String, timeout: EXPORT_TIMEOUT }).pipe(
        Effect.as(Option.none<{ readonly status: number; readonly detail: string }>()),
        Effect.catchTags({
          UpstreamStatus: ({ body, status }) =>
            Effect.succeed(Option.some({
              status,
              detail: Option.match(decodeGatewayError(body), { onNone: () => "", onSome: (e) => `: ${scrub(clip(e.message, 160))}` })
            })),
          UpstreamTimeout: () => Effect.fail(new SmsGatewayExportFailed({ reason: `no answer within ${Duration.format(EXPORT_TIMEOUT)}` })),
          // The transport error's text names the URL: say only what kind of failure it was.
          UpstreamUnreachable: ({ kind }) => Effect.fail(new SmsGatewayExportFailed({ reason: `gateway unreachable (${kind})` })),
          UpstreamMalformed: () => Effect.succeed(Option.none()) // a 2xx: Schema.String takes any text
        })
      )
    }

    const exportInbox = (apiUrl: string, request: ExportRequest): Effect.Effect<void, SmsGatewayExportFailed> =>
      Effect.gen(function*() {
        const endpoint = yield* Effect.fromResult(parseApiUrl(apiUrl))
        for (const [index, path] of EXPORT_PATHS.entries()) {
          const refused = yield* post(endpoint, path, request)
          if (Option.isNone(refused)) return
          const { detail, status } = refused.value
          const notHere = status === 404 || status === 405
          if (notHere && index < EXPORT_PATHS.length - 1) continue
          return yield* new SmsGatewayExportFailed({ reason: `gateway answered HTTP ${status}${detail}`, status })
        }
      }).pipe(Effect.provideService(HttpClient.TracerDisabledWhen, () => true))

    return SmsGatewayClient.of({ exportInbox })
  })

  /** Needs the HttpClient of the layer graph. */
  static readonly layer = Layer.effect(SmsGatewayClient, SmsGatewayClient.make)
}
