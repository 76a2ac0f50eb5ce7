// The handlers of the admin API: sync, sign-in, top-info and the worker's health.
import { Effect, Layer, Option } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { ok } from "../http/Envelope.ts"
import { AdminApi } from "./AdminApi.ts"
import { withSessionHeader } from "./AdminAuth.ts"
import { Operators } from "./Operators.ts"
import { SessionTokens } from "./SessionTokens.ts"
import { TopInfo } from "./TopInfo.ts"
import { TopInfoFeed } from "./TopInfoFeed.ts"
import { WorkerHealth } from "./WorkerHealth.ts"

const sync = HttpApiBuilder.group(AdminApi, "sync", Effect.fn(function*(handlers) {
  const feed = yield* TopInfoFeed
  return handlers.handle("sync", () => Effect.map(feed.sync, (clients) => ok({ clients })))
}))

const auth = HttpApiBuilder.group(AdminApi, "auth", Effect.fn(function*(handlers) {
  const operators = yield* Operators
  const tokens = yield* SessionTokens
  return handlers.handle("login", Effect.fn(function*({ payload }) {
    const request = yield* HttpServerRequest.HttpServerRequest
    const address = Option.getOrElse(request.remoteAddress, () => "unknown")
    const operator = yield* operators.signIn(payload.account, payload.password, address).pipe(
      Effect.catchTag("SignInRefused", (refused) =>
        HttpEffect.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(refused.retryAfterS)))
        ).pipe(Effect.andThen(Effect.fail(refused.failure))))
    )
    const token = yield* tokens.issue(operator)
    // The header too, so a client treats the sign-in like every later answer.
    yield* withSessionHeader(token)
    return ok({ token })
  }))
}))

const operator = HttpApiBuilder.group(AdminApi, "operator", Effect.fn(function*(handlers) {
  const topInfo = yield* TopInfo
  const workerHealth = yield* WorkerHealth
  return handlers
    .handle("topInfo", () => Effect.map(topInfo.read, ok))
    .handle("workerHealth", () => Effect.map(workerHealth.read, ok))
}))

export const adminHandlers = Layer.mergeAll(sync, auth, operator)
