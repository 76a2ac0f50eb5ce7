// The queries behind the operator's queues and decisions (DESIGN section 11): the queues with
// their candidate deposits and the reconciliation aids' suggestions, what the console watches for
// change, the requests that wait for a second operator, and the audit of every decision. Decisions
// themselves are recon's (recon.sms_decision, written by /shooter/sms/*); admin keeps only the
// pending requests.
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { type SmsStatus } from "../domain/Records.ts"
import { amountText, decodeRows } from "../db/Codecs.ts"
import { type PageOf, pageWindow, type Paging } from "../db/Pages.ts"
import { consoleSmsColumns } from "./SmsSearchStore.ts"
import { SUGGESTED_STATUSES, SuggestionStore } from "../db/SuggestionStore.ts"
import { ApprovalAction, AuditRow, ConsoleSmsRow, PendingApproval, ReviewCandidate, ReviewItemRow, ReviewStatuses, type ReviewStatus } from "../api/ConsoleRecords.ts"
import { DbId } from "../domain/PgValues.ts"

/** Candidates shown per SMS: enough to choose from (`candidates_total` says how many there are). */
export const MAX_CANDIDATES = 10


export type ReviewCounts = Readonly<Record<ReviewStatus, number>>

export interface ReviewPage extends PageOf<ReviewItemRow> {
  readonly counts: ReviewCounts
}


export interface NewApproval {
  readonly sms_id: number
  readonly action: ApprovalAction
  readonly deposit_id: number | null
  readonly payer_name: string | null
  readonly amount: string
  readonly operator: string
  readonly reason: string | null
}

const CandidatesRow = Schema.Struct({ sms_id: DbId, total: DbId, candidates: Schema.Array(ReviewCandidate) })
const PendingRow = Schema.Struct({ sms_id: DbId, ...PendingApproval.fields })

/** What the console watches for change (ActivityFeed's poll). */
export interface Activity {
  readonly counts: ReviewCounts
  /** The newest SMS. */
  readonly latest: ReadonlyArray<ConsoleSmsRow>
  /** Marks of the pending deposits (the candidates) and of the requests for a second approval. */
  readonly marks: { readonly deposits: string; readonly approvals: string }
}

/** An SMS as a template's sample: its text and sender, and its bank. */
export interface Sample {
  readonly id: number
  readonly status: SmsStatus
  readonly body: string
  readonly sender: string
  readonly bank: string | null
}

export interface ReviewStoreShape {
  /**
   * The SMS awaiting a person, newest first, each with the pending deposits it could be approved
   * to (manual_review: those of the payer's name and amount, the ones matching chose between;
   * unmatched: any of the amount, the payer's name first), at most {@link MAX_CANDIDATES} with
   * their total, the suggestions (searched once for the page), and the decision waiting for a
   * second approval.
   */
  readonly queue: (p: Paging & { readonly status?: ReviewStatus | null | undefined }) => Effect.Effect<ReviewPage, SqlError.SqlError>
  /**
   * What the console watches for change (ActivityFeed's poll): the queues' counts, the newest
   * SMS, and marks of the pending deposits (the candidates) and of the requests for a second approval.
   */
  readonly activity: (latest: number) => Effect.Effect<Activity, SqlError.SqlError>
  /** The status and amount of a deposit, to refuse an approval that cannot be confirmed before anyone is asked to. */
  readonly deposit: (id: number) => Effect.Effect<{ readonly status: string; readonly amount: string } | undefined, SqlError.SqlError>
  /**
   * Runs `effect` in a transaction holding the SMS's approval lock: two operators deciding on
   * one SMS at once take turns, so a request and its confirmation are never both first.
   */
  readonly underApprovalLock: <A, E, R>(smsId: number, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError.SqlError, R>
  /** The SMS's request waiting for a second approval, if any. */
  readonly pendingApproval: (smsId: number) => Effect.Effect<PendingApproval | undefined, SqlError.SqlError>
  readonly requestApproval: (r: NewApproval) => Effect.Effect<PendingApproval, SqlError.SqlError>
  /** Ends the SMS's pending request: confirmed by `by`, superseded by another request, or void (the SMS was decided otherwise). */
  readonly closeApproval: (smsId: number, state: "confirmed" | "superseded" | "void", by: string) => Effect.Effect<void, SqlError.SqlError>
  /** An SMS's text and sender, and its bank (else the one its sender's whitelist entry names): a template's sample. */
  readonly sample: (id: number) => Effect.Effect<Sample | undefined, SqlError.SqlError>
  /** The newest parse_failed SMS of a sender (but one): what a new template of that sender would be tried on. */
  readonly failedFrom: (sender: string, except: number, limit: number) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly body: string }>, SqlError.SqlError>
  /** Every decision and every request not confirmed, newest first; `operator` matches who decided or who confirmed. */
  readonly audit: (
    p: Paging & { readonly operator?: string | null | undefined; readonly sms_id?: number | null | undefined }
  ) => Effect.Effect<PageOf<AuditRow>, SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const suggestionStore = yield* SuggestionStore

