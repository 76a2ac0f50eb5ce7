// The one line each request is logged with: method, path (without its query: the websocket's
// token travels there), status and duration, at info. The probes' polls of the health routes come
// and Prometheus' scrapes come every few seconds and are logged at debug.
import { Clock, Effect, Exit } from "effect"
import type { HttpServerRequest, HttpServerResponse } from "effect/http"

/** Paths that orchestrators, dashboards and Prometheus poll. */
export const PROBE_PATHS: ReadonlySet<string> = new Set(["/health", "/health/live", "/health/ready", "/metrics"])

/** Runs `answered` and logs its request in one line once it is answered (or the client went away). */
export const logRequest = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  answered: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.flatMap(Clock.currentTimeMillis, (start) =>
    Effect.onExit(answered, (exit) =>
      Effect.flatMap(Clock.currentTimeMillis, (end) => {
        const path = request.url.split("?", 1)[0]
        const outcome = Exit.isSuccess(exit) ? String(exit.value.status) : "interrupted before its answer"
        const line = `${request.method} ${path} ${outcome} ${end - start}ms`
        return PROBE_PATHS.has(path ?? "") ? Effect.logDebug(line) : Effect.logInfo(line)
      })))
