// The handlers of the admin API: sync, sign-in, top-info, the worker's health, and the console's
// queues, decisions, search, audit, alerts, templates, devices and whitelist, and accounts.
import { DateTime, Effect, Layer, Option } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { ReconClient } from "../clients/ReconClient.ts"
import { ReviewStore } from "./ReviewStore.ts"
import { SmsSearchStore, waitingSeconds } from "./SmsSearchStore.ts"
import { ok } from "../api/Envelope.ts"
import { answered, signInRefused } from "./Failures.ts"
import { ActivityFeed } from "./ActivityFeed.ts"
import { AdminApi, CurrentOperator } from "../api/AdminApi.ts"
import { withSessionHeader } from "./AdminAuth.ts"
import { Alerts } from "./Alerts.ts"
import { Operators } from "./Operators.ts"
import { ReviewDecisions } from "./ReviewDecisions.ts"
import { SessionTokens } from "./SessionTokens.ts"
import { TemplateLearning } from "./TemplateLearning.ts"
import { TopInfo } from "./TopInfo.ts"
import { TopInfoFeed } from "./TopInfoFeed.ts"
import { WorkerHealth } from "./WorkerHealth.ts"
import { ConsoleSmsRow } from "../api/ConsoleRecords.ts"

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
        ).pipe(Effect.andThen(Effect.fail(signInRefused(refused)))))
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
  const search = yield* SmsSearchStore
  return handlers
    .handle("topInfo", () => answered(Effect.map(topInfo.read, ok)))
    .handle("workerHealth", () => Effect.map(workerHealth.read, ok))
    .handle("smsFilters", () => answered(Effect.map(search.filters(), ok)))
}))

/** An SMS row as the API shows it: `waiting_s` (seconds since received, while a person's action is awaited) for `received_ms`. */
const withWaiting = (nowMs: number) => <R extends ConsoleSmsRow>({ received_ms, ...row }: R) => ({
  ...row,
  waiting_s: waitingSeconds({ status: row.status, received_ms }, nowMs)
})

const nowMs = Effect.map(DateTime.now, DateTime.toEpochMillis)

const review = HttpApiBuilder.group(AdminApi, "review", Effect.fn(function*(handlers) {
  const store = yield* ReviewStore
  const search = yield* SmsSearchStore
  const decisions = yield* ReviewDecisions
  const alerts = yield* Alerts
  const recon = yield* ReconClient
  const feed = yield* TopInfoFeed
  const activity = yield* ActivityFeed
  // Every open console shows a decision's outcome at once.
  const refreshAll = Effect.all([Effect.ignore(feed.sync), Effect.ignore(activity.refresh)], { concurrency: 2, discard: true })
  return handlers
    .handle("list", ({ payload }) =>
      answered(Effect.gen(function*() {
        const page = yield* store.queue(payload)
        return ok({ ...page, items: page.items.map(withWaiting(yield* nowMs)) })
      })))
    .handle("resolve", Effect.fn(function*({ payload }) {
      const operator = (yield* CurrentOperator).account
      const decided = yield* decisions.decide(payload, operator)
      yield* Effect.logInfo(decided._tag === "Pending" ? "review decision awaits a second approval" : "review decided").pipe(
        Effect.annotateLogs({ operator, sms_id: payload.sms_id, action: payload.action, ...(decided._tag === "Decided" ? { status: decided.sms.status } : {}) })
      )
      yield* refreshAll
      return decided._tag === "Decided"
        ? ok(decided.sms)
        : { status: 202 as const, msg: "pending" as const, data: { pending: "second_approval" as const } }
    }, answered))
    .handle("smsList", ({ payload }) =>
      answered(Effect.gen(function*() {
        const page = yield* search.list(payload)
        return ok({ ...page, items: page.items.map(withWaiting(yield* nowMs)) })
      })))
    .handle("smsGet", ({ payload }) => answered(Effect.map(recon.call((c) => c.sms.get({ payload })), ok)))
    .handle("audit", ({ payload }) => answered(Effect.map(store.audit(payload), ok)))
    .handle("alerts", () => answered(Effect.map(alerts.open, ok)))
}))

