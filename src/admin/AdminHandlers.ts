// The handlers of the admin API: sync, sign-in, top-info, the worker's health and the review queue.
import { Effect, Layer, Option } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { ReconClient, ReconRefused, type ReconUnavailable } from "../clients/ReconClient.ts"
import { AdminStore } from "../db/AdminStore.ts"
import { fail, ok } from "../http/Envelope.ts"
import { ActivityFeed } from "./ActivityFeed.ts"
import { AdminApi, CurrentOperator } from "./AdminApi.ts"
import { withSessionHeader } from "./AdminAuth.ts"
import { Operators } from "./Operators.ts"
import { SessionTokens } from "./SessionTokens.ts"
import { TopInfo } from "./TopInfo.ts"
import { TopInfoFeed } from "./TopInfoFeed.ts"
import { WorkerHealth } from "./WorkerHealth.ts"

const sync = HttpApiBuilder.group(AdminApi, "sync", Effect.fn(function*(handlers) {
  const feed = yield* TopInfoFeed
  const activity = yield* ActivityFeed
  return handlers.handle("sync", () =>
    Effect.all([feed.sync, Effect.ignore(activity.refresh)], { concurrency: 2 }).pipe(Effect.map(([clients]) => ok({ clients }))))
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

/** recon's refusal as it gave it; recon unreachable is the upstream failing (502). */
const fromRecon = (error: ReconRefused | ReconUnavailable) =>
  error instanceof ReconRefused ? fail(error.status, error.detail) : fail(502, error.detail)

const review = HttpApiBuilder.group(AdminApi, "review", Effect.fn(function*(handlers) {
  const store = yield* AdminStore
  const recon = yield* ReconClient
  const feed = yield* TopInfoFeed
  const activity = yield* ActivityFeed
  return handlers
    .handle("list", ({ payload }) => Effect.map(store.reviewQueue(payload), ok))
    .handle("resolve", Effect.fn(function*({ payload }) {
      const operator = (yield* CurrentOperator).account
      const { action, sms_id: id } = payload
      if (action !== "approve" && payload.deposit_id != null) {
        return yield* fail(400, `${action} takes no deposit_id`, [{ path: ["deposit_id"], message: "only with action approve" }])
      }
      const sms = yield* Effect.mapError(recon.getSms(id), fromRecon)
      // Which of recon's two routes decides depends on where the SMS is held.
      const checking = sms.status === "need_check"
      if (checking ? action === "approve" : action === "pass") {
        return yield* fail(409, checking ? `sms ${id} is need_check: pass or reject it` : `sms ${id} is ${sms.status}: approve or reject it`)
      }
      const decided = yield* Effect.mapError(
        checking
          ? recon.checkSms({ id, result: action === "pass" ? "pass" : "reject", operator })
          : recon.resolveSms({
            id,
            action: action === "approve" ? "approve" : "reject",
            ...(payload.deposit_id == null ? {} : { deposit_id: payload.deposit_id }),
            operator
          }),
        fromRecon
      )
      yield* Effect.logInfo("review decided").pipe(Effect.annotateLogs({ operator, sms_id: id, action, status: decided.status }))
      // Every open dashboard shows the outcome at once.
      yield* Effect.all([Effect.ignore(feed.sync), Effect.ignore(activity.refresh)], { concurrency: 2, discard: true })
      return ok(decided)
    }))
}))

export const adminHandlers = Layer.mergeAll(sync, auth, operator, review)
