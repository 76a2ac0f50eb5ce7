// The recon_service API of DESIGN section 5 as a pure HttpApi definition: served by
// ReconServer, documented at /internal/recon/openapi.json, and the source of admin's typed client.
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { DecimalAmount } from "../domain/Money.ts"
import { PgIsoTime, PgString } from "../domain/PgValues.ts"
import { Account, BalanceAction, BalanceGap, Device, DeviceIdPattern, EVENT_TYPES, PushFormat, Phone, Registration, Sms, SmsDetail, SmsStatus, Template, TopInfo, Webhook, WebhookAttempt } from "../domain/Records.ts"
import { CallerAuth } from "./CallerAuth.ts"
import { ErrorEnvelopes, Ok } from "./Envelope.ts"

/** Absent, or null (treated as absent). */
export const opt = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))
const Text = (max: number) => PgString.check(Schema.isMaxLength(max))
const NonEmptyText = (max: number) => PgString.check(Schema.isMinLength(1), Schema.isMaxLength(max))
export const Id = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
/** Who decided (/shooter/sms/check, /shooter/sms/resolve, /shooter/sms/assign). */
export const Operator = NonEmptyText(64)
/** Why, in the operator's words (kept with the decision). */
export const Reason = Text(500)
/** A payer's name as a person reads it off an SMS. */
export const PayerName = NonEmptyText(64).check(Schema.makeFilter((s: string) => s.trim() !== "" || "must not be blank"))

export const Paging = {
  page: opt(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  page_size: opt(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })))
}
export const Page = <S extends Schema.Top>(item: S) =>
  Schema.Struct({ items: Schema.Array(item), total: Schema.Int, page: Schema.Int, page_size: Schema.Int })

const ById = Schema.Struct({ id: Id })
export const Deleted = Schema.Struct({ id: Schema.Int })

const post = <const Name extends string, P extends Schema.Struct.Fields, S extends Schema.Top>(
  name: Name,
  path: `/${string}`,
  payload: P,
  data: S
) =>
  HttpApiEndpoint.post(name, path, {
    // An empty struct accepts any object; the contract's `{}` accepts nothing else.
    payload: Object.keys(payload).length === 0 ? Schema.Struct(payload).check(Schema.makeFilter((u) =>
      (typeof u === "object" && u !== null && !Array.isArray(u) && Object.keys(u).length === 0) || "expected an empty object")) : Schema.Struct(payload),
    success: Ok(data),
    error: ErrorEnvelopes
  })

// The bodies admin's console passes on as they are (devices, registrations, the whitelist).
export const RegistrationListFields = { ...Paging, device_id: opt(Text(64)), enabled: opt(Schema.Boolean) }
export const AddDeviceFields = {
  device_id: PgString.check(Schema.isPattern(DeviceIdPattern)),
  name: opt(Text(200)),
  format: PushFormat,
  secret: opt(NonEmptyText(256)),
  api_url: opt(PgString.check(Schema.isPattern(/^https?:\/\/[^\s]{1,2000}$/))),
  silence_alert_s: opt(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 30 * 86_400 })))
}
export const PhoneListFields = { ...Paging, keyword: opt(Text(64)) }
export const AccountListFields = { ...Paging, has_gaps: opt(Schema.Boolean) }
/** Explaining an open gap (a sweep, a fee, interest): the reason, and the amount it explains when the operator knows it. */
export const GapExplainFields = { gap_id: Id, reason: NonEmptyText(500), amount: opt(Schema.String.check(Schema.isPattern(/^-?\d{1,16}(?:\.\d{1,2})?$/))) }
export const GapUnexplainFields = { gap_id: Id }
export const AccountMergeFields = { account_id: Id, into_id: Id }
export const AccountUnmergeFields = { account_id: Id }
export const AccountActionListFields = { ...Paging, account_id: opt(Id) }
export const PhoneAddFields = { phone: NonEmptyText(32), bank: opt(Text(64)), note: opt(Text(500)) }
export const DeviceListFields = { ...Paging, trusted: opt(Schema.Boolean) }
export const TrustFields = { id: Id, trusted: opt(Schema.Boolean) }

export class PushsvcGroup extends HttpApiGroup.make("pushsvc").add(
  post("list", "/pushsvc/list", RegistrationListFields, Page(Registration)),
  post("addDevice", "/pushsvc/add_device", AddDeviceFields, Registration),
  post("delete", "/pushsvc/delete", ById.fields, Deleted)
) {}

export class TemplateGroup extends HttpApiGroup.make("template").add(
  post("list", "/shooter/template/recharge/list", { ...Paging, bank: opt(Text(64)) }, Page(Template)),
  post("add", "/shooter/template/recharge/add", {
    bank: NonEmptyText(64),
    sample: NonEmptyText(2000),
    sender: opt(Text(64)),
    rule: opt(NonEmptyText(2000))
  }, Template),
  post("delete", "/shooter/template/recharge/delete", ById.fields, Deleted)
) {}

export class PhoneGroup extends HttpApiGroup.make("phone").add(
  post("list", "/shooter/phone/list", PhoneListFields, Page(Phone)),
  post("add", "/shooter/phone/add", PhoneAddFields, Phone),
  post("delete", "/shooter/phone/delete", ById.fields, Deleted)
) {}

