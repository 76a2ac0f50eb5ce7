// admin_service's client of recon_service, derived from the recon HttpApi definition: the typed
// client presents the admin caller's token through CallerAuth's client middleware. recon refusing
// a request about one SMS (400, 404, 409, 422) is a ReconRefused to pass on; every other failure
// (down, slow, another error envelope, an unexpected body) becomes one ReconUnavailable.
import { Context, Duration, Effect, type Redacted, Schema } from "effect"
import { HttpApiClient } from "effect/http-api"
import type { TopInfo } from "../domain/Records.ts"
import { errorEnvelope } from "../api/Envelope.ts"
import { ReconApi } from "../api/ReconApi.ts"
import { ownServiceLayer } from "./OwnService.ts"

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

/** recon's error envelopes that refuse the request itself (the others say recon is not answering as it should). */
const isRefusal = Schema.is(Schema.Union([errorEnvelope(400), errorEnvelope(404), errorEnvelope(409), errorEnvelope(422)]))

export interface ReconClientOptions {
  readonly baseUrl: string
  readonly token: Redacted.Redacted<string>
  readonly timeout?: Duration.Input | undefined
}

/** recon's typed client, for the calls admin passes on. */
export type ReconApiClient = HttpApiClient.ForApi<typeof ReconApi>

export class ReconClient extends Context.Service<ReconClient, {
  /** recon's four top-info counters, within the timeout. */
  readonly topInfo: Effect.Effect<TopInfo, ReconUnavailable>
  /**
   * One call an operator's action makes (sms/get, check, resolve, assign, the devices, the
   * whitelist…), within the timeout: its data, recon's refusal of the request to pass on as it
   * is, or recon unavailable.
   */
  readonly call: <A>(f: (client: ReconApiClient) => Effect.Effect<{ readonly data: A }, unknown>) => Effect.Effect<A, ReconRefused | ReconUnavailable>
}>()("recon/clients/ReconClient") {
  static readonly layer = (options: ReconClientOptions) =>
    ownServiceLayer(ReconClient, {
      service: "recon_service",
      token: options.token,
      timeout: options.timeout ?? DEFAULT_TIMEOUT,
      derive: HttpApiClient.make(ReconApi, { baseUrl: options.baseUrl }),
      make: ({ call: within, client, describe }) => {
        /** The answer's data within the timeout; `refuse`: recon's refusals of the request are passed on. */
        const answer = <A, Refused = never>(call: Effect.Effect<{ readonly data: A }, unknown>, refuse = false) =>
          within(Effect.map(call, (envelope) => envelope.data), (error): Effect.Effect<never, ReconUnavailable | Refused> =>
            refuse && isRefusal(error)
              ? Effect.fail(new ReconRefused({ status: error.status, detail: error.data?.detail ?? error.msg }) as Refused)
              : Effect.fail(new ReconUnavailable({ detail: describe(error) })))
        const call = <A>(f: (client: ReconApiClient) => Effect.Effect<{ readonly data: A }, unknown>) =>
          answer<A, ReconRefused>(f(client), true)
        return { topInfo: answer(client.stats.topInfo({ payload: {} })), call }
      }
    })
}
