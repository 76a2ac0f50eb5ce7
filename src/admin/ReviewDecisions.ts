// How an operator's decision on a queued SMS is taken (DESIGN section 11, /api/review/resolve):
// which of recon's routes decides it (need_check: check; manual_review and unmatched: resolve;
// parse_failed and ignored: assign, or dismiss), and the second approval: an approve or assign
// over SVC_REVIEW_SECOND_APPROVAL_OVER waits (HTTP 202) until a different operator makes the same
// decision, which is then passed on with both names; the same operator again is 409.
import { BigDecimal, Context, Effect, Layer } from "effect"
import type { SqlError } from "effect/sql"
import { ReconClient, type ReconRefused, type ReconUnavailable } from "../clients/ReconClient.ts"
import { ReviewStore } from "./ReviewStore.ts"
import type { Sms, SmsStatus } from "../domain/Records.ts"
import { compactForComparison } from "../domain/SmsText.ts"
import { type ApiFailure, fail } from "../api/Envelope.ts"
import type { ResolvePayload } from "../api/AdminApi.ts"
import { PendingApproval } from "../api/ConsoleRecords.ts"

export type Decided = { readonly _tag: "Decided"; readonly sms: typeof Sms.Type } | { readonly _tag: "Pending" }

type DecisionError = ReconRefused | ReconUnavailable | SqlError.SqlError | ApiFailure<400 | 404 | 409>

/** The actions a person may take on an SMS in each status. */
const actionsFor: Partial<Record<SmsStatus, ReadonlyArray<ResolvePayload["action"]>>> = {
  need_check: ["pass", "reject"],
  manual_review: ["approve", "reject"],
  unmatched: ["approve", "reject"],
  parse_failed: ["assign", "reject"],
  ignored: ["assign"]
}

/** The fields each action takes beside sms_id and reason. */
const fieldsOf = {
  pass: [],
  reject: [],
  approve: ["deposit_id"],
  assign: ["payer_name", "amount"]
} as const

const optional = ["deposit_id", "payer_name", "amount"] as const

/** 400 when the payload's fields are not those of its action. */
const checkFields = (p: ResolvePayload): Effect.Effect<void, ApiFailure<400>> => {
  const wanted: ReadonlyArray<string> = fieldsOf[p.action]
  const missing = optional.filter((f) => wanted.includes(f) && p[f] == null)
  const extra = optional.filter((f) => !wanted.includes(f) && p[f] != null)
  if (missing.length > 0) {
    return fail(400, `${p.action} needs ${missing.join(" and ")}`, missing.map((f) => ({ path: [f], message: `required to ${p.action}` })))
  }
  if (extra.length > 0) {
    return fail(400, `${p.action} takes no ${extra.join(" or ")}`, extra.map((f) => ({ path: [f], message: `not with action ${p.action}` })))
  }
  return Effect.void
}

const sameAmount = (a: string, b: string) => BigDecimal.equals(BigDecimal.fromStringUnsafe(a), BigDecimal.fromStringUnsafe(b))

/** The pending request asks for the decision `p` makes. */
const sameDecision = (pending: PendingApproval, p: ResolvePayload) =>
  pending.action === p.action && (p.action === "approve"
    ? pending.deposit_id === p.deposit_id
    : pending.payer_name !== null && compactForComparison(pending.payer_name) === compactForComparison(p.payer_name ?? "") &&
      sameAmount(pending.amount, p.amount ?? "0"))

const seoul = new Intl.DateTimeFormat("sv-SE", { timeZone: "Asia/Seoul", dateStyle: "short", timeStyle: "short" })
const clock = (iso: string) => `${seoul.format(new Date(iso))} KST`

