// The queries of admin_service: its own two top-info counters, the operators, and the key that
// signs their session tokens. A query fails with its SqlError (src/http answers the database away as 503).
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { randomBytes } from "node:crypto"
import { ReviewCandidateRow, type ReviewItem, SmsRow } from "../domain/Records.ts"
import { compactForComparison } from "../domain/SmsText.ts"
import { amountText, decodeRows } from "./Codecs.ts"
import { smsColumns } from "./ReconStore.ts"

/** admin's own part of top-info (DESIGN section 7). */
export const OwnCounters = Schema.Struct({
  pending_deposit_cnt: Schema.Int,
  manual_review_cnt: Schema.Int
})
export type OwnCounters = typeof OwnCounters.Type

export const ReviewStatuses = ["need_check", "manual_review", "unmatched"] as const
export type ReviewStatus = (typeof ReviewStatuses)[number]

/** A page of the review queue, with how many SMS wait in each status. */
export interface ReviewPage {
  readonly items: ReadonlyArray<ReviewItem>
  readonly total: number
  readonly page: number
  readonly page_size: number
  readonly counts: Readonly<Record<ReviewStatus, number>>
}

/** Candidates shown per SMS: enough to choose from, not the whole deposit table. */
const MAX_CANDIDATES = 20

export interface Operator {
  readonly id: number
  readonly account: string
  readonly password_hash: string
}

export class AccountExists extends Schema.TaggedError<AccountExists>()("AccountExists", {
  account: Schema.String
}) {}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return {
    /** Two scalar subqueries, so each count can use its partial index on recon.deposit. */
    counters: (): Effect.Effect<OwnCounters, SqlError.SqlError> =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ pending: bigint; manual: bigint }>`SELECT
          (SELECT count(*) FROM recon.deposit WHERE status = 'pending') AS pending,
          (SELECT count(*) FROM recon.deposit WHERE task_status = 6) AS manual`
        return { pending_deposit_cnt: Number(row?.pending ?? 0), manual_review_cnt: Number(row?.manual ?? 0) }
      }),

    /** The SMS awaiting a person, newest first, each with the pending deposits it could be approved to. */
    reviewQueue: (p: { readonly page?: number | null | undefined; readonly page_size?: number | null | undefined; readonly status?: ReviewStatus | null | undefined }): Effect.Effect<ReviewPage, SqlError.SqlError> =>
      Effect.gen(function*() {
        const page = p.page ?? 1
        const size = p.page_size ?? 20
        const statuses: ReadonlyArray<ReviewStatus> = p.status == null ? ReviewStatuses : [p.status]
        const counted = yield* sql<{ status: ReviewStatus; n: bigint }>`SELECT status, count(*) AS n FROM recon.shooter_sms
          WHERE ${sql.in("status", ReviewStatuses)} GROUP BY status`
        const counts = { need_check: 0, manual_review: 0, unmatched: 0 }
        for (const row of counted) counts[row.status] = Number(row.n)
        const sms = yield* decodeRows(SmsRow)(yield* sql`SELECT ${sql.literal(smsColumns)} FROM recon.shooter_sms
          WHERE ${sql.in("status", statuses)} ORDER BY created_at DESC, id DESC LIMIT ${size} OFFSET ${(page - 1) * size}`)
        const amounts = [...new Set(sms.filter((s) => s.status !== "need_check" && s.amount !== null).map((s) => s.amount!))]
        const deposits = amounts.length === 0 ? [] : yield* decodeRows(ReviewCandidateRow)(yield* sql`SELECT d.id AS deposit_id,
            d.player_id, p.name AS player_name, d.from_bank_owner, ${sql.literal(amountText("d.amount"))} AS amount, d.task_status, d.created_at
          FROM recon.deposit AS d JOIN recon.player AS p ON p.id = d.player_id
          WHERE d.status = 'pending' AND ${sql.in("d.amount", amounts)} ORDER BY d.created_at DESC, d.id DESC`)
        const items = sms.map((s): ReviewItem => {
          const payer = s.payer_name === null ? undefined : compactForComparison(s.payer_name)
          const ofAmount = s.status === "need_check" ? [] : deposits
            .filter((d) => d.amount === s.amount)
            .map((d) => ({ ...d, same_name: compactForComparison(d.from_bank_owner) === payer }))
          // manual_review: the deposits matching chose between; unmatched: the payer's name first, then any of the amount.
          const candidates = s.status === "manual_review"
            ? ofAmount.filter((d) => d.same_name)
            : [...ofAmount.filter((d) => d.same_name), ...ofAmount.filter((d) => !d.same_name)]
          return { ...s, candidates: candidates.slice(0, MAX_CANDIDATES) }
        })
        const total = statuses.reduce((sum: number, status) => sum + counts[status], 0)
        return { items, total, page, page_size: size, counts }
      }),

    /** The newest SMS, whatever their status. */
    latestSms: (limit: number) =>
      Effect.flatMap(
        sql`SELECT ${sql.literal(smsColumns)} FROM recon.shooter_sms ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
        decodeRows(SmsRow)
      ),

    findOperator: (account: string): Effect.Effect<Operator | undefined, SqlError.SqlError> =>
      Effect.map(
        sql<{ id: bigint; account: string; password_hash: string }>`SELECT id, account, password_hash
          FROM admin.operator WHERE account = ${account}`,
        ([row]) => row === undefined ? undefined : { id: Number(row.id), account: row.account, password_hash: row.password_hash }
      ),

    createOperator: (account: string, passwordHash: string): Effect.Effect<number, AccountExists | SqlError.SqlError> =>
      Effect.gen(function*() {
        const rows = yield* sql<{ id: bigint }>`INSERT INTO admin.operator (account, password_hash)
          VALUES (${account}, ${passwordHash}) ON CONFLICT (account) DO NOTHING RETURNING id`
        if (rows.length === 0) return yield* new AccountExists({ account })
        return Number(rows[0]!.id)
      }),

    /** The first process to ask writes a fresh random key; every later one (and every restart) reads it. */
    signingKey: (): Effect.Effect<string, SqlError.SqlError> =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO admin.signing_key (id, secret) VALUES (1, ${randomBytes(32).toString("base64url")})
          ON CONFLICT (id) DO NOTHING`
        const [row] = yield* sql<{ secret: string }>`SELECT secret FROM admin.signing_key WHERE id = 1`
        return row!.secret
      })
  }
})

export class AdminStore extends Context.Service<AdminStore, Effect.Success<typeof make>>()("recon/db/AdminStore") {
  static readonly layer = Layer.effect(AdminStore, make)
}
