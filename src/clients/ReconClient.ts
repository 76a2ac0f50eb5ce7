// admin_service's client of recon_service, derived from the recon HttpApi definition: the typed
// client presents the admin caller's token through CallerAuth's client middleware, and every
// failure (down, slow, an error envelope, an unexpected body) becomes one ReconUnavailable.
import { Cause, Context, Duration, Effect, Layer, Schema } from "effect"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import type { TopInfo } from "../domain/Records.ts"
import { CallerAuth, TOKEN_HEADER } from "../http/CallerAuth.ts"
import { ReconApi } from "../http/ReconApi.ts"

export const DEFAULT_TIMEOUT = Duration.seconds(2)

/** Why recon's counters are missing; `detail` is safe to show (no URL, no token). */
export class ReconUnavailable extends Schema.TaggedError<ReconUnavailable>()("ReconUnavailable", {
  detail: Schema.String
}) {}

export interface ReconClientOptions {
  readonly baseUrl: string
  readonly token: string
  readonly timeout?: Duration.Input | undefined
}

const isEnvelope = (u: unknown): u is { readonly status: number; readonly msg: string } =>
  typeof u === "object" && u !== null && "status" in u && "msg" in u && typeof u.status === "number"

const describe = (error: unknown, timeout: Duration.Input): string => {
  const tag = (error as { _tag?: unknown })?._tag
  if (tag === "TimeoutError") return `recon_service did not answer within ${Duration.format(Duration.fromInputUnsafe(timeout))}`
  if (isEnvelope(error)) return `recon_service answered ${error.status} ${error.msg}`
  if (tag === "HttpClientError") {
    const reason = (error as { reason: { _tag: string; response?: { status: number } } }).reason
    return reason._tag === "TransportError"
      ? "recon_service is unreachable"
      : reason.response !== undefined
      ? `recon_service answered HTTP ${reason.response.status}`
      : "recon_service gave an unexpected answer"
  }
  return "recon_service gave an unexpected answer"
}

export class ReconClient extends Context.Service<ReconClient, {
  /** recon's four top-info counters, within the timeout. */
  readonly topInfo: Effect.Effect<TopInfo, ReconUnavailable>
}>()("recon/clients/ReconClient") {
  static readonly layer = (options: ReconClientOptions) => {
    const timeout = options.timeout ?? DEFAULT_TIMEOUT
    // What CallerAuth's `requiredForClient` asks for: the header on every request of the client.
    const callerToken = HttpApiMiddleware.layerClient(CallerAuth, ({ next, request }) =>
      next(HttpClientRequest.setHeader(request, TOKEN_HEADER, options.token)))
    return Layer.effect(
      ReconClient,
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(ReconApi, { baseUrl: options.baseUrl })
        return {
          topInfo: client.stats.topInfo({ payload: {} }).pipe(
            Effect.map((envelope) => envelope.data),
            Effect.timeout(timeout),
            Effect.catchCause((cause): Effect.Effect<never, ReconUnavailable> => {
              if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
              const reasons = cause.reasons
              const failure = reasons.find((r) => r._tag === "Fail")
              // A defect inside the client (never expected) still only makes recon unavailable.
              const error = failure?._tag === "Fail" ? failure.error : reasons.find((r) => r._tag === "Die")
              return Effect.fail(new ReconUnavailable({ detail: describe(error, timeout) }))
            })
          )
        }
      })
    ).pipe(Layer.provide([callerToken, FetchHttpClient.layer]))
  }
}
