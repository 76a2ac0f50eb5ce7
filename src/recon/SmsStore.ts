// The SMS behind /shooter/sms and /shooter/stats: the list and one SMS with its decisions, and a
// person's decisions (check, resolve, assign, dismiss, reset), each a status change under the
// row's lock with the decision kept in recon.sms_decision and the worker told through NOTIFY.
import { Context, Effect, Layer, Schema } from "effect"
import type { SqlError } from "effect/sql"
import { amountText, decodeRows } from "../db/Codecs.ts"
import { DepositNotFound } from "../db/DepositStore.ts"
import type { PageOf, Paging } from "../db/Pages.ts"
import { smsColumns } from "../db/Sms.ts"
import { DecisionRow, SmsDetailRow, SmsRow } from "../domain/Records.ts"
import type { DecisionAction, SmsStatus } from "../domain/Records.ts"
import { makeTables } from "./ReconTables.ts"
import { containing } from "../domain/PgValues.ts"

/** No SMS has this id. */
export class SmsNotFound extends Schema.TaggedError<SmsNotFound>()("SmsNotFound", { smsId: Schema.Int }) {}

/** The SMS is not in a status the change starts from (one of `expected`). */
export class SmsStatusConflict extends Schema.TaggedError<SmsStatusConflict>()("SmsStatusConflict", { smsId: Schema.Int, status: Schema.String, expected: Schema.Array(Schema.String) }) {}

/** A reset of an SMS whose money has moved or is moving (approving, approved). */
export class SmsMoneyMoved extends Schema.TaggedError<SmsMoneyMoved>()("SmsMoneyMoved", { smsId: Schema.Int, status: Schema.String }) {}

/** The deposit chosen for an SMS is no longer pending. */
export class DepositNotPending extends Schema.TaggedError<DepositNotPending>()("DepositNotPending", { depositId: Schema.Int, status: Schema.String }) {}

/** The deposit chosen for an SMS is for another amount than the SMS (or the SMS has none). */
export class AmountMismatch extends Schema.TaggedError<AmountMismatch>()("AmountMismatch", {
  depositId: Schema.Int,
  depositAmount: Schema.String,
  smsAmount: Schema.NullOr(Schema.String)
}) {}

/** The deposit chosen for an SMS is already being approved (or approved) with another SMS. */
export class DepositTaken extends Schema.TaggedError<DepositTaken>()("DepositTaken", { depositId: Schema.Int, smsId: Schema.Int }) {}

/** What a SmsStore method can fail with besides the SqlError. */
export type SmsStoreError = SmsNotFound | SmsStatusConflict | SmsMoneyMoved | DepositNotFound | DepositNotPending | AmountMismatch | DepositTaken

/** Who took a decision, who confirmed it (over the second-approval amount) and why. */
export interface DecidedBy {
  readonly operator: string
  readonly second_operator?: string | null | undefined
  readonly reason?: string | null | undefined
}

/** A person's end of a review (/shooter/sms/resolve). */
export interface Resolution extends DecidedBy {
  readonly id: number
  readonly action: "approve" | "reject"
  /** The chosen pending deposit (approve only). */
  readonly deposit_id: number | null
}

/** A parse_failed or ignored SMS read by a person (/shooter/sms/assign). */
export interface Assignment extends DecidedBy {
  readonly id: number
  readonly payer_name: string
  readonly amount: string
}

/** What a decision row records beside who and why. */
interface DecisionRecord extends DecidedBy {
  readonly action: DecisionAction
  readonly deposit_id?: number | null
  readonly payer_name?: string | null
  readonly amount?: string | null
}

export interface SmsFilter extends Paging {
  readonly status?: SmsStatus | null | undefined
  readonly device_id?: string | null | undefined
  readonly sender?: string | null | undefined
  readonly keyword?: string | null | undefined
  readonly since?: string | null | undefined
  readonly until?: string | null | undefined
}

/** /shooter/stats/topInfo: the SMS waiting in each status a person looks after. */
export interface TopInfo {
  readonly sms_need_check_cnt: number
  readonly parse_fail_cnt: number
  readonly unmatched_sms_cnt: number
  readonly duplicate_sms_cnt: number
}

type Sms = typeof SmsRow.Type
type Failing<E> = E | SqlError.SqlError