export class ReviewDecisions extends Context.Service<ReviewDecisions, {
  readonly decide: (payload: ResolvePayload, operator: string) => Effect.Effect<Decided, DecisionError>
}>()("recon/admin/ReviewDecisions") {
  /** `secondApprovalOver`: the amount above which a second operator must confirm (undefined: never). */
  static readonly layer = (secondApprovalOver: string | undefined) =>
    Layer.effect(
      ReviewDecisions,
      Effect.gen(function*() {
        const recon = yield* ReconClient
        const store = yield* ReviewStore
        const over = secondApprovalOver === undefined ? undefined : BigDecimal.fromStringUnsafe(secondApprovalOver)

        /** Passes the decision to recon's route for the SMS's status, with who decided (and who confirmed). */
        const pass = (p: ResolvePayload, status: SmsStatus, operator: string, second?: string) => {
          const by = { operator, ...(second === undefined ? {} : { second_operator: second }), ...(p.reason == null ? {} : { reason: p.reason }) }
          const id = p.sms_id
          return recon.call((c) => {
            switch (status) {
              case "need_check":
                return c.sms.check({ payload: { id, result: p.action === "pass" ? "pass" : "reject", ...by } })
              case "parse_failed":
              case "ignored":
                return p.action === "assign"
                  ? c.sms.assign({ payload: { id, payer_name: p.payer_name!, amount: p.amount!, ...by } })
                  : c.sms.dismiss({ payload: { id, ...by } })
              default:
                return c.sms.resolve({
                  payload: { id, action: p.action === "approve" ? "approve" : "reject", ...(p.deposit_id == null ? {} : { deposit_id: p.deposit_id }), ...by }
                })
            }
          })
        }

        /** Refuses, before anyone is asked to confirm it, an approval recon would refuse. */
        const checkDeposit = (depositId: number, smsAmount: string | null) =>
          Effect.gen(function*() {
            const deposit = yield* store.deposit(depositId)
            if (deposit === undefined) return yield* fail(404, `deposit ${depositId} not found`)
            if (deposit.status !== "pending") return yield* fail(409, `deposit ${depositId} is ${deposit.status}, not pending`)
            if (smsAmount === null || !sameAmount(deposit.amount, smsAmount)) {
              return yield* fail(409, `deposit ${depositId} is for ${deposit.amount}, the SMS for ${smsAmount ?? "no amount"}`)
            }
          })

        const decide = (p: ResolvePayload, operator: string): Effect.Effect<Decided, DecisionError> =>
          Effect.gen(function*() {
            yield* checkFields(p)
            const sms = yield* recon.call((c) => c.sms.get({ payload: { id: p.sms_id } }))
            const allowed = actionsFor[sms.status]
            if (allowed === undefined) return yield* fail(409, `sms ${sms.id} is ${sms.status}: nothing waits for a person's decision`)
            if (!allowed.includes(p.action)) return yield* fail(409, `sms ${sms.id} is ${sms.status}: ${allowed.join(" or ")} it`)
            const amount = p.action === "approve" ? sms.amount : p.action === "assign" ? p.amount ?? null : null
            if (over === undefined || amount === null || !BigDecimal.isGreaterThan(BigDecimal.fromStringUnsafe(amount), over)) {
              const decided = yield* pass(p, sms.status, operator)
              // A request waiting for this SMS is moot now.
              yield* store.closeApproval(sms.id, "void", operator)
              return { _tag: "Decided", sms: decided } as const
            }
            if (p.action === "approve") yield* checkDeposit(p.deposit_id!, sms.amount)
            return yield* store.underApprovalLock(sms.id, Effect.gen(function*() {
              const pending = yield* store.pendingApproval(sms.id)
              if (pending !== undefined && sameDecision(pending, p)) {
                if (pending.operator === operator) {
                  return yield* fail(409, `sms ${sms.id}: you asked for this ${p.action} at ${clock(pending.requested_at)}; a different operator must approve it`)
                }
                const decided = yield* pass({ ...p, reason: p.reason ?? pending.reason }, sms.status, pending.operator, operator)
                yield* store.closeApproval(sms.id, "confirmed", operator)
                return { _tag: "Decided", sms: decided } as const
              }
              if (pending !== undefined) yield* store.closeApproval(sms.id, "superseded", operator)
              yield* store.requestApproval({
                sms_id: sms.id,
                action: p.action === "approve" ? "approve" : "assign",
                deposit_id: p.deposit_id ?? null,
                payer_name: p.payer_name?.trim() ?? null,
                amount,
                operator,
                reason: p.reason ?? null
              })
              return { _tag: "Pending" } as const
            }))
          })

        return { decide }
      })
    )
}
