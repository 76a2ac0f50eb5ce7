// recon_service: the recon API, its OpenAPI document and the public GET /health, on one port.
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, OpenApi } from "effect/http-api"
import { LlmClient } from "../clients/LlmClient.ts"
import type { HttpSettings } from "../config/AppConfig.ts"
import type { TokenPolicy } from "../config/Tokens.ts"
import type { ReconSettings } from "./Settings.ts"
import { BalanceStore } from "../db/BalanceStore.ts"
import { SuggestionStore } from "../db/SuggestionStore.ts"
import { WebhookStore } from "../db/WebhookStore.ts"
import { serveObserved } from "../http/ObservedServer.ts"
import { HealthRoute } from "../http/HealthRoute.ts"
import { TOKEN_HEADER } from "../api/CallerAuth.ts"
import { EnvelopeMiddleware } from "../http/EnvelopeMiddleware.ts"
import { nodeServer } from "../http/NodeServer.ts"
import { ReconApi } from "../api/ReconApi.ts"
import { reconHandlers } from "./ReconHandlers.ts"
import { DeviceStore } from "./DeviceStore.ts"
import { SmsStore } from "./SmsStore.ts"
import { TemplateStore } from "./TemplateStore.ts"
import { CallerAuthLive, tokenMatcher, wrongToken } from "../http/TokenAuth.ts"

const openApiRoute = (tokens: TokenPolicy) => {
  const matches = tokenMatcher(tokens.accepted)
  const document = OpenApi.fromApi(ReconApi)
  return HttpRouter.add("GET", "/internal/recon/openapi.json", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!matches(request.headers[TOKEN_HEADER.toLowerCase()] ?? "")) {
      return yield* wrongToken(tokens.caller)
    }
    return HttpServerResponse.jsonUnsafe(document)
  }))
}

/** The routes of recon_service, given a SqlClient (tests serve them on port 0). */
export const reconRoutes = (settings: ReconSettings) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(ReconApi).pipe(
      Layer.provide(reconHandlers(settings.pushPublicUrl)),
      Layer.provide(CallerAuthLive(settings.tokens))
    ),
    openApiRoute(settings.tokens),
    HealthRoute,
    EnvelopeMiddleware
  ).pipe(
    Layer.provide([SmsStore.layer, DeviceStore.layer, TemplateStore.layer, SuggestionStore.layer, WebhookStore.layer, BalanceStore.layer]),
    Layer.provide(LlmClient.layer(settings.llm)),
    Layer.provide(FetchHttpClient.layer)
  )

export const ReconServerLive = (settings: ReconSettings, http: HttpSettings) =>
  serveObserved("recon_service", reconRoutes(settings), http).pipe(
    Layer.provide(nodeServer(settings.port, http))
  )
