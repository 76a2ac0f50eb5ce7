// The worker's client of wallet_service, derived from the WalletApi definition: it presents the
// recon caller's token, gives up after a timeout, and answers what happened as a typed outcome
// (approved, replayed, conflict, not found, unavailable); it never fails and never retries. Several
// approvals go in one agree_batch call; a wallet_service without that route gets them one by one.
import { Cause, Context, Duration, Effect, type Layer, type Redacted } from "effect"
import type { HttpClient } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { NO_SUCH_ROUTE } from "../api/Envelope.ts"
import { type AgreeItemResult, WalletApi } from "../api/WalletApi.ts"
import type { AgreeOutcome } from "../domain/Matching.ts"
import { timeWalletCall, timeWalletCalls } from "../observability/Metrics.ts"
import { isEnvelope, ownServiceLayer } from "./OwnService.ts"

export const DEFAULT_WALLET_TIMEOUT = Duration.seconds(5)

export interface AgreeInput {
  readonly depositId: number
  readonly smsId: number
}

export interface WalletClientOptions {
  readonly baseUrl: string
  /** The recon caller's token; undefined: every call is Unavailable without a request. */
  readonly token: Redacted.Redacted<string> | undefined
  readonly timeout?: Duration.Input
}

const SERVICE = "wallet_service"

/** What an agree_batch item's answer means, as agree's answer would. */
const itemOutcome = (item: AgreeItemResult): AgreeOutcome => {
  switch (item.outcome) {
    case "approved":
      return { _tag: "Approved", depositId: item.deposit_id }
    case "replayed":
      return { _tag: "Replayed", depositId: item.deposit_id }
    case "conflict":
      return { _tag: "Conflict", detail: item.detail ?? "conflict" }
    case "not_found":
      return { _tag: "NotFound", detail: item.detail ?? `deposit ${item.deposit_id} not found` }
  }
}

/** A 404 for the path itself: the route is not there (a wallet_service older than agree_batch). */
const noSuchRoute = (error: unknown) => isEnvelope(error) && error.status === 404 && (error.data?.detail ?? error.msg) === NO_SUCH_ROUTE

/** The outcome of a failed agree call. */
const outcomeOf = (error: unknown, describe: (error: unknown) => string): AgreeOutcome => {
  if (isEnvelope(error)) {
    const detail = error.data?.detail ?? error.msg
    if (error.status === 409) return { _tag: "Conflict", detail }
    // A 404 for the path itself means a wrong WALLET_SERVICE_URL, not an unknown deposit.
    if (error.status === 404 && detail !== NO_SUCH_ROUTE) return { _tag: "NotFound", detail }
    if (error.status === 404) return { _tag: "Unavailable", reason: `${SERVICE} has no agree route at this URL` }
  }
  return unavailable(error, describe)
}

/** wallet_service gave no usable answer; a timeout says so (the wallet call metric counts it apart). */
const unavailable = (error: unknown, describe: (error: unknown) => string): AgreeOutcome => {
  const reason = describe(error)
  return Cause.isTimeoutError(error) ? { _tag: "Unavailable", reason, timedOut: true } : { _tag: "Unavailable", reason }
}

export class WalletClient extends Context.Service<WalletClient, {
  /** Approves deposit `depositId` funded by SMS `smsId`, within the timeout. */
  readonly agree: (input: AgreeInput) => Effect.Effect<AgreeOutcome>
  /**
   * Approves several deposits in one call and one wallet transaction (1 to AGREE_BATCH_MAX), within
   * the timeout: each one's outcome in the order given, all Unavailable when the call failed.
   */
  readonly agreeBatch: (inputs: ReadonlyArray<AgreeInput>) => Effect.Effect<ReadonlyArray<AgreeOutcome>>
}>()("recon/clients/WalletClient") {
  static readonly layer = (options: WalletClientOptions): Layer.Layer<WalletClient, never, HttpClient.HttpClient> =>
    ownServiceLayer(WalletClient, {
      service: SERVICE,
      token: options.token,
      timeout: options.timeout ?? DEFAULT_WALLET_TIMEOUT,
      derive: HttpApiClient.make(WalletApi, { baseUrl: options.baseUrl }),
      make: ({ call, client, describe, withToken }) => {
        const noToken = (reason: string): AgreeOutcome => ({ _tag: "Unavailable", reason })
        const agree = ({ depositId, smsId }: AgreeInput) =>
          withToken(
            call(
              client.wallet.agree({ payload: { deposit_id: depositId, sms_id: smsId } }).pipe(
                Effect.map(({ data }): AgreeOutcome => ({ _tag: data.replayed ? "Replayed" : "Approved", depositId: data.deposit_id }))
              ),
              (error) => Effect.succeed(outcomeOf(error, describe))
            ).pipe(
              Effect.withSpan("wallet.agree", { attributes: { "deposit.id": depositId, "sms.id": smsId } }),
              timeWalletCall
            ),
            noToken
          )
        // Set once a wallet_service answered that it has no agree_batch route: one call per approval from then on.
        let batchless = false
        const oneByOne = (inputs: ReadonlyArray<AgreeInput>) => Effect.forEach(inputs, agree, { concurrency: "unbounded" })
        const agreeBatch = (inputs: ReadonlyArray<AgreeInput>): Effect.Effect<ReadonlyArray<AgreeOutcome>> =>
          withToken(
            // One approval is the single route's (the same wallet.agree, one subtransaction less).
            batchless || inputs.length === 1
              ? oneByOne(inputs)
              : call(
                client.wallet.agreeBatch({ payload: { items: inputs.map((i) => ({ deposit_id: i.depositId, sms_id: i.smsId })) } }).pipe(
                  Effect.map(({ data }) => data.items.map(itemOutcome))
                ),
                (error) => {
                  if (noSuchRoute(error)) {
                    batchless = true
                    return Effect.andThen(
                      Effect.logWarning(`${SERVICE} has no agree_batch route (older than this worker): approvals are sent one by one`),
                      oneByOne(inputs)
                    )
                  }
                  // The wallet answers each deposit inside a 200: a failed call says nothing about any one of them.
                  const outcome = unavailable(error, describe)
                  return Effect.succeed(inputs.map(() => outcome))
                }
              ).pipe(
                Effect.withSpan("wallet.agree_batch", { attributes: { "deposit.count": inputs.length } }),
                timeWalletCalls
              ),
            (reason) => inputs.map(() => noToken(reason))
          )
        return { agree, agreeBatch }
      }
    })
}