  const reviewCounts = Effect.map(
    sql<{ status: ReviewStatus; n: bigint }>`SELECT status, count(*) AS n FROM recon.shooter_sms
      WHERE ${sql.in("status", ReviewStatuses)} GROUP BY status`,
    (rows) => {
      const counts: Record<ReviewStatus, number> = { need_check: 0, manual_review: 0, unmatched: 0, parse_failed: 0, ignored: 0 }
      for (const row of rows) counts[row.status] = Number(row.n)
      return counts
    }
  )

  /** A pending deposit `s` could be approved to: of its amount (manual_review: and of its payer), not being approved already. */
  const candidateOf = sql`d.status = 'pending' AND d.amount = s.amount
    AND (s.status <> 'manual_review' OR d.owner_key = s.payer_key)
    AND NOT EXISTS (SELECT 1 FROM recon.shooter_sms AS a WHERE a.status = 'approving' AND a.deposit_id = d.id)`

  const pendingColumns = sql.literal(`id, action, deposit_id, payer_name, ${amountText("amount")} AS amount, operator, reason, requested_at`)

  const queue = Effect.fn("ReviewStore.queue")(function*(p: Paging & { readonly status?: ReviewStatus | null | undefined }) {
    const { page, size, offset } = pageWindow(p)
    const statuses: ReadonlyArray<ReviewStatus> = p.status == null ? ReviewStatuses : [p.status]
    const counts = yield* reviewCounts
    const sms = yield* decodeRows(ConsoleSmsRow)(yield* sql`SELECT ${sql.literal(consoleSmsColumns)} FROM recon.shooter_sms
      WHERE ${sql.in("status", statuses)} ORDER BY created_at DESC, id DESC LIMIT ${size} OFFSET ${offset}`)
    const matchable = sms.filter((s) => (s.status === "manual_review" || s.status === "unmatched") && s.amount !== null).map((s) => s.id)
    const candidates = matchable.length === 0 ? [] : yield* decodeRows(CandidatesRow)(yield* sql`SELECT s.id AS sms_id,
        (SELECT count(*) FROM recon.deposit AS d WHERE ${candidateOf}) AS total,
        coalesce((SELECT json_agg(c) FROM (
          SELECT d.id AS deposit_id, d.player_id, p.name AS player_name, d.from_bank_owner,
            ${sql.literal(amountText("d.amount"))} AS amount, d.task_status, d.created_at, d.owner_key = s.payer_key AS same_name
          FROM recon.deposit AS d JOIN recon.player AS p ON p.id = d.player_id
          WHERE ${candidateOf}
          ORDER BY d.owner_key = s.payer_key DESC, d.created_at DESC, d.id DESC LIMIT ${MAX_CANDIDATES}) AS c), '[]') AS candidates
      FROM recon.shooter_sms AS s WHERE ${sql.in("s.id", matchable)}`)
    const pending = sms.length === 0 ? [] : yield* decodeRows(PendingRow)(yield* sql`SELECT sms_id, ${pendingColumns}
      FROM admin.approval_request WHERE state = 'pending' AND ${sql.in("sms_id", sms.map((s) => s.id))}`)
    const suggested = yield* suggestionStore.forSms(sms.filter((s) => SUGGESTED_STATUSES.includes(s.status)).map((s) => s.id))
    const playerIds = [...new Set([...suggested.values()].flatMap((list) => list.map((s) => s.player_id)))]
    const players = new Map(playerIds.length === 0 ? [] : (yield* sql<{ id: bigint; name: string }>`SELECT id, name FROM recon.player
      WHERE ${sql.in("id", playerIds)}`).map((p) => [Number(p.id), p.name]))
    const bySms = new Map(candidates.map((c) => [c.sms_id, c]))
    const waiting = new Map(pending.map(({ sms_id, ...request }) => [sms_id, request]))
    const items = sms.map((s): ReviewItemRow => ({
      ...s,
      candidates: bySms.get(s.id)?.candidates ?? [],
      candidates_total: bySms.get(s.id)?.total ?? 0,
      suggestions: (suggested.get(s.id) ?? []).map((x) => ({ ...x, player_name: players.get(x.player_id) ?? "" })),
      pending_approval: waiting.get(s.id) ?? null
    }))
    return { items, total: statuses.reduce((sum: number, status) => sum + counts[status], 0), page, page_size: size, counts }
  })

