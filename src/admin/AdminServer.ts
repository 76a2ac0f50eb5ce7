// admin_service (DESIGN sections 7 and 11): the admin API, the top-info websocket, the CSV export,
// the operator's console and GET /health on one port, and the alert notifier beside them. Everything
// else, the removed compatibility paths included, is the unknown-route 404.
import { Effect, Layer } from "effect"
import { FetchHttpClient, type HttpServer } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { ReconClient } from "../clients/ReconClient.ts"
import type { HttpSettings } from "../config/AppConfig.ts"
import type { AdminSettings } from "./Settings.ts"
import { AdminStore } from "./AdminStore.ts"
import { AlertStore } from "./AlertStore.ts"
import { ReviewStore } from "./ReviewStore.ts"
import { SmsSearchStore } from "./SmsSearchStore.ts"
import { EnvelopeMiddleware } from "../http/EnvelopeMiddleware.ts"
import { HealthRoute } from "../http/HealthRoute.ts"
import { nodeServer } from "../http/NodeServer.ts"
import { CallerAuthLive } from "../http/TokenAuth.ts"
import { serveObserved } from "../http/ObservedServer.ts"
import { ActivityFeed } from "./ActivityFeed.ts"
import { AdminApi } from "../api/AdminApi.ts"
import { JsonBodyLive, OperatorAuthLive } from "./AdminAuth.ts"
import { adminHandlers } from "./AdminHandlers.ts"
import { Alerts, AlertNotifierLive } from "./Alerts.ts"
import { ConsoleRoute } from "./Console.ts"
import { Operators } from "./Operators.ts"
import { ReviewDecisions } from "./ReviewDecisions.ts"
import { SessionTokens } from "./SessionTokens.ts"
import { SmsExportRoute } from "./SmsExport.ts"
import { TemplateLearning } from "./TemplateLearning.ts"
import { SignInLimits } from "./SignInLimits.ts"
import { TopInfo } from "./TopInfo.ts"
import { TopInfoFeed } from "./TopInfoFeed.ts"
import { TopInfoSocketRoute } from "./TopInfoSocket.ts"
import { WorkerHealth } from "./WorkerHealth.ts"

/** What the routes run on: the feeds, the counters, the stores, the clients and the session keys (given a SqlClient). */
const adminServices = (settings: AdminSettings) =>
  ActivityFeed.layer.pipe(
    Layer.provideMerge(TopInfoFeed.layer),
    Layer.provideMerge(Layer.mergeAll(
      TopInfo.layer,
      WorkerHealth.layer(settings.workerHealthUrl),
      Operators.layer.pipe(Layer.provide(SignInLimits.layer(settings.signInLimits))),
      ReviewDecisions.layer(settings.review.secondApprovalOver),
      TemplateLearning.layer,
      Alerts.layer(settings.review.waitAlertS, settings.review.balanceGapGraceS)
    )),
    Layer.provideMerge(Layer.mergeAll(
      ReconClient.layer({ baseUrl: settings.reconUrl, token: settings.reconToken }),
      SessionTokens.layer
    )),
    Layer.provideMerge(Layer.mergeAll(AdminStore.layer, ReviewStore.layer, SmsSearchStore.layer, AlertStore.layer)),
    Layer.provideMerge(FetchHttpClient.layer)
  )

const routes = (settings: AdminSettings) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(AdminApi).pipe(
      Layer.provide(adminHandlers),
      Layer.provide([CallerAuthLive(settings.syncTokens), OperatorAuthLive, JsonBodyLive])
    ),
    TopInfoSocketRoute,
    SmsExportRoute,
    ConsoleRoute,
    HealthRoute,
    EnvelopeMiddleware
  )

/**
 * Built after the server, so released before it: the websockets are closed first, and the
 * server's graceful stop then waits only for the HTTP requests in flight.
 */
const SocketsCloseFirst = Layer.effectDiscard(Effect.gen(function*() {
  const feed = yield* TopInfoFeed
  yield* Effect.addFinalizer(() => feed.closeAll)
}))

/**
 * admin_service on the HttpServer `listen` provides (tests: port 0), given a SqlClient. The server
 * starts listening only once the services are up (the signing key read, the dummy hash made):
 * a request accepted before the routes are attached would never be answered.
 */
export const adminServer = <ROut, E>(
  settings: AdminSettings,
  listen: Layer.Layer<ROut | HttpServer.HttpServer, E>,
  serve: { readonly http: HttpSettings; readonly disableListenLog?: boolean }
) => {
  const services = adminServices(settings)
  return Layer.merge(SocketsCloseFirst, AlertNotifierLive(settings.alertChat)).pipe(
    Layer.provideMerge(serveObserved("admin_service", routes(settings), serve.http, { disableListenLog: serve.disableListenLog ?? false })),
    Layer.provideMerge(listen.pipe(Layer.provide(services))),
    Layer.provide(services)
  )
}

/** The Node server admin listens with; `port` 0 picks a free one (tests). */
export const adminListener = (port: number, http: HttpSettings) =>
  // Clients only listen; a large frame from one is refused rather than buffered.
  nodeServer(port, http, { websocket: { maxPayload: 16 * 1024 } })

export const AdminServerLive = (settings: AdminSettings, http: HttpSettings) => adminServer(settings, adminListener(settings.port, http), { http })
