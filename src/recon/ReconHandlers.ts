// The handlers of the recon API: validation beyond the schema, then one store call each.
import { Effect, Layer, Result } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { LlmClient } from "../clients/LlmClient.ts"
import { BalanceStore } from "../db/BalanceStore.ts"
import { SuggestionStore } from "../db/SuggestionStore.ts"
import { WebhookStore } from "../db/WebhookStore.ts"
import { normalizePhone } from "../domain/Phone.ts"
import { EVENT_TYPES, type Registration } from "../domain/Records.ts"
import { validateRule } from "../parse/TemplateRule.ts"
import { checkWebhookUrl } from "../domain/Webhooks.ts"
import { fail, ok } from "../api/Envelope.ts"
import { answered } from "./Failures.ts"
import { DeviceStore } from "./DeviceStore.ts"
import { SmsStore } from "./SmsStore.ts"
import { TemplateStore } from "./TemplateStore.ts"
import { ReconApi } from "../api/ReconApi.ts"

/** The webhook a phone posts to: the worker's push listener, per device. */
export const webhookUrl = (base: string, deviceId: string) => `${base}/push/${encodeURIComponent(deviceId)}`

/** An api_url as answers show it: the gateway's `user:password@` stays in the database, never in an answer. */
export const withoutCredentials = (url: string): string => url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1")

const withWebhook = (base: string) => (row: Omit<Registration, "webhook_url">): Registration => ({
  ...row,
  api_url: row.api_url === null ? null : withoutCredentials(row.api_url),
  webhook_url: webhookUrl(base, row.device_id)
})

/** A second approval is another person's: the same name twice is a 400. */
const differentSecond = (d: { readonly operator: string; readonly second_operator?: string | null | undefined }) =>
  d.second_operator != null && d.second_operator === d.operator
    ? fail(400, "second_operator must be another operator than operator", [{ path: ["second_operator"], message: "the same as operator" }])
    : Effect.void

