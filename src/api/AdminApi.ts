// The JSON routes of admin_service (DESIGN sections 7 and 11) as a pure HttpApi definition: the
// sync endpoint for the recon worker, operator sign-in, the operator's top-info and worker
// health, and the console: the queues and decisions, the search, the audit, the alerts, the
// templates learnt from a person's reading, and the devices, the whitelist and the accounts'
// balance continuity passed on to recon.
// The websocket, the CSV export and the console's page are plain routes beside it
// (TopInfoSocket, SmsExport, Console).
import { Context, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity } from "effect/http-api"
import { DecimalAmount } from "../domain/Money.ts"
import { PgIsoTime, PgString } from "../domain/PgValues.ts"
import { Account, BalanceAction, BalanceGap, Device, Phone, Registration, Sms, SmsDetail, SmsStatus, Template } from "../domain/Records.ts"
import { HeartbeatJson } from "../domain/HeartbeatJson.ts"
import { CallerAuth } from "./CallerAuth.ts"
import { ErrorEnvelopes, errorEnvelope, Ok } from "./Envelope.ts"
import {
  AccountActionListFields,
  AccountListFields,
  AccountMergeFields,
  AccountUnmergeFields,
  AddDeviceFields,
  Deleted,
  DeviceListFields,
  GapExplainFields,
  GapUnexplainFields,
  Id,
  opt,
  Page,
  Paging,
  PayerName,
  PhoneAddFields,
  PhoneListFields,
  Reason,
  RegistrationListFields,
  TrustFields
} from "./ReconApi.ts"
import { Alert, AuditRow, ConsoleSmsRow, ReviewItemRow, ReviewStatuses, type Session } from "./ConsoleRecords.ts"

/** The operator a valid session token names, for the handlers behind OperatorAuth. */
export class CurrentOperator extends Context.Service<CurrentOperator, Session>()("recon/api/AdminApi/CurrentOperator") {}

/** `Authorization: Bearer <session token>`; every answer it lets through carries a refreshed token. */
export class OperatorAuth extends HttpApiMiddleware.Service<OperatorAuth, { provides: CurrentOperator }>()("recon/api/AdminApi/OperatorAuth", {
  security: { bearer: HttpApiSecurity.bearer },
  error: errorEnvelope(401)
}) {}

/** A public POST still takes only JSON of at most 64 KiB, checked before the body is read. */
export class JsonBody extends HttpApiMiddleware.Service<JsonBody>()("recon/api/AdminApi/JsonBody", {
  error: [errorEnvelope(413), errorEnvelope(415)]
}) {}

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Text = (max: number) => PgString.check(Schema.isMaxLength(max))

/** The six counters; recon's four are null while recon_service is unavailable, and `recon` says why. */
export const TopInfoData = Schema.Struct({
  pending_deposit_cnt: Count,
  manual_review_cnt: Count,
  sms_need_check_cnt: Schema.NullOr(Count),
  parse_fail_cnt: Schema.NullOr(Count),
  unmatched_sms_cnt: Schema.NullOr(Count),
  duplicate_sms_cnt: Schema.NullOr(Count),
  recon: Schema.Struct({ available: Schema.Boolean, error: Schema.NullOr(Schema.String) })
})
export type TopInfoData = typeof TopInfoData.Type

/** The worker's `/health/ready` JSON as it answered, or why there is none. */
export const WorkerHealthData = Schema.Struct({
  status: Schema.Literals(["ok", "not_configured", "unreachable"]),
  detail: Schema.NullOr(Schema.String),
  health: Schema.NullOr(HeartbeatJson)
})
export type WorkerHealthData = typeof WorkerHealthData.Type

/** Accepts only `{}`. */
const EmptyObject = Schema.Struct({}).check(Schema.makeFilter((u) =>
  (typeof u === "object" && u !== null && !Array.isArray(u) && Object.keys(u).length === 0) || "expected an empty object"))

export class SyncGroup extends HttpApiGroup.make("sync").add(
  HttpApiEndpoint.post("sync", "/internal/meta/ws/sync", {
    // The body carries no meaning: any JSON object (the worker sends `{}`) triggers the push.
    payload: Schema.Struct({}).check(Schema.makeFilter((u) =>
      (typeof u === "object" && u !== null && !Array.isArray(u)) || "expected a JSON object")),
    success: Ok(Schema.Struct({ clients: Count })),
    error: ErrorEnvelopes
  }).annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "ignore" })
).middleware(CallerAuth) {}

export class AuthGroup extends HttpApiGroup.make("auth").add(
  HttpApiEndpoint.post("login", "/api/auth/login", {
    payload: Schema.Struct({
      account: PgString.check(Schema.isMinLength(1), Schema.isMaxLength(128)),
      password: PgString.check(Schema.isMinLength(1), Schema.isMaxLength(1024))
    }),
    success: Ok(Schema.Struct({ token: Schema.String })),
    // 429 with Retry-After: too many attempts for the account or the address (SignInLimits).
    error: [...ErrorEnvelopes, errorEnvelope(429)]
  })
).middleware(JsonBody) {}