export interface SmsStoreShape {
  readonly listSms: (f: SmsFilter) => Effect.Effect<PageOf<Sms>, SqlError.SqlError>
  /** The SMS with what parsing and matching found; people's decisions under `match.decisions`. */
  readonly getSms: (id: number) => Effect.Effect<typeof SmsDetailRow.Type, Failing<SmsNotFound>>
  /** Back to `received`, so parse and match run again; `ifStatus`: only from that status. */
  readonly resetSms: (id: number, ifStatus?: SmsStatus) => Effect.Effect<Sms, Failing<SmsNotFound | SmsMoneyMoved | SmsStatusConflict>>
  readonly checkSms: (
    id: number,
    result: "pass" | "reject",
    operator?: string | null,
    reason?: string | null
  ) => Effect.Effect<Sms, Failing<SmsNotFound | SmsStatusConflict>>
  /**
   * approve: a manual_review or unmatched SMS goes to `approving` with a pending deposit of its
   * amount (the worker then takes it through the wallet); reject: to `rejected`. The decision is
   * kept, and the review flags this SMS set are cleared where no other open review holds them.
   */
  readonly resolveSms: (r: Resolution) => Effect.Effect<Sms, Failing<SmsStoreError>>
  /** A parse_failed SMS a person found is no money to credit: `rejected`, the decision kept. */
  readonly dismissSms: (id: number, by: DecidedBy) => Effect.Effect<Sms, Failing<SmsNotFound | SmsStatusConflict>>
  /**
   * A parse_failed or ignored SMS read by a person goes on as `parsed` with that payer and
   * amount (`parse.reader` "operator", what the readers said kept under `previous`), its bank
   * from the sender's whitelist entry when it has none; matching takes it from there. The row
   * lock and the status check make a double submit, or a race with a reset, one decision.
   */
  readonly assignSms: (a: Assignment) => Effect.Effect<Sms, Failing<SmsNotFound | SmsStatusConflict>>
  readonly topInfo: () => Effect.Effect<TopInfo, SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const { sql, listPage, one, notify } = yield* makeTables

  const decide = (smsId: number, d: Omit<DecisionRecord, "operator"> & { readonly operator: string | null }, from: SmsStatus, to: SmsStatus) =>
    sql`INSERT INTO recon.sms_decision (sms_id, operator, second_operator, action, deposit_id, payer_name, amount, reason,
        from_status, to_status)
      VALUES (${smsId}, ${d.operator}, ${d.second_operator ?? null}, ${d.action}, ${d.deposit_id ?? null}, ${d.payer_name ?? null},
        ${d.amount ?? null}, ${d.reason ?? null}, ${from}, ${to})`

  /**
   * The deposits a manual_review SMS put on review (task_status 6): pending ones of its amount
   * whose owner is its payer (the matching rule: the same recon.name_key, compared in SQL as the
   * match compared it) or that its match detail names, and the deposit chosen for it. Each is
   * cleared unless another manual_review SMS still holds it the same way; the chosen one always
   * (it is being approved).
   */
  const clearReviewFlags = (smsId: number, sms: { status: SmsStatus; amount: string | null }, chosen: number | null) =>
    Effect.gen(function*() {
      if (sms.status === "manual_review" && sms.amount !== null) {
        yield* sql`UPDATE recon.deposit AS d SET task_status = NULL
          FROM recon.shooter_sms AS s
          WHERE s.id = ${smsId} AND d.task_status = 6 AND d.amount = ${sms.amount}
            AND ${holds("s")}
            AND NOT EXISTS (SELECT 1 FROM recon.shooter_sms AS o
              WHERE o.status = 'manual_review' AND o.amount = ${sms.amount} AND o.id <> ${smsId} AND ${holds("o")})`
      }
      if (chosen !== null) yield* sql`UPDATE recon.deposit SET task_status = NULL WHERE task_status = 6 AND id = ${chosen}`
    })

  /**
   * Whether the SMS aliased `alias` holds deposit `d` on review: the same name key, or its match
   * detail names it as a candidate (a plain id, or an object with `deposit_id`/`id`).
   */
  const holds = (alias: "s" | "o") =>
    sql`(d.owner_key = ${sql.literal(alias)}.payer_key OR EXISTS (
      SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${sql.literal(alias)}.match_detail -> 'candidates') = 'array'
        THEN ${sql.literal(alias)}.match_detail -> 'candidates' ELSE '[]'::jsonb END) AS c
      WHERE (CASE WHEN jsonb_typeof(c) = 'object' THEN coalesce(c -> 'deposit_id', c -> 'id') ELSE c END) #>> '{}' = d.id::text))`

