// admin_service's client of recon_service, derived from the recon HttpApi definition: the typed
// client presents the admin caller's token through CallerAuth's client middleware, and every
// failure (down, slow, an error envelope, an unexpected body) becomes one ReconUnavailable.
import { Cause, Context, Duration, Effect, Layer, Redacted, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import type { TopInfo } from "../domain/Records.ts"
import { ReconApi } from "../http/ReconApi.ts"
import { describeFailure, failureOf, presentToken } from "./Upstream.ts"

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

export class ReconClient extends Context.Service<ReconClient, {
  /** recon's four top-info counters, within the timeout. */
  readonly topInfo: Effect.Effect<TopInfo, ReconUnavailable>
}>()("recon/clients/ReconClient") {
  static readonly layer = (options: ReconClientOptions) => {
    const timeout = options.timeout ?? DEFAULT_TIMEOUT
    return Layer.effect(
      ReconClient,
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(ReconApi, { baseUrl: options.baseUrl })
        return {
          topInfo: client.stats.topInfo({ payload: {} }).pipe(
            Effect.map((envelope) => envelope.data),
            Effect.timeout(timeout),
            Effect.catchCause((cause): Effect.Effect<never, ReconUnavailable> =>
              Cause.hasInterruptsOnly(cause)
                ? Effect.interrupt
                : Effect.fail(new ReconUnavailable({ detail: describeFailure("recon_service", failureOf(cause), timeout) }))
            )
          )
        }
      })
    ).pipe(Layer.provide([presentToken(Redacted.make(options.token)), FetchHttpClient.layer]))
  }
}
