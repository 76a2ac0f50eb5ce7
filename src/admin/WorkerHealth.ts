// The worker's loop health for the console: admin reads WORKER_HEALTH_URL + /health/ready (200
// ready, 503 not ready, the same JSON either way) so the browser needs no cross-origin call.
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { callJson, UpstreamMalformed, UpstreamStatus, UpstreamTimeout } from "../clients/Upstream.ts"
import { HeartbeatJson } from "../domain/HeartbeatJson.ts"
import type { WorkerHealthData } from "../api/AdminApi.ts"

const TIMEOUT = Duration.seconds(2)
const HealthBody = Schema.fromJsonString(HeartbeatJson)

export class WorkerHealth extends Context.Service<WorkerHealth, {
  readonly read: Effect.Effect<WorkerHealthData>
}>()("recon/admin/WorkerHealth") {
  static readonly layer = (baseUrl: string | undefined) =>
    Layer.effect(
      WorkerHealth,
      Effect.gen(function*() {
        // 200 ready, 503 not ready: the same JSON either way.
        const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatus((status) => status === 200 || status === 503))
        if (baseUrl === undefined) {
          return { read: Effect.succeed({ status: "not_configured", detail: "WORKER_HEALTH_URL is not set", health: null } as const) }
        }
        return {
          read: callJson(client, HttpClientRequest.get(`${baseUrl}/health/ready`), { body: HealthBody, timeout: TIMEOUT }).pipe(
            Effect.map(({ body }) => body),
            Effect.mapError((failure) =>
              failure instanceof UpstreamMalformed
                ? "the worker's health JSON is not what the contract says"
                : failure instanceof UpstreamStatus
                ? `the worker answered HTTP ${failure.status}`
                : failure instanceof UpstreamTimeout
                ? `the worker did not answer within ${Duration.format(TIMEOUT)}`
                : "no connection to the worker's health port"
            ),
            Effect.match({
              onSuccess: (health): WorkerHealthData => ({ status: "ok", detail: null, health }),
              onFailure: (detail): WorkerHealthData => ({ status: "unreachable", detail, health: null })
            })
          )
        }
      })
    )
}