  /** Under the row's lock: `refuse` the change from the SMS's status, or `set` it and `record` the decision. */
  const changeSmsStatus = <E>(
    id: number,
    refuse: (status: string) => E | undefined,
    set: ReturnType<typeof sql.and>,
    record?: (row: Sms) => Effect.Effect<unknown, SqlError.SqlError>
  ): Effect.Effect<Sms, Failing<E | SmsNotFound>> =>
    sql.withTransaction(Effect.gen(function*() {
      const current = yield* sql<{ status: string }>`SELECT status FROM recon.shooter_sms WHERE id = ${id} FOR UPDATE`
      if (current.length === 0) return yield* new SmsNotFound({ smsId: id })
      const refusal = refuse(current[0]!.status)
      if (refusal !== undefined) return yield* Effect.fail(refusal)
      const rows = yield* sql`UPDATE recon.shooter_sms SET ${set}, updated_at = now() WHERE id = ${id}
        RETURNING ${sql.literal(smsColumns)}`
      const [row] = yield* decodeRows(SmsRow)(rows)
      if (record !== undefined) yield* record(row!)
      yield* notify("shooter_sms")
      return row!
    }))

  const listSms = Effect.fn("SmsStore.listSms")(function*(f: SmsFilter) {
    return yield* listPage(SmsRow, "shooter_sms", smsColumns, sql.and([
      ...(f.status != null ? [sql`status = ${f.status}`] : []),
      ...(f.device_id != null ? [sql`device_id = ${f.device_id}`] : []),
      ...(f.sender != null ? [sql`sender = ${f.sender}`] : []),
      ...(f.keyword != null && f.keyword !== "" ? [sql`body ILIKE ${containing(f.keyword)}`] : []),
      ...(f.since != null ? [sql`received_at >= ${new Date(f.since)}`] : []),
      ...(f.until != null ? [sql`received_at < ${new Date(f.until)}`] : [])
    ]), f)
  })

  const getSms = Effect.fn("SmsStore.getSms")(function*(id: number) {
    const row = yield* one(SmsDetailRow, () => new SmsNotFound({ smsId: id }))(yield* sql`SELECT ${sql.literal(smsColumns)}, duplicate_of,
        parse_detail AS parse, match_detail AS match FROM recon.shooter_sms WHERE id = ${id}`)
    const decisions = yield* decodeRows(DecisionRow)(yield* sql`SELECT operator, second_operator, action, deposit_id, payer_name,
        ${sql.literal(amountText("amount"))} AS amount, reason, from_status, to_status, decided_at
        FROM recon.sms_decision WHERE sms_id = ${id} ORDER BY id`)
    if (decisions.length === 0) return row
    // The people's decisions sit beside what the worker found; the record's own fields stay as they are.
    const found = row.match === null ? {} : typeof row.match === "object" && !Array.isArray(row.match) ? row.match : { detail: row.match }
    return { ...row, match: { ...found, decisions } }
  })

  const resetSms = Effect.fn("SmsStore.resetSms")(function*(id: number, ifStatus?: SmsStatus) {
    return yield* changeSmsStatus(id, (status) =>
      status === "approving" || status === "approved"
        ? new SmsMoneyMoved({ smsId: id, status })
        : ifStatus !== undefined && status !== ifStatus
        ? new SmsStatusConflict({ smsId: id, status, expected: [ifStatus] })
        : undefined, sql`status = 'received', bank = NULL, payer_name = NULL, amount = NULL, deposit_id = NULL,
          template_id = NULL, parse_detail = NULL, match_detail = NULL, duplicate_of = NULL`)
  })

  const checkSms = Effect.fn("SmsStore.checkSms")(function*(id: number, result: "pass" | "reject", operator: string | null = null, reason: string | null = null) {
    return yield* changeSmsStatus(id, (status) =>
      status === "need_check" ? undefined : new SmsStatusConflict({ smsId: id, status, expected: ["need_check"] }),
      result === "pass"
        ? sql`status = 'received', check_result = 'pass', checked_at = now()`
        : sql`status = 'rejected', check_result = 'reject', checked_at = now()`,
      (row) => decide(id, { operator, reason, action: result }, "need_check", row.status))
  })