export class SmsGroup extends HttpApiGroup.make("sms").add(
  post("list", "/shooter/sms/list", {
    ...Paging,
    status: opt(SmsStatus),
    device_id: opt(Text(64)),
    sender: opt(Text(64)),
    keyword: opt(Text(200)),
    since: opt(PgIsoTime),
    until: opt(PgIsoTime)
  }, Page(Sms)),
  post("get", "/shooter/sms/get", ById.fields, SmsDetail),
  // if_status (beyond the contract): only while the SMS is still in that status, else 409 (a caller that chose it by its status).
  post("reset", "/shooter/sms/reset", { id: Id, if_status: opt(SmsStatus) }, Sms),
  post("check", "/shooter/sms/check", { id: Id, result: Schema.Literals(["pass", "reject"]), operator: opt(Operator), reason: opt(Reason) }, Sms),
  post("resolve", "/shooter/sms/resolve", {
    id: Id,
    action: Schema.Literals(["approve", "reject"]),
    deposit_id: opt(Id),
    operator: Operator,
    second_operator: opt(Operator),
    reason: opt(Reason)
  }, Sms).annotate(OpenApi.Description, "How a person ends a review: approve a manual_review or unmatched SMS to a pending " +
    "deposit of its amount (then approving, and the worker takes it through the wallet), or reject it. 409 in any other " +
    "status. second_operator: who confirmed a decision that needed a second approval."),
  post("assign", "/shooter/sms/assign", {
    id: Id,
    payer_name: PayerName,
    amount: DecimalAmount,
    operator: Operator,
    second_operator: opt(Operator),
    reason: opt(Reason)
  }, Sms).annotate(OpenApi.Description, "A parse_failed or ignored SMS read by a person: it becomes parsed with that payer " +
    "name and amount (parse.reader \"operator\") and goes on to matching. 409 in any other status."),
  post("dismiss", "/shooter/sms/dismiss", { id: Id, operator: Operator, reason: opt(Reason) }, Sms)
    .annotate(OpenApi.Description, "A parse_failed SMS a person found is no money to credit: rejected. 409 in any other status.")
) {}

export class DeviceGroup extends HttpApiGroup.make("device").add(
  post("list", "/shooter/device/list", DeviceListFields, Page(Device)),
  post("trust", "/shooter/device/trust", TrustFields, Device),
  post("delete", "/shooter/device/delete", ById.fields, Deleted)
) {}

export class StatsGroup extends HttpApiGroup.make("stats").add(
  post("topInfo", "/stats/top-info", {}, TopInfo)
) {}

export class WebhookGroup extends HttpApiGroup.make("webhook").add(
  post("add", "/webhook/add", {
    url: PgString.check(Schema.isMaxLength(2000), Schema.isPattern(/^https?:\/\//i)),
    secret: PgString.check(Schema.isMinLength(16), Schema.isMaxLength(256)),
    events: opt(Schema.Array(Schema.Literals(EVENT_TYPES)).check(Schema.isMinLength(1)))
  }, Webhook).annotate(OpenApi.Description, "Events are POSTed to url as {id, type, created_at, data} with X-Recon-Event-Id and " +
    "X-Recon-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + \".\" + raw body)>; events default to all four. " +
    "The secret is never shown again."),
  post("list", "/webhook/list", Paging, Page(Webhook)),
  post("delete", "/webhook/delete", ById.fields, Deleted),
  post("deliveries", "/webhook/deliveries", { ...Paging, event_id: opt(Id), webhook_id: opt(Id) }, Page(WebhookAttempt))
    .annotate(OpenApi.Description, "One item per delivery attempt, newest first.")
) {}

export class AccountsGroup extends HttpApiGroup.make("accounts").add(
  post("list", "/accounts/list", AccountListFields, Page(Account))
    .annotate(OpenApi.Description, "Accounts whose messages carry a balance, the latest first, with their open gaps " +
      "(a step of the balances that the messages received do not explain: a message is missing)."),
  post("explainGap", "/accounts/gap/explain", { ...GapExplainFields, operator: Operator }, BalanceGap)
    .annotate(OpenApi.Description, "Marks an open gap explained (a sweep, a fee): it no longer alerts nor sends balance.gap, stays listed " +
      "as explained, and a message arriving later still closes it. Audited; undone by /accounts/gap/unexplain."),
  post("unexplainGap", "/accounts/gap/unexplain", { ...GapUnexplainFields, operator: Operator }, BalanceGap),
  post("merge", "/accounts/merge", { ...AccountMergeFields, operator: Operator }, Account)
    .annotate(OpenApi.Description, "Merges a device-account (messages without account digits, e.g. 신한) into another: one chain " +
      "from then on, each phone's copy filling the other's gaps. Audited; undone by /accounts/unmerge."),
  post("unmerge", "/accounts/unmerge", { ...AccountUnmergeFields, operator: Operator }, Account),
  post("actions", "/accounts/actions", AccountActionListFields, Page(BalanceAction))
    .annotate(OpenApi.Description, "The operators' actions on balances, newest first.")
) {}

export class ReconApi extends HttpApi.make("recon")
  .add(PushsvcGroup)
  .add(TemplateGroup)
  .add(PhoneGroup)
  .add(SmsGroup)
  .add(DeviceGroup)
  .add(StatsGroup)
  .add(WebhookGroup)
  .add(AccountsGroup)
  .middleware(CallerAuth)
  .prefix("/internal/recon")
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "recon_service",
    description: "Internal reconciliation API. Every route takes the admin caller's X-Internal-Service-Token."
  }))
{}
