// GET /health of recon_service, wallet_service and admin_service: 200 while the service's database answers, else 503.
// Probes poll it every few seconds: RequestLog logs its answers at debug.
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { databaseAnswers } from "../db/Database.ts"

export const HealthRoute = Layer.unwrap(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return HttpRouter.add("GET", "/health", Effect.map(databaseAnswers(sql), (up) =>
    up
      ? HttpServerResponse.jsonUnsafe({ status: "ok" })
      : HttpServerResponse.jsonUnsafe({ status: "unavailable" }, { status: 503 })))
}))
