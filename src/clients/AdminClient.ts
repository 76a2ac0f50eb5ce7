// The worker's client of admin_service's POST /internal/meta/ws/sync, derived from the AdminApi
// definition: the recon caller's token, a timeout, and Synced or Unavailable (never a failure).
import { Context, Duration, Effect, type Layer, type Redacted } from "effect"
import { HttpClient } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { AdminApi } from "../api/AdminApi.ts"
import { ownServiceLayer } from "./OwnService.ts"

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
  static readonly layer = (options: AdminClientOptions): Layer.Layer<AdminClient, never, HttpClient.HttpClient> =>
    ownServiceLayer(AdminClient, {
      service: SERVICE,
      token: options.token,
      timeout: options.timeout ?? DEFAULT_ADMIN_TIMEOUT,
      // Only the sync endpoint: the worker calls nothing else of admin's API.
      derive: Effect.gen(function*() {
        return yield* HttpApiClient.endpoint(AdminApi, { group: "sync", endpoint: "sync", httpClient: yield* HttpClient.HttpClient, baseUrl: options.baseUrl })
      }),
      make: ({ call, client: sync, describe, withToken }) => ({
        sync: withToken(
          call(
            sync({ payload: {} }).pipe(Effect.as<SyncOutcome>({ _tag: "Synced" })),
            (error) => Effect.succeed<SyncOutcome>({ _tag: "Unavailable", reason: describe(error) })
          ),
          (reason): SyncOutcome => ({ _tag: "Unavailable", reason })
        )
      })
    })
}
