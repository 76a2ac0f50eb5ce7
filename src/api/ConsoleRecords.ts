// What the operator console's routes answer (DESIGN section 11), as admin_service's stores and
// services produce it: an SMS in the console's lists, a queue's item with its candidates and
// suggestions, a line of the audit, an alert, and the signed-in operator.
import { Schema } from "effect"
import { DecisionAction, SmsRow, type SmsStatus } from "../domain/Records.ts"
import { SUGGESTION_REASONS } from "../domain/Suggestions.ts"
import { DbId, DbTime } from "../domain/PgValues.ts"

/** An SMS as the console lists it: the record, why the readers gave up (ignored, parse_failed), and since when it waits. */
export const ConsoleSmsRow = Schema.Struct({
  ...SmsRow.fields,
  reason: Schema.NullOr(Schema.String),
  received_ms: Schema.Number
})
export type ConsoleSmsRow = typeof ConsoleSmsRow.Type

/** The queues a person owns (DESIGN section 11), in the order the console shows them. */
export const ReviewStatuses = ["need_check", "manual_review", "unmatched", "parse_failed", "ignored"] as const satisfies ReadonlyArray<SmsStatus>
export type ReviewStatus = (typeof ReviewStatuses)[number]

/** A pending deposit an SMS under review could be approved to. */
export const ReviewCandidate = Schema.Struct({
  deposit_id: Schema.Int,
  player_id: Schema.Int,
  player_name: Schema.String,
  from_bank_owner: Schema.String,
  amount: Schema.String,
  task_status: Schema.NullOr(Schema.Int),
  created_at: Schema.String,
  /** The deposit's owner is the SMS's payer (after NFC and white-space removal). */
  same_name: Schema.Boolean
})

/**
 * A deposit the reconciliation aids suggest for an unmatched or manual-review SMS (recon's
 * `match.suggestions`, with the player's name): never approved without a person, and only as any
 * approval is, to a pending deposit of the SMS's amount.
 */
export const ReviewSuggestion = Schema.Struct({
  deposit_id: Schema.Int,
  player_id: Schema.Int,
  player_name: Schema.String,
  from_bank_owner: Schema.String,
  amount: Schema.String,
  reasons: Schema.Array(Schema.Literals(SUGGESTION_REASONS)),
  score: Schema.Number,
  /** sum_of_sms: the SMS (this one first) whose amounts add up to the deposit. */
  sms_ids: Schema.optionalKey(Schema.Array(Schema.Int))
})
export type ReviewSuggestion = typeof ReviewSuggestion.Type

export const ApprovalAction = Schema.Literals(["approve", "assign"])
export type ApprovalAction = typeof ApprovalAction.Type

/** A decision over the second-approval amount, waiting for another operator to make the same one. */
export const PendingApproval = Schema.Struct({
  id: DbId,
  action: ApprovalAction,
  deposit_id: Schema.NullOr(DbId),
  payer_name: Schema.NullOr(Schema.String),
  amount: Schema.String,
  operator: Schema.String,
  reason: Schema.NullOr(Schema.String),
  requested_at: DbTime
})
export type PendingApproval = typeof PendingApproval.Type

/** An SMS in a queue, with its candidate deposits, the suggested ones, and the decision awaiting a second approval. */
export const ReviewItemRow = Schema.Struct({
  ...ConsoleSmsRow.fields,
  candidates: Schema.Array(ReviewCandidate),
  candidates_total: Schema.Int,
  /** unmatched and manual_review: up to 5, the likeliest first; `[]` otherwise. */
  suggestions: Schema.Array(ReviewSuggestion),
  pending_approval: Schema.NullOr(Schema.toType(PendingApproval))
})
export type ReviewItemRow = typeof ReviewItemRow.Type

/** One line of the audit: a decision taken (recon.sms_decision), or a request for a second approval not (yet) confirmed. */
export const AuditRow = Schema.Struct({
  sms_id: DbId,
  action: DecisionAction,
  operator: Schema.NullOr(Schema.String),
  second_operator: Schema.NullOr(Schema.String),
  deposit_id: Schema.NullOr(DbId),
  payer_name: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String),
  /** The SMS's status after the decision, or where the request stands: second_approval_pending/_superseded/_void. */
  result: Schema.String,
  at: DbTime
})
export type AuditRow = typeof AuditRow.Type

export const AlertKind = Schema.Literals(["phone_silent", "review_waiting", "balance_gap"])
export type AlertKind = typeof AlertKind.Type

/** One open alert: `subject` names what it is about (a device id, `sms:<id>`, an account), `since` when its condition began. */
export const Alert = Schema.Struct({
  kind: AlertKind,
  subject: Schema.String,
  since: Schema.String,
  /** The alert as one English sentence (logs, the chat). */
  detail: Schema.String,
  /** What the sentence says, as values the console words in its language (amounts as decimal text, durations in seconds). */
  facts: Schema.Record(Schema.String, Schema.NullOr(Schema.Union([Schema.String, Schema.Number])))
})
export type Alert = typeof Alert.Type

/** The operator a request is made by (from a verified session token). */
export interface Session {
  readonly operatorId: number
  readonly account: string
  /** Epoch milliseconds. */
  readonly expiresAt: number
}