const template = HttpApiBuilder.group(AdminApi, "template", Effect.fn(function*(handlers) {
  const learning = yield* TemplateLearning
  return handlers
    .handle("draft", ({ payload }) => answered(Effect.map(learning.draft(payload), ok)))
    .handle("add", Effect.fn(function*({ payload }) {
      const added = yield* learning.add(payload)
      yield* Effect.logInfo("template added from a person's reading").pipe(Effect.annotateLogs({
        operator: (yield* CurrentOperator).account,
        sms_id: payload.sms_id,
        template_id: added.template.id,
        reread: added.reread.length
      }))
      return ok(added)
    }, answered))
}))

/** The devices, registrations and whitelist routes: recon's answer as it gave it; each change logged with the operator. */
const devices = HttpApiBuilder.group(AdminApi, "devices", Effect.fn(function*(handlers) {
  const recon = yield* ReconClient
  const changed = (what: string, fields: Record<string, unknown>) =>
    Effect.flatMap(Effect.service(CurrentOperator), (session) => Effect.logInfo(what).pipe(Effect.annotateLogs({ operator: session.account, ...fields })))
  return handlers
    .handle("registrations", ({ payload }) => answered(Effect.map(recon.call((c) => c.pushsvc.list({ payload })), ok)))
    .handle("addRegistration", ({ payload }) =>
      answered(recon.call((c) => c.pushsvc.addDevice({ payload })).pipe(
        Effect.tap((r) => changed("push registration added", { device_id: r.device_id })),
        Effect.map(ok)
      )))
    .handle("deleteRegistration", ({ payload }) =>
      answered(recon.call((c) => c.pushsvc.delete({ payload })).pipe(Effect.tap(() => changed("push registration deleted", payload)), Effect.map(ok))))
    .handle("devices", ({ payload }) => answered(Effect.map(recon.call((c) => c.device.list({ payload })), ok)))
    .handle("trustDevice", ({ payload }) =>
      answered(recon.call((c) => c.device.trust({ payload })).pipe(
        Effect.tap((d) => changed(d.trusted ? "device trusted" : "device untrusted", { device_id: d.device_id })),
        Effect.map(ok)
      )))
    .handle("deleteDevice", ({ payload }) =>
      answered(recon.call((c) => c.device.delete({ payload })).pipe(Effect.tap(() => changed("device deleted", payload)), Effect.map(ok))))
    .handle("phones", ({ payload }) => answered(Effect.map(recon.call((c) => c.phone.list({ payload })), ok)))
    .handle("addPhone", ({ payload }) =>
      answered(recon.call((c) => c.phone.add({ payload })).pipe(Effect.tap((p) => changed("sender whitelisted", { phone: p.phone })), Effect.map(ok))))
    .handle("deletePhone", ({ payload }) =>
      answered(recon.call((c) => c.phone.delete({ payload })).pipe(Effect.tap(() => changed("sender removed from the whitelist", payload)), Effect.map(ok))))
}))

/** The accounts' balance continuity: recon's answer as it gave it; an action carries the signed-in operator (recon audits it). */
const accounts = HttpApiBuilder.group(AdminApi, "accounts", Effect.fn(function*(handlers) {
  const recon = yield* ReconClient
  const operator = Effect.map(Effect.service(CurrentOperator), (session) => session.account)
  return handlers
    .handle("list", ({ payload }) => answered(Effect.map(recon.call((c) => c.accounts.list({ payload })), ok)))
    .handle("explainGap", ({ payload }) =>
      answered(Effect.flatMap(operator, (by) => recon.call((c) => c.accounts.explainGap({ payload: { ...payload, operator: by } }))).pipe(Effect.map(ok))))
    .handle("unexplainGap", ({ payload }) =>
      answered(Effect.flatMap(operator, (by) => recon.call((c) => c.accounts.unexplainGap({ payload: { ...payload, operator: by } }))).pipe(Effect.map(ok))))
    .handle("merge", ({ payload }) =>
      answered(Effect.flatMap(operator, (by) => recon.call((c) => c.accounts.merge({ payload: { ...payload, operator: by } }))).pipe(Effect.map(ok))))
    .handle("unmerge", ({ payload }) =>
      answered(Effect.flatMap(operator, (by) => recon.call((c) => c.accounts.unmerge({ payload: { ...payload, operator: by } }))).pipe(Effect.map(ok))))
    .handle("actions", ({ payload }) => answered(Effect.map(recon.call((c) => c.accounts.actions({ payload })), ok)))
}))

export const adminHandlers = Layer.mergeAll(sync, auth, operator, review, template, devices, accounts)
