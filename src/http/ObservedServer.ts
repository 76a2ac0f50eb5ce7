// How each service serves its routes, observed (DESIGN section 11): GET /metrics beside them, the
// duration of every request by service, route pattern and status, and no spans for the probes
// and scrapes that orchestrators and Prometheus send every few seconds.
import { Clock, Context, Effect, Exit, Layer } from "effect"
import { HttpMiddleware, HttpRouter, HttpServerError, HttpServerRequest, type HttpServerResponse } from "effect/http"
import type { HttpSettings } from "../config/AppConfig.ts"
import { PROBE_PATHS } from "./RequestLog.ts"
import { metricsRoute, recordHttpRequest, type ServiceName } from "../observability/Metrics.ts"

/** The route pattern each request matched, by its underlying request (the router's own copy may differ). */
const matched = new WeakMap<object, string>()

/** Inside the router, where the matched route is known: remembers its pattern (`/push/:device_id`, never the raw path). */
const RoutePattern = HttpRouter.middleware((app) =>
  Effect.withFiber((fiber) => {
    const route = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)
    if (route !== undefined) matched.set(Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest).source, route.route.path)
    return app
  })
)

/** Around the whole exchange: the answer as sent (after every envelope), timed from the request's arrival. */
const timed = (service: ServiceName) =>
<E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.withFiber<HttpServerResponse.HttpServerResponse, E, R>((fiber) => {
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeMillisUnsafe()
    const request = Context.getUnsafe(fiber.context as Context.Context<HttpServerRequest.HttpServerRequest>, HttpServerRequest.HttpServerRequest)
    return Effect.onExit(app, (exit) => {
      const status = Exit.isSuccess(exit) ? exit.value.status : HttpServerError.causeResponseStripped(exit.cause)[0].status
      const seconds = (clock.currentTimeMillisUnsafe() - start) / 1000
      return recordHttpRequest(service, matched.get(request.source) ?? "unmatched", status, seconds)
    })
  })

/** Liveness, readiness and scrapes: no span of their own (their queries then belong to no trace). */
const UntracedProbes = Layer.succeed(HttpMiddleware.TracerDisabledWhen, (request) => PROBE_PATHS.has(request.url.split("?")[0]!))

/** `routes` served by `service` as every service is: see the module's first lines. */
export const serveObserved = <A, E, R>(
  service: ServiceName,
  routes: Layer.Layer<A, E, R>,
  http: HttpSettings,
  options: { readonly disableListenLog?: boolean } = {}
) =>
  // EnvelopeMiddleware logs each request (RequestLog): not the framework's logger too.
  HttpRouter.serve(Layer.merge(routes, metricsRoute(service, http)).pipe(Layer.provide(RoutePattern.layer)), {
    ...options,
    disableLogger: true,
    middleware: timed(service)
  }).pipe(Layer.provide(UntracedProbes))