  const resolveSms = Effect.fn("SmsStore.resolveSms")(function*(r: Resolution) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      const [sms] = yield* sql<{ status: SmsStatus; amount: string | null; payer_name: string | null; match: unknown }>`
        SELECT status, amount::text AS amount, payer_name, match_detail AS match FROM recon.shooter_sms WHERE id = ${r.id} FOR UPDATE`
      if (sms === undefined) return yield* new SmsNotFound({ smsId: r.id })
      if (sms.status !== "manual_review" && sms.status !== "unmatched") {
        return yield* new SmsStatusConflict({ smsId: r.id, status: sms.status, expected: ["manual_review", "unmatched"] })
      }
      const chosen = r.action === "approve" ? r.deposit_id : null
      if (chosen !== null) {
        const [deposit] = yield* sql<{ status: string; amount: string }>`SELECT status, amount::text AS amount
          FROM recon.deposit WHERE id = ${chosen} FOR UPDATE`
        if (deposit === undefined) return yield* new DepositNotFound({ depositId: chosen })
        if (deposit.status !== "pending") return yield* new DepositNotPending({ depositId: chosen, status: deposit.status })
        if (sms.amount === null || deposit.amount !== sms.amount) {
          return yield* new AmountMismatch({ depositId: chosen, depositAmount: deposit.amount, smsAmount: sms.amount })
        }
        const [other] = yield* sql<{ id: bigint }>`SELECT id FROM recon.shooter_sms
          WHERE deposit_id = ${chosen} AND status IN ('approving', 'approved') AND id <> ${r.id} LIMIT 1`
        if (other !== undefined) return yield* new DepositTaken({ depositId: chosen, smsId: Number(other.id) })
      }
      const rows = yield* sql`UPDATE recon.shooter_sms
        SET status = ${chosen === null ? "rejected" : "approving"}, deposit_id = ${chosen}, updated_at = now()
        WHERE id = ${r.id} RETURNING ${sql.literal(smsColumns)}`
      const [row] = yield* decodeRows(SmsRow)(rows)
      // An approval keeps the amount it moves, for the audit.
      yield* decide(r.id, { ...r, deposit_id: chosen, amount: chosen === null ? null : sms.amount }, sms.status, row!.status)
      yield* clearReviewFlags(r.id, sms, chosen)
      yield* notify("shooter_sms")
      return row!
    }))
  })

  const dismissSms = Effect.fn("SmsStore.dismissSms")(function*(id: number, by: DecidedBy) {
    return yield* changeSmsStatus(id, (status) =>
      status === "parse_failed" ? undefined : new SmsStatusConflict({ smsId: id, status, expected: ["parse_failed"] }),
      sql`status = 'rejected'`,
      (row) => decide(id, { ...by, action: "reject" }, "parse_failed", row.status))
  })

  const assignSms = Effect.fn("SmsStore.assignSms")(function*(a: Assignment) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      const [sms] = yield* sql<{ status: SmsStatus; parse: unknown }>`SELECT status, parse_detail AS parse
        FROM recon.shooter_sms WHERE id = ${a.id} FOR UPDATE`
      if (sms === undefined) return yield* new SmsNotFound({ smsId: a.id })
      if (sms.status !== "parse_failed" && sms.status !== "ignored") {
        return yield* new SmsStatusConflict({ smsId: a.id, status: sms.status, expected: ["parse_failed", "ignored"] })
      }
      const payer = a.payer_name.trim()
      const parse = { kind: "deposit", reader: "operator", operator: a.operator, payer_name: payer, amount: a.amount, previous: sms.parse }
      const rows = yield* sql`UPDATE recon.shooter_sms AS s SET status = 'parsed', payer_name = ${payer}, amount = ${a.amount}::numeric,
          bank = COALESCE(s.bank, (SELECT p.bank FROM recon.shooter_phone AS p WHERE p.phone = s.sender_normalized)),
          template_id = NULL, deposit_id = NULL, match_detail = NULL, parse_detail = ${JSON.stringify(parse)}::jsonb, updated_at = now()
        WHERE s.id = ${a.id} RETURNING ${sql.literal(smsColumns)}`
      const [row] = yield* decodeRows(SmsRow)(rows)
      yield* decide(a.id, { ...a, action: "assign", payer_name: payer }, sms.status, row!.status)
      yield* notify("shooter_sms")
      return row!
    }))
  })

  const topInfo = Effect.fn("SmsStore.topInfo")(function*() {
    // Kept by a trigger on shooter_sms (migration 0004): four rows, whatever the table's size.
    const rows = yield* sql<{ status: string; n: bigint }>`SELECT status, n FROM recon.sms_status_count`
    const count = (status: string) => Number(rows.find((row) => row.status === status)?.n ?? 0)
    return {
      sms_need_check_cnt: count("need_check"),
      parse_fail_cnt: count("parse_failed"),
      unmatched_sms_cnt: count("unmatched"),
      duplicate_sms_cnt: count("duplicate")
    }
  })

  return { listSms, getSms, resetSms, checkSms, resolveSms, dismissSms, assignSms, topInfo } satisfies SmsStoreShape
})

export class SmsStore extends Context.Service<SmsStore, SmsStoreShape>()("recon/recon/SmsStore") {
  static readonly layer = Layer.effect(SmsStore, make)
}