export const SmsFilters = Schema.Struct({ banks: Schema.Array(Schema.String), devices: Schema.Array(Schema.String) })

export class OperatorGroup extends HttpApiGroup.make("operator").add(
  HttpApiEndpoint.get("topInfo", "/api/top-info", { success: Ok(TopInfoData), error: ErrorEnvelopes }),
  HttpApiEndpoint.get("workerHealth", "/api/worker-health", { success: Ok(WorkerHealthData), error: ErrorEnvelopes }),
  HttpApiEndpoint.get("smsFilters", "/api/sms/filters", { success: Ok(SmsFilters), error: ErrorEnvelopes })
).middleware(OperatorAuth) {}

/** A row's fields as the API shows them (ids as integers, times as strings), without `received_ms` (the API says `waiting_s`). */
const apiFields = <F extends Schema.Struct.Fields & { readonly received_ms: Schema.Top }>(fields: F) =>
  Object.fromEntries(Object.entries(fields).flatMap(([key, field]) => key === "received_ms" ? [] : [[key, Schema.toType(field)]])) as {
    readonly [K in Exclude<keyof F, "received_ms">]: Schema.toType<F[K]>
  }

/** An SMS as the console shows it: the record, why the readers did not read it, how long it has waited for a person (null when it does not wait). */
export const ConsoleSms = Schema.Struct({ ...apiFields(ConsoleSmsRow.fields), waiting_s: Schema.NullOr(Count) })
export type ConsoleSms = typeof ConsoleSms.Type

export const ReviewItem = Schema.Struct({ ...apiFields(ReviewItemRow.fields), waiting_s: Schema.NullOr(Count) })
export type ReviewItem = typeof ReviewItem.Type

export const ReviewStatus = Schema.Literals(ReviewStatuses)

export const ReviewPageData = Schema.Struct({
  ...Page(ReviewItem).fields,
  counts: Schema.Struct({ need_check: Count, manual_review: Count, unmatched: Count, parse_failed: Count, ignored: Count })
})
export type ReviewPageData = typeof ReviewPageData.Type

/** DESIGN section 11: a decision over SVC_REVIEW_SECOND_APPROVAL_OVER waits for a different operator (HTTP 202). */
export const SecondApprovalPending = Schema.Struct({
  status: Schema.Literal(202),
  msg: Schema.Literal("pending"),
  data: Schema.Struct({ pending: Schema.Literal("second_approval") })
}).pipe(HttpApiSchema.status(202))

export const ResolveAction = Schema.Literals(["pass", "reject", "approve", "assign"])
export type ResolveAction = typeof ResolveAction.Type

export const ResolvePayload = Schema.Struct({
  sms_id: Id,
  action: ResolveAction,
  /** approve: the chosen pending deposit. */
  deposit_id: opt(Id),
  /** assign: what the person read off the SMS. */
  payer_name: opt(PayerName),
  amount: opt(DecimalAmount),
  reason: opt(Reason)
})
export type ResolvePayload = typeof ResolvePayload.Type

export const SmsQueryFields = {
  status: opt(SmsStatus),
  q: opt(Text(200)),
  bank: opt(Text(64)),
  device_id: opt(Text(64)),
  since: opt(PgIsoTime),
  until: opt(PgIsoTime)
}