export const reconHandlers = (pushPublicUrl: string) => {
  const webhook = withWebhook(pushPublicUrl)

  const pushsvc = HttpApiBuilder.group(ReconApi, "pushsvc", Effect.fn(function*(handlers) {
    const store = yield* DeviceStore
    return handlers
      .handle("list", ({ payload }) =>
        store.listRegistrations(payload).pipe(Effect.map((page) => ok({ ...page, items: page.items.map(webhook) })), answered))
      .handle("addDevice", ({ payload }) => store.addRegistration(payload).pipe(Effect.map((row) => ok(webhook(row))), answered))
      .handle("delete", ({ payload }) => store.deleteRegistration(payload.id).pipe(Effect.map(ok), answered))
  }))

  const template = HttpApiBuilder.group(ReconApi, "template", Effect.fn(function*(handlers) {
    const store = yield* TemplateStore
    const llm = yield* LlmClient
    return handlers
      .handle("list", ({ payload }) => store.listTemplates(payload).pipe(Effect.map(ok), answered))
      .handle("add", Effect.fn(function*({ payload }) {
        const sender = payload.sender ?? null
        const rule = payload.rule ?? undefined
        if (rule !== undefined) {
          const checked = validateRule(rule, payload.sample)
          if (Result.isFailure(checked)) return yield* fail(422, checked.failure.detail)
          return ok(yield* store.addTemplate({ bank: payload.bank, sender, sample: payload.sample, rule, rule_source: "manual" }))
        }
        if (!llm.enabled) {
          return yield* fail(422, "a rule is required: AI rule generation is off (SVC_RECON_LLM_API_KEY is not set)")
        }
        const generated = yield* llm.generateRule({ bank: payload.bank, sample: payload.sample, sender: payload.sender ?? undefined }).pipe(
          Effect.mapError((e) => fail(502, `the AI gateway gave no usable rule: ${e.detail}`))
        )
        return ok(yield* store.addTemplate({
          bank: payload.bank,
          sender,
          sample: payload.sample,
          rule: generated.source,
          rule_source: "ai"
        }))
      }, answered))
      .handle("delete", ({ payload }) => store.deleteTemplate(payload.id).pipe(Effect.map(ok), answered))
  }))

  const phone = HttpApiBuilder.group(ReconApi, "phone", Effect.fn(function*(handlers) {
    const store = yield* DeviceStore
    return handlers
      .handle("list", ({ payload }) => store.listPhones(payload).pipe(Effect.map(ok), answered))
      .handle("add", Effect.fn(function*({ payload }) {
        const number = normalizePhone(payload.phone)
        if (number === undefined) {
          return yield* fail(400, "phone is not a phone number", [{ path: ["phone"], message: "expected a phone number" }])
        }
        return ok(yield* store.addPhone(number, payload.bank ?? null, payload.note ?? null))
      }, answered))
      .handle("delete", ({ payload }) => store.deletePhone(payload.id).pipe(Effect.map(ok), answered))
  }))

  const sms = HttpApiBuilder.group(ReconApi, "sms", Effect.fn(function*(handlers) {
    const store = yield* SmsStore
    const suggestions = yield* SuggestionStore
    return handlers
      .handle("list", ({ payload }) => store.listSms(payload).pipe(Effect.map(ok), answered))
      .handle("get", ({ payload }) => store.getSms(payload.id).pipe(Effect.flatMap(suggestions.attach), Effect.map(ok), answered))
      .handle("reset", ({ payload }) => store.resetSms(payload.id, payload.if_status ?? undefined).pipe(Effect.map(ok), answered))
      .handle("check", ({ payload }) =>
        store.checkSms(payload.id, payload.result, payload.operator ?? null, payload.reason ?? null).pipe(Effect.map(ok), answered))
      .handle("resolve", Effect.fn(function*({ payload }) {
        const depositId = payload.deposit_id ?? null
        if ((payload.action === "approve") !== (depositId !== null)) {
          return yield* fail(400, payload.action === "approve" ? "approve needs the deposit_id of the chosen deposit" : "reject takes no deposit_id", [
            { path: ["deposit_id"], message: payload.action === "approve" ? "required to approve" : "only with action approve" }
          ])
        }
        yield* differentSecond(payload)
        return ok(yield* store.resolveSms({ ...payload, deposit_id: depositId }))
      }, answered))
      .handle("assign", Effect.fn(function*({ payload }) {
        yield* differentSecond(payload)
        return ok(yield* store.assignSms(payload))
      }, answered))
      .handle("dismiss", ({ payload }) => store.dismissSms(payload.id, payload).pipe(Effect.map(ok), answered))
  }))

  const device = HttpApiBuilder.group(ReconApi, "device", Effect.fn(function*(handlers) {
    const store = yield* DeviceStore
    return handlers
      .handle("list", ({ payload }) => store.listDevices(payload).pipe(Effect.map(ok), answered))
      .handle("trust", ({ payload }) => store.trustDevice(payload.id, payload.trusted ?? true).pipe(Effect.map(ok), answered))
      .handle("delete", ({ payload }) => store.deleteDevice(payload.id).pipe(Effect.map(ok), answered))
  }))

  const stats = HttpApiBuilder.group(ReconApi, "stats", Effect.fn(function*(handlers) {
    const store = yield* SmsStore
    return handlers.handle("topInfo", () => store.topInfo().pipe(Effect.map(ok), answered))
  }))

  const webhooks = HttpApiBuilder.group(ReconApi, "webhook", Effect.fn(function*(handlers) {
    const store = yield* WebhookStore
    return handlers
      .handle("add", Effect.fn(function*({ payload }) {
        const url = checkWebhookUrl(payload.url)
        if (Result.isFailure(url)) return yield* fail(url.failure.status, url.failure.detail, [{ path: ["url"], message: url.failure.detail }])
        return ok(yield* store.add({ url: url.success, secret: payload.secret, events: [...new Set(payload.events ?? EVENT_TYPES)] }))
      }, answered))
      .handle("list", ({ payload }) => store.list(payload).pipe(Effect.map(ok), answered))
      .handle("delete", ({ payload }) => store.remove(payload.id).pipe(Effect.map(ok), answered))
      .handle("deliveries", ({ payload }) => store.attempts(payload).pipe(Effect.map(ok), answered))
  }))

  const accounts = HttpApiBuilder.group(ReconApi, "accounts", Effect.fn(function*(handlers) {
    const store = yield* BalanceStore
    return handlers
      .handle("list", ({ payload }) => store.listAccounts(payload).pipe(Effect.map(ok), answered))
      .handle("explainGap", ({ payload }) => store.explainGap(payload).pipe(Effect.map(ok), answered))
      .handle("unexplainGap", ({ payload }) => store.unexplainGap(payload).pipe(Effect.map(ok), answered))
      .handle("merge", ({ payload }) => store.merge(payload).pipe(Effect.map(ok), answered))
      .handle("unmerge", ({ payload }) => store.unmerge(payload).pipe(Effect.map(ok), answered))
      .handle("actions", ({ payload }) => store.listActions(payload).pipe(Effect.map(ok), answered))
  }))

  return Layer.mergeAll(pushsvc, template, phone, sms, device, stats, webhooks, accounts)
}
