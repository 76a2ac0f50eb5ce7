// The handlers of the admin API: sync, sign-in, top-info, the worker's health and the review queue.
// Admin's HTTP edge: what each error of its services answers lives here (the database's in src/http).
import { Effect, Layer, Option, Schema } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { SqlError } from "effect/sql"
import { ReconClient, ReconRefused, ReconUnavailable } from "../clients/ReconClient.ts"
import { AdminStore } from "../db/AdminStore.ts"
import { type ApiFailure, type ErrorStatus, fail, ok } from "../http/Envelope.ts"
import { answered as answeredByStore } from "../http/Failures.ts"
import { ActivityFeed } from "./ActivityFeed.ts"
import { AdminApi, CurrentOperator } from "./AdminApi.ts"
import { withSessionHeader } from "./AdminAuth.ts"
import { Operators, WrongCredentials } from "./Operators.ts"
import { SessionTokens } from "./SessionTokens.ts"
import { TopInfo } from "./TopInfo.ts"
import { TopInfoFeed } from "./TopInfoFeed.ts"
import { WorkerHealth } from "./WorkerHealth.ts"

const AdminError = Schema.Union([WrongCredentials, ReconRefused, ReconUnavailable])
type AdminError = typeof AdminError.Type

/** The envelope of each of admin's own errors: recon's refusal as it gave it, recon unreachable as the upstream failing (502). */
export const toApiFailure = (error: AdminError): ApiFailure<400 | 401 | 404 | 409 | 422 | 502> => {
  switch (error._tag) {
    case "WrongCredentials":
      return fail(401, "wrong account or password")
    case "ReconRefused":
      return fail(error.status, error.detail)
    case "ReconUnavailable":
      return fail(502, error.detail)
  }
}

/** A handler's effect as its route answers it: every error as its envelope. */
const answered = <A, R, S extends ErrorStatus = never>(effect: Effect.Effect<A, AdminError | SqlError.SqlError | ApiFailure<S>, R>) =>
  answeredByStore<A, R, S | 400 | 401 | 404 | 409 | 422 | 502>(
    Effect.catchIf(effect, Schema.is(AdminError), (error) => Effect.fail(toApiFailure(error)))
  )

const sync = HttpApiBuilder.group(AdminApi, "sync", Effect.fn(function*(handlers) {
  const feed = yield* TopInfoFeed
  const activity = yield* ActivityFeed
  return handlers.handle("sync", () =>
    Effect.all([feed.sync, Effect.ignore(activity.refresh)], { concurrency: 2 }).pipe(Effect.map(([clients]) => ok({ clients })), answered))
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
  }, answered))
}))

const operator = HttpApiBuilder.group(AdminApi, "operator", Effect.fn(function*(handlers) {
  const topInfo = yield* TopInfo
  const workerHealth = yield* WorkerHealth
  return handlers
    .handle("topInfo", () => answered(Effect.map(topInfo.read, ok)))
    .handle("workerHealth", () => Effect.map(workerHealth.read, ok))
}))

const review = HttpApiBuilder.group(AdminApi, "review", Effect.fn(function*(handlers) {
  const store = yield* AdminStore
  const recon = yield* ReconClient
  const feed = yield* TopInfoFeed
  const activity = yield* ActivityFeed
  return handlers
    .handle("list", ({ payload }) => answered(Effect.map(store.reviewQueue(payload), ok)))
    .handle("resolve", Effect.fn(function*({ payload }) {
      const operator = (yield* CurrentOperator).account
      const { action, sms_id: id } = payload
      if (action !== "approve" && payload.deposit_id != null) {
        return yield* fail(400, `${action} takes no deposit_id`, [{ path: ["deposit_id"], message: "only with action approve" }])
      }
      const sms = yield* recon.getSms(id)
      // Which of recon's two routes decides depends on where the SMS is held.
      const checking = sms.status === "need_check"
      if (checking ? action === "approve" : action === "pass") {
        return yield* fail(409, checking ? `sms ${id} is need_check: pass or reject it` : `sms ${id} is ${sms.status}: approve or reject it`)
      }
      const decided = yield* checking
        ? recon.checkSms({ id, result: action === "pass" ? "pass" : "reject", operator })
        : recon.resolveSms({
          id,
          action: action === "approve" ? "approve" : "reject",
          ...(payload.deposit_id == null ? {} : { deposit_id: payload.deposit_id }),
          operator
        })
      yield* Effect.logInfo("review decided").pipe(Effect.annotateLogs({ operator, sms_id: id, action, status: decided.status }))
      // Every open dashboard shows the outcome at once.
      yield* Effect.all([Effect.ignore(feed.sync), Effect.ignore(activity.refresh)], { concurrency: 2, discard: true })
      return ok(decided)
    }, answered))
}))

export const adminHandlers = Layer.mergeAll(sync, auth, operator, review)
