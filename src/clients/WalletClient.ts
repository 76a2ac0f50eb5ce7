// The worker's client of wallet_service, derived from the WalletApi definition: it presents the
// recon caller's token, gives up after a timeout, and answers what happened as a typed outcome
// (approved, replayed, conflict, not found, unavailable); it never fails and never retries.
import { Cause, Context, Duration, Effect, Layer, Redacted } from "effect"
import type { HttpClient } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { NO_SUCH_ROUTE } from "../http/Envelope.ts"
import { WalletApi } from "../http/WalletApi.ts"
import { timeWalletCall } from "../observability/Metrics.ts"
import { describeFailure, failureOf, isEnvelope, presentToken } from "./Upstream.ts"

export const DEFAULT_WALLET_TIMEOUT = Duration.seconds(5)

export type AgreeOutcome =
  | { readonly _tag: "Approved"; readonly depositId: number }
  | { readonly _tag: "Replayed"; readonly depositId: number }
  /** HTTP 409: the SMS funds another deposit, or the deposit is not pending (nor approved with this SMS). */
  | { readonly _tag: "Conflict"; readonly detail: string }
  /** HTTP 404: no such deposit. */
  | { readonly _tag: "NotFound"; readonly detail: string }
  /** No decision was made, or none is known: timeout, refused, 5xx, 401, an unexpected answer. Safe to send again. */
  | { readonly _tag: "Unavailable"; readonly reason: string; readonly timedOut?: true }

export interface WalletClientOptions {
  readonly baseUrl: string
  /** The recon caller's token; undefined: every call is Unavailable without a request. */
  readonly token: Redacted.Redacted<string> | undefined
  readonly timeout?: Duration.Input
}

const SERVICE = "wallet_service"

/** The outcome of a failed agree call. */
const outcomeOf = (error: unknown, timeout: Duration.Input): AgreeOutcome => {
  if (isEnvelope(error)) {
    const detail = error.data?.detail ?? error.msg
    if (error.status === 409) return { _tag: "Conflict", detail }
    // A 404 for the path itself means a wrong WALLET_SERVICE_URL, not an unknown deposit.
    if (error.status === 404 && detail !== NO_SUCH_ROUTE) return { _tag: "NotFound", detail }
    if (error.status === 404) return { _tag: "Unavailable", reason: `${SERVICE} has no agree route at this URL` }
  }
  const reason = describeFailure(SERVICE, error, timeout)
  return Cause.isTimeoutError(error) ? { _tag: "Unavailable", reason, timedOut: true } : { _tag: "Unavailable", reason }
}

export class WalletClient extends Context.Service<WalletClient, {
  /** Approves deposit `depositId` funded by SMS `smsId`, within the timeout. */
  readonly agree: (input: { readonly depositId: number; readonly smsId: number }) => Effect.Effect<AgreeOutcome>
}>()("recon/clients/WalletClient") {
  static readonly layer = (options: WalletClientOptions): Layer.Layer<WalletClient, never, HttpClient.HttpClient> => {
    const timeout = options.timeout ?? DEFAULT_WALLET_TIMEOUT
    const token = options.token
    return Layer.effect(
      WalletClient,
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(WalletApi, { baseUrl: options.baseUrl })
        return {
          agree: ({ depositId, smsId }) =>
            token === undefined
              ? Effect.succeed<AgreeOutcome>({ _tag: "Unavailable", reason: "no caller token is configured for wallet_service" })
              : client.wallet.agree({ payload: { deposit_id: depositId, sms_id: smsId } }).pipe(
                Effect.map(({ data }): AgreeOutcome => ({ _tag: data.replayed ? "Replayed" : "Approved", depositId: data.deposit_id })),
                Effect.timeout(timeout),
                Effect.catchCause((cause) =>
                  Cause.hasInterruptsOnly(cause) ? Effect.interrupt : Effect.succeed(outcomeOf(failureOf(cause), timeout))
                ),
                Effect.withSpan("wallet.agree", { attributes: { "deposit.id": depositId, "sms.id": smsId } }),
                timeWalletCall
              )
        }
      })
    ).pipe(Layer.provide(presentToken(token ?? Redacted.make(""))))
  }
}