/** The queues, the decisions on them, and the search. */
export class ReviewGroup extends HttpApiGroup.make("review").add(
  HttpApiEndpoint.post("list", "/api/review/list", {
    payload: Schema.Struct({ ...Paging, status: opt(ReviewStatus) }),
    success: Ok(ReviewPageData),
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.post("resolve", "/api/review/resolve", {
    // pass/reject a need_check SMS; approve (deposit_id)/reject a manual_review or unmatched one;
    // assign (payer_name, amount) a parse_failed or ignored one, or reject a parse_failed one.
    payload: ResolvePayload,
    success: [Ok(Sms), SecondApprovalPending],
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.post("smsList", "/api/sms/list", {
    payload: Schema.Struct({ ...Paging, ...SmsQueryFields }),
    success: Ok(Page(ConsoleSms)),
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.post("smsGet", "/api/sms/get", {
    payload: Schema.Struct({ id: Id }),
    success: Ok(SmsDetail),
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.post("audit", "/api/audit/list", {
    payload: Schema.Struct({ ...Paging, operator: opt(Text(64)), sms_id: opt(Id) }),
    success: Ok(Page(Schema.toType(AuditRow))),
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.post("alerts", "/api/alerts/list", {
    payload: EmptyObject,
    success: Ok(Schema.Array(Alert)),
    error: ErrorEnvelopes
  })
).middleware(JsonBody).middleware(OperatorAuth) {}

export const TemplateDraftData = Schema.Struct({
  sms_id: Schema.Int,
  bank: Schema.NullOr(Schema.String),
  sender: Schema.String,
  sample: Schema.String,
  rule: Schema.String,
  /** The other parse_failed SMS of the sender it was tried on, and those it reads. */
  tried: Count,
  reads: Count,
  examples: Schema.Array(Schema.Struct({ sms_id: Schema.Int, payer_name: Schema.String, amount: Schema.String }))
})

/** A template drafted from an SMS a person read (the name and amount they marked), and adding it. */
export class TemplateGroup extends HttpApiGroup.make("template").add(
  HttpApiEndpoint.post("draft", "/api/template/draft", {
    payload: Schema.Struct({ sms_id: Id, payer_name: PayerName, amount: DecimalAmount }),
    success: Ok(TemplateDraftData),
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.post("add", "/api/template/add", {
    payload: Schema.Struct({
      sms_id: Id,
      bank: PgString.check(Schema.isMinLength(1), Schema.isMaxLength(64)),
      rule: PgString.check(Schema.isMinLength(1), Schema.isMaxLength(2000)),
      /** Read again the sender's parse_failed SMS that the rule reads (sms/reset: parse_loop takes them). */
      reread: opt(Schema.Boolean)
    }),
    success: Ok(Schema.Struct({ template: Template, reread: Schema.Array(Schema.Int) })),
    error: ErrorEnvelopes
  })
).middleware(JsonBody).middleware(OperatorAuth) {}

/** Devices, push registrations and the sender whitelist, passed on to recon as the operator asked. */
export class DevicesGroup extends HttpApiGroup.make("devices").add(
  HttpApiEndpoint.post("registrations", "/api/pushsvc/list", {
    payload: Schema.Struct(RegistrationListFields),
    success: Ok(Page(Registration)),
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.post("addRegistration", "/api/pushsvc/add_device", {
    payload: Schema.Struct(AddDeviceFields),
    success: Ok(Registration),
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.post("deleteRegistration", "/api/pushsvc/delete", { payload: Schema.Struct({ id: Id }), success: Ok(Deleted), error: ErrorEnvelopes }),
  HttpApiEndpoint.post("devices", "/api/device/list", { payload: Schema.Struct(DeviceListFields), success: Ok(Page(Device)), error: ErrorEnvelopes }),
  HttpApiEndpoint.post("trustDevice", "/api/device/trust", { payload: Schema.Struct(TrustFields), success: Ok(Device), error: ErrorEnvelopes }),
  HttpApiEndpoint.post("deleteDevice", "/api/device/delete", { payload: Schema.Struct({ id: Id }), success: Ok(Deleted), error: ErrorEnvelopes }),
  HttpApiEndpoint.post("phones", "/api/phone/list", { payload: Schema.Struct(PhoneListFields), success: Ok(Page(Phone)), error: ErrorEnvelopes }),
  HttpApiEndpoint.post("addPhone", "/api/phone/add", { payload: Schema.Struct(PhoneAddFields), success: Ok(Phone), error: ErrorEnvelopes }),
  HttpApiEndpoint.post("deletePhone", "/api/phone/delete", { payload: Schema.Struct({ id: Id }), success: Ok(Deleted), error: ErrorEnvelopes })
).middleware(JsonBody).middleware(OperatorAuth) {}

/** Balance continuity, passed on from recon's /accounts/list: each account's last balance and its open gaps. */
export class AccountsGroup extends HttpApiGroup.make("accounts").add(
  HttpApiEndpoint.post("list", "/api/accounts/list", { payload: Schema.Struct(AccountListFields), success: Ok(Page(Account)), error: ErrorEnvelopes }),
  // The operator's actions, passed on to recon with the signed-in operator's account as `operator` (audited there).
  HttpApiEndpoint.post("explainGap", "/api/accounts/gap/explain", { payload: Schema.Struct(GapExplainFields), success: Ok(BalanceGap), error: ErrorEnvelopes }),
  HttpApiEndpoint.post("unexplainGap", "/api/accounts/gap/unexplain", { payload: Schema.Struct(GapUnexplainFields), success: Ok(BalanceGap), error: ErrorEnvelopes }),
  HttpApiEndpoint.post("merge", "/api/accounts/merge", { payload: Schema.Struct(AccountMergeFields), success: Ok(Account), error: ErrorEnvelopes }),
  HttpApiEndpoint.post("unmerge", "/api/accounts/unmerge", { payload: Schema.Struct(AccountUnmergeFields), success: Ok(Account), error: ErrorEnvelopes }),
  HttpApiEndpoint.post("actions", "/api/accounts/actions", { payload: Schema.Struct(AccountActionListFields), success: Ok(Page(BalanceAction)), error: ErrorEnvelopes })
).middleware(JsonBody).middleware(OperatorAuth) {}

export class AdminApi extends HttpApi.make("admin")
  .add(SyncGroup)
  .add(AuthGroup)
  .add(OperatorGroup)
  .add(ReviewGroup)
  .add(TemplateGroup)
  .add(DevicesGroup)
  .add(AccountsGroup)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
{}
