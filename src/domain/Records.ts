// The records of the recon API, decoded from their table rows (ids as integers, times as
// ISO-8601 strings, amounts as decimal strings). `Schema.toType` of each is its API shape.
import { Schema } from "effect"
import { DbId, DbTime, DbTimeOrNull } from "./PgValues.ts"

/** The device ids a registration can have (the push URL's last segment). */
export const DeviceIdPattern = /^[A-Za-z0-9._:-]{1,64}$/

export const PushFormat = Schema.Literals(["smsforwarder", "sms-gateway"])
export type PushFormat = typeof PushFormat.Type

export const SmsStatus = Schema.Literals([
  "received", "need_check", "rejected", "duplicate", "ignored", "parse_failed",
  "parsed", "unmatched", "manual_review", "approving", "approved"
])
export type SmsStatus = typeof SmsStatus.Type

/** Who wrote a template's rule: a built-in of the migrations, an operator, or the model. */
export const RuleSource = Schema.Literals(["builtin", "manual", "ai"])
export type RuleSource = typeof RuleSource.Type

const NullableString = Schema.NullOr(Schema.String)

/** What a push registration's row and its API shape share. */
const registrationFields = {
  device_id: Schema.String,
  name: NullableString,
  format: PushFormat,
  api_url: NullableString,
  /** Seconds without an SMS after which the phone counts as silent (an alert); null: never. */
  silence_alert_s: Schema.NullOr(Schema.Int),
  enabled: Schema.Boolean,
  listener_status: Schema.String
}

/** A push registration as stored; the API adds its webhook_url and never shows the secret. */
export const RegistrationRow = Schema.Struct({
  id: DbId,
  ...registrationFields,
  last_event_at: DbTimeOrNull,
  created_at: DbTime
})

export const Registration = Schema.Struct({
  id: Schema.Int,
  ...registrationFields,
  webhook_url: Schema.String,
  last_event_at: NullableString,
  created_at: Schema.String
})
export type Registration = typeof Registration.Type

export const TemplateRow = Schema.Struct({
  id: DbId,
  bank: Schema.String,
  sender: NullableString,
  sample: Schema.String,
  rule: Schema.String,
  rule_source: RuleSource,
  created_at: DbTime
})
export const Template = Schema.toType(TemplateRow)

export const PhoneRow = Schema.Struct({
  id: DbId,
  phone: Schema.String,
  bank: NullableString,
  note: NullableString,
  created_at: DbTime
})
export const Phone = Schema.toType(PhoneRow)

export const DeviceRow = Schema.Struct({
  id: DbId,
  device_id: Schema.String,
  name: NullableString,
  trusted: Schema.Boolean,
  last_seen_at: DbTimeOrNull,
  sms_count: DbId,
  created_at: DbTime
})
export const Device = Schema.toType(DeviceRow)

export const SmsRow = Schema.Struct({
  id: DbId,
  device_id: Schema.String,
  sender: Schema.String,
  body: Schema.String,
  received_at: DbTime,
  status: SmsStatus,
  bank: NullableString,
  payer_name: NullableString,
  amount: NullableString,
  deposit_id: Schema.NullOr(DbId),
  created_at: DbTime
})
export const Sms = Schema.toType(SmsRow)

/** One SMS with what parsing and matching found (free-form detail written by the worker). */
export const SmsDetailRow = Schema.Struct({
  ...SmsRow.fields,
  duplicate_of: Schema.NullOr(DbId),
  parse: Schema.NullOr(Schema.Unknown),
  match: Schema.NullOr(Schema.Unknown)
})
export const SmsDetail = Schema.toType(SmsDetailRow)

export const DecisionAction = Schema.Literals(["pass", "reject", "approve", "assign"])
export type DecisionAction = typeof DecisionAction.Type

/** One person's decision on an SMS (sms/check, sms/resolve, sms/assign), as sms/get shows it inside `match`. */
export const DecisionRow = Schema.Struct({
  operator: NullableString,
  /** Who confirmed it, for a decision over the second-approval amount. */
  second_operator: NullableString,
  action: DecisionAction,
  deposit_id: Schema.NullOr(DbId),
  /** What an `assign` read by eye; `amount` also what an `approve` moved. */
  payer_name: NullableString,
  amount: NullableString,
  reason: NullableString,
  from_status: SmsStatus,
  to_status: SmsStatus,
  decided_at: DbTime
})

export const TopInfo = Schema.Struct({
  sms_need_check_cnt: Schema.Int,
  parse_fail_cnt: Schema.Int,
  unmatched_sms_cnt: Schema.Int,
  duplicate_sms_cnt: Schema.Int
})
export type TopInfo = typeof TopInfo.Type

/** The events a webhook may subscribe to (DESIGN section 11; domain/Webhooks.ts sends them). */
export const EVENT_TYPES = ["deposit.approved", "sms.manual_review", "sms.rejected", "balance.gap"] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** A webhook to the merchant's platform (never its secret), with its deliveries waiting and given up. */
export const WebhookRow = Schema.Struct({
  id: DbId,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  pending: DbId,
  failed: DbId,
  created_at: DbTime
})
export const Webhook = Schema.toType(WebhookRow)

/** One attempt to deliver an event to a webhook (/webhook/deliveries). */
export const WebhookAttemptRow = Schema.Struct({
  event_id: DbId,
  webhook_id: DbId,
  type: Schema.String,
  attempt: Schema.Int,
  /** delivered (2xx), retrying (will be sent again), failed (given up after 24 h). */
  status: Schema.Literals(["delivered", "retrying", "failed"]),
  http_status: Schema.NullOr(Schema.Int),
  error: NullableString,
  at: DbTime
})
export const WebhookAttempt = Schema.toType(WebhookAttemptRow)

/** An unexplained step of an account's balances: an SMS between these two never arrived (or was never read). */
export const BalanceGap = Schema.Struct({
  id: Schema.Int,
  after_sms_id: Schema.Int,
  before_sms_id: Schema.Int,
  /** The balance moved by this much more than the messages between explain (negative: money left unseen). */
  unexplained: Schema.String,
  since: Schema.String,
  /** An operator's explanation (a sweep, a fee): the gap no longer alerts; a message arriving still closes it. */
  explained: Schema.NullOr(Schema.Struct({ reason: Schema.String, amount: NullableString, operator: Schema.String, at: Schema.String }))
})

/** An account whose messages carry a balance (/accounts/list), with its open gaps. */
export const Account = Schema.Struct({
  id: Schema.Int,
  /** The account digits as the bank shows them (masked), or null when the messages show none (then device and sender). */
  account: NullableString,
  bank: NullableString,
  device_id: NullableString,
  sender: NullableString,
  last_balance: NullableString,
  last_at: NullableString,
  /** The account this device-account was merged into by an operator (its messages are placed there), else null. */
  merged_into: Schema.NullOr(Schema.Int),
  gaps: Schema.Array(BalanceGap)
})
export type Account = typeof Account.Type

/** An operator's action on balances (/accounts/actions): explaining a gap, merging device-accounts, and their undoing. */
export const BalanceAction = Schema.Struct({
  id: Schema.Int,
  action: Schema.Literals(["explain", "unexplain", "merge", "unmerge"]),
  operator: Schema.String,
  account_id: Schema.Int,
  gap_id: Schema.NullOr(Schema.Int),
  other_account_id: Schema.NullOr(Schema.Int),
  reason: NullableString,
  amount: NullableString,
  at: NullableString
})
