// The worker's client of admin_service's POST /internal/meta/ws/sync, derived from the AdminApi
// definition: the recon caller's token, a timeout, and Synced or Unavailable (never a failure).
import { Cause, Context, Duration, Effect, Layer, Redacted } from "effect"
import { HttpClient } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { AdminApi } from "../api/AdminApi.ts"
import { describeFailure, failureOf, presentToken } from "./Upstream.ts"

export const DEFAULT_ADMIN_TIMEOUT = Duration.seconds(5)

export type SyncOutcome = { readonly _tag: "Synced" } | { readonly _tag: "Unavailable"; readonly reason: string }

export interface AdminClientOptions {
  readonly baseUrl: string
  /** The recon caller's token; undefined: every call is Unavailable without a request. */
  readonly token: Redacted.Redacted<string> | undefined
  readonly timeout?: Duration.Input
}

const SERVICE = "admin_service"

export class AdminClient extends Context.Service<AdminClient, {
  /** Asks admin_service to push fresh top-info to every websocket client now. */
  readonly sync: Effect.Effect<SyncOutcome>
}>()("recon/clients/AdminClient") {
  static readonly layer = (options: AdminClientOptions): Layer.Layer<AdminClient, never, HttpClient.HttpClient> => {
    const timeout = options.timeout ?? DEFAULT_ADMIN_TIMEOUT
    const token = options.token
    return Layer.effect(
      AdminClient,
      Effect.gen(function*() {
        const sync = yield* HttpApiClient.endpoint(AdminApi, {
          group: "sync",
          endpoint: "sync",
          httpClient: yield* HttpClient.HttpClient,
          baseUrl: options.baseUrl
        })
        return {
          sync: token === undefined
            ? Effect.succeed<SyncOutcome>({ _tag: "Unavailable", reason: "no caller token is configured for admin_service" })
            : sync({ payload: {} }).pipe(
              Effect.as<SyncOutcome>({ _tag: "Synced" }),
              Effect.timeout(timeout),
              Effect.catchCause((cause) =>
                Cause.hasInterruptsOnly(cause)
                  ? Effect.interrupt
                  : Effect.succeed<SyncOutcome>({ _tag: "Unavailable", reason: describeFailure(SERVICE, failureOf(cause), timeout) })
              )
            )
        }
      })
    ).pipe(Layer.provide(presentToken(token ?? Redacted.make(""))))
  }
}
