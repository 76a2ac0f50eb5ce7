// GET /health of recon_service, wallet_service and admin_service: 200 while the service's database answers, else 503.
import { Effect, Layer } from "effect"
import { HttpMiddleware, HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { databaseAnswers } from "../db/Database.ts"

/** Probes poll it every few seconds: its answers are logged at debug, not with the info line of every other request. */
export const HealthRoute = Layer.unwrap(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return HttpRouter.add("GET", "/health", HttpMiddleware.withLoggerDisabled(Effect.map(databaseAnswers(sql), (up) =>
    up
      ? HttpServerResponse.jsonUnsafe({ status: "ok" })
      : HttpServerResponse.jsonUnsafe({ status: "unavailable" }, { status: 503 })).pipe(
      Effect.tap((response) => Effect.logDebug(`GET /health ${response.status}`))
    )))
}))
