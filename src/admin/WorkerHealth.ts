// The worker's loop health for the dashboard: admin reads WORKER_HEALTH_URL + /health/ready (200
// ready, 503 not ready, the same JSON either way) so the browser needs no cross-origin call.
import { Context, Duration, Effect, Layer } from "effect"
import { HttpClient, HttpClientResponse } from "effect/http"
import { HeartbeatJson } from "../health/Heartbeat.ts"
import type { WorkerHealthData } from "./AdminApi.ts"

const TIMEOUT = Duration.seconds(2)

export class WorkerHealth extends Context.Service<WorkerHealth, {
  readonly read: Effect.Effect<WorkerHealthData>
}>()("recon/admin/WorkerHealth") {
  static readonly layer = (baseUrl: string | undefined) =>
    Layer.effect(
      WorkerHealth,
      Effect.gen(function*() {
        const client = yield* HttpClient.HttpClient
        const decode = HttpClientResponse.schemaBodyJson(HeartbeatJson)
        if (baseUrl === undefined) {
          return { read: Effect.succeed({ status: "not_configured", detail: "WORKER_HEALTH_URL is not set", health: null } as const) }
        }
        return {
          read: client.get(`${baseUrl}/health/ready`).pipe(
            Effect.flatMap((response) =>
              response.status === 200 || response.status === 503
                ? decode(response).pipe(Effect.mapError(() => "the worker's health JSON is not what the contract says"))
                : Effect.fail(`the worker answered HTTP ${response.status}`)
            ),
            Effect.timeoutOrElse({ duration: TIMEOUT, orElse: () => Effect.fail(`the worker did not answer within ${Duration.format(TIMEOUT)}`) }),
            Effect.match({
              onSuccess: (health): WorkerHealthData => ({ status: "ok", detail: null, health }),
              onFailure: (error): WorkerHealthData => ({
                status: "unreachable",
                detail: typeof error === "string" ? error : "no connection to the worker's health port",
                health: null
              })
            })
          )
        }
      })
    )
}