  const activity = Effect.fn("ReviewStore.activity")(function*(latest: number) {
    const counts = yield* reviewCounts
    const newest = yield* decodeRows(ConsoleSmsRow)(yield* sql`SELECT ${sql.literal(consoleSmsColumns)} FROM recon.shooter_sms
      ORDER BY created_at DESC, id DESC LIMIT ${latest}`)
    const [marks] = yield* sql<{ deposits: string; approvals: string }>`SELECT
      (SELECT coalesce(max(id), 0) || ':' || count(*) || ':' || count(*) FILTER (WHERE task_status = 6)
        FROM recon.deposit WHERE status = 'pending') AS deposits,
      (SELECT coalesce(max(id), 0) || ':' || count(*) FROM admin.approval_request WHERE state = 'pending') AS approvals`
    return { counts, latest: newest, marks: { deposits: marks?.deposits ?? "", approvals: marks?.approvals ?? "" } }
  })

  const deposit = Effect.fn("ReviewStore.deposit")(function*(id: number) {
    const [row] = yield* sql<{ status: string; amount: string }>`SELECT status, ${sql.literal(amountText("amount"))} AS amount FROM recon.deposit WHERE id = ${id}`
    return row
  })

  // Generic in the effect it runs, so a span around it rather than Effect.fn (which would lose A, E, R).
  const underApprovalLock = <A, E, R>(smsId: number, effect: Effect.Effect<A, E, R>) =>
    sql.withTransaction(Effect.andThen(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`approval:${smsId}`}, 0))`, effect)).pipe(
      Effect.withSpan("ReviewStore.underApprovalLock")
    )

  const pendingApproval = Effect.fn("ReviewStore.pendingApproval")(function*(smsId: number) {
    const rows = yield* decodeRows(PendingApproval)(yield* sql`SELECT ${pendingColumns} FROM admin.approval_request WHERE sms_id = ${smsId} AND state = 'pending'`)
    return rows[0]
  })

  const requestApproval = Effect.fn("ReviewStore.requestApproval")(function*(r: NewApproval) {
    const rows = yield* decodeRows(PendingApproval)(yield* sql`INSERT INTO admin.approval_request (sms_id, action, deposit_id, payer_name, amount, operator, reason)
      VALUES (${r.sms_id}, ${r.action}, ${r.deposit_id}, ${r.payer_name}, ${r.amount}::numeric, ${r.operator}, ${r.reason})
      RETURNING ${pendingColumns}`)
    return rows[0]!
  })

  const closeApproval = Effect.fn("ReviewStore.closeApproval")(function*(smsId: number, state: "confirmed" | "superseded" | "void", by: string) {
    yield* sql`UPDATE admin.approval_request SET state = ${state}, closed_by = ${by}, closed_at = now()
      WHERE sms_id = ${smsId} AND state = 'pending'`
  })

  const sample = Effect.fn("ReviewStore.sample")(function*(id: number) {
    const [row] = yield* sql<{ id: bigint; status: SmsStatus; body: string; sender: string; bank: string | null }>`SELECT s.id, s.status, s.body, s.sender,
        COALESCE(s.bank, (SELECT p.bank FROM recon.shooter_phone AS p WHERE p.phone = s.sender_normalized)) AS bank
      FROM recon.shooter_sms AS s WHERE s.id = ${id}`
    return row === undefined ? undefined : { ...row, id: Number(row.id) }
  })

  const failedFrom = Effect.fn("ReviewStore.failedFrom")(function*(sender: string, except: number, limit: number) {
    const rows = yield* sql<{ id: bigint; body: string }>`SELECT id, body FROM recon.shooter_sms
      WHERE status = 'parse_failed' AND sender = ${sender} AND id <> ${except} ORDER BY id DESC LIMIT ${limit}`
    return rows.map((r) => ({ id: Number(r.id), body: r.body }))
  })

  const audit = Effect.fn("ReviewStore.audit")(function*(
    p: Paging & { readonly operator?: string | null | undefined; readonly sms_id?: number | null | undefined }
  ) {
    const { page, size, offset } = pageWindow(p)
    const decisions = sql.and([
      ...(p.sms_id != null ? [sql`sms_id = ${p.sms_id}`] : []),
      ...(p.operator != null ? [sql`(operator = ${p.operator} OR second_operator = ${p.operator})`] : [])
    ])
    const requests = sql.and([
      sql`state <> 'confirmed'`,
      ...(p.sms_id != null ? [sql`sms_id = ${p.sms_id}`] : []),
      ...(p.operator != null ? [sql`operator = ${p.operator}`] : [])
    ])
    const union = sql`SELECT sms_id, action, operator, second_operator, deposit_id, payer_name, ${sql.literal(amountText("amount"))} AS amount,
        reason, to_status AS result, decided_at AS at, 1 AS source, id FROM recon.sms_decision WHERE ${decisions}
      UNION ALL
      SELECT sms_id, action, operator, NULL, deposit_id, payer_name, ${sql.literal(amountText("amount"))}, reason,
        'second_approval_' || state, requested_at, 2, id FROM admin.approval_request WHERE ${requests}`
    const [count] = yield* sql<{ total: bigint }>`SELECT count(*) AS total FROM (${union}) AS a`
    const items = yield* decodeRows(AuditRow)(yield* sql`SELECT sms_id, action, operator, second_operator, deposit_id, payer_name,
        amount, reason, result, at FROM (${union}) AS a ORDER BY at DESC, source, id DESC LIMIT ${size} OFFSET ${offset}`)
    return { items, total: Number(count?.total ?? 0), page, page_size: size }
  })

  return {
    queue,
    activity,
    deposit,
    underApprovalLock,
    pendingApproval,
    requestApproval,
    closeApproval,
    sample,
    failedFrom,
    audit
  } satisfies ReviewStoreShape
})

export class ReviewStore extends Context.Service<ReviewStore, ReviewStoreShape>()("recon/admin/ReviewStore") {
  static readonly layer = Layer.effect(ReviewStore, make).pipe(Layer.provide(SuggestionStore.layer))
}
