// admin_service's client of recon_service, derived from the recon HttpApi definition: the typed
// client presents the admin caller's token through CallerAuth's client middleware. recon refusing
// a request about one SMS (400, 404, 409, 422) is a ReconRefused to pass on; every other failure
// (down, slow, another error envelope, an unexpected body) becomes one ReconUnavailable.
import { Cause, Context, Duration, Effect, Layer, Schema } from "effect"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import type { Sms as SmsRecord, SmsDetail as SmsDetailRecord, TopInfo } from "../domain/Records.ts"
import { CallerAuth, TOKEN_HEADER } from "../http/CallerAuth.ts"
import { ReconApi } from "../http/ReconApi.ts"

export const DEFAULT_TIMEOUT = Duration.seconds(2)

/** Why recon's counters are missing; `detail` is safe to show (no URL, no token). */
export class ReconUnavailable extends Schema.TaggedError<ReconUnavailable>()("ReconUnavailable", {
  detail: Schema.String
}) {}

/** recon's answer to a request it refused, to show the operator as it is. */
export class ReconRefused extends Schema.TaggedError<ReconRefused>()("ReconRefused", {
  status: Schema.Literals([400, 404, 409, 422]),
  detail: Schema.String
}) {}

const refusable = new Set([400, 404, 409, 422])

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

type Sms = typeof SmsRecord.Type
type SmsDetail = typeof SmsDetailRecord.Type
export interface CheckRequest {
  readonly id: number
  readonly result: "pass" | "reject"
  readonly operator: string
}
export interface ResolveRequest {
  readonly id: number
  readonly action: "approve" | "reject"
  readonly deposit_id?: number
  readonly operator: string
}

export class ReconClient extends Context.Service<ReconClient, {
  /** recon's four top-info counters, within the timeout. */
  readonly topInfo: Effect.Effect<TopInfo, ReconUnavailable>
  readonly getSms: (id: number) => Effect.Effect<SmsDetail, ReconRefused | ReconUnavailable>
  /** /shooter/sms/check: a need_check SMS passed on to parsing or rejected, by `operator`. */
  readonly checkSms: (payload: CheckRequest) => Effect.Effect<Sms, ReconRefused | ReconUnavailable>
  /** /shooter/sms/resolve: a manual_review or unmatched SMS approved to a deposit or rejected, by `operator`. */
  readonly resolveSms: (payload: ResolveRequest) => Effect.Effect<Sms, ReconRefused | ReconUnavailable>
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
        /** The answer's data within the timeout; `refuse`: recon's refusals of the request are passed on. */
        const answer = <A, E, Refused = never>(call: Effect.Effect<{ readonly data: A }, E>, refuse = false) =>
          call.pipe(
            Effect.map((envelope) => envelope.data),
            Effect.timeout(timeout),
            Effect.catchCause((cause): Effect.Effect<never, ReconUnavailable | Refused> => {
              if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
              const reasons = cause.reasons
              const failure = reasons.find((r) => r._tag === "Fail")
              // A defect inside the client (never expected) still only makes recon unavailable.
              const error = failure?._tag === "Fail" ? failure.error : reasons.find((r) => r._tag === "Die")
              if (refuse && isEnvelope(error) && refusable.has(error.status)) {
                const data = (error as { data?: { detail?: unknown } | null }).data
                return Effect.fail(new ReconRefused({
                  status: error.status as ReconRefused["status"],
                  detail: typeof data?.detail === "string" ? data.detail : error.msg
                }) as Refused)
              }
              return Effect.fail(new ReconUnavailable({ detail: describe(error, timeout) }))
            })
          )
        return {
          topInfo: answer(client.stats.topInfo({ payload: {} })),
          getSms: (id) => answer<SmsDetail, unknown, ReconRefused>(client.sms.get({ payload: { id } }), true),
          checkSms: (payload) => answer<Sms, unknown, ReconRefused>(client.sms.check({ payload }), true),
          resolveSms: (payload) => answer<Sms, unknown, ReconRefused>(client.sms.resolve({ payload }), true)
        }
      })
    ).pipe(Layer.provide([callerToken, FetchHttpClient.layer]))
  }
}
