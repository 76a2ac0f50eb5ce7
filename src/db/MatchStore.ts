// The queries of order_match_loop: a batch of SMS decided in one short transaction (claimed with
// SKIP LOCKED, their name keys locked in key order), approving SMS leased for a wallet call, and
// the wallet's answers recorded. No transaction is ever open across a call to another service.
import { DateTime, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { type Candidate, decide, type Decision, type MatchDetail, type WalletAnswer } from "../domain/Matching.ts"
import { countMatchDecisions } from "../observability/Metrics.ts"
import { reportSmsChanges } from "../observability/SmsChanges.ts"
import { DbId, decodeRows } from "./Codecs.ts"

/** How long from its first parse an SMS without a candidate is tried again on every pass. */
export const UNMATCHED_WINDOW = "24 hours"
/** Players listed in the match detail when many share a name. */
const PLAYERS_SHOWN = 10

const Claimed = Schema.Struct({
  id: DbId,
  status: Schema.String,
  payer_name: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String),
  key: Schema.NullOr(Schema.String)
})
const CandidateRow = Schema.Struct({
  sms_id: DbId,
  deposit_id: DbId,
  player_id: DbId,
  from_bank_owner: Schema.String,
  amount: Schema.String
})
const PlayersRow = Schema.Struct({
  key: Schema.String,
  n: DbId,
  ids: Schema.Array(DbId)
})
const Due = Schema.Struct({ id: DbId, deposit_id: DbId, attempts: Schema.Int })
export type Due = typeof Due.Type

const decodeClaimed = decodeRows(Claimed)
const decodeCandidates = decodeRows(CandidateRow)
const decodePlayers = decodeRows(PlayersRow)
const decodeDue = decodeRows(Due)

export interface Decided {
  /** SMS now approving, leased to this process until `leaseUntil`: send them to the wallet. */
  readonly approving: ReadonlyArray<Due>
  readonly reviews: number
  /** SMS newly unmatched, or unmatched ones that now went elsewhere (the counter moved). */
  readonly unmatchedChanged: number
  /** How many SMS the batch claimed: a full batch means more may be waiting. */
  readonly claimed: number
}

export interface Outcome {
  readonly id: number
  readonly depositId: number
  readonly status: "approved" | "manual_review" | "approving"
  readonly wallet: WalletAnswer
  /** For `approving`: when to send again. */
  readonly nextAt: Date | null
  readonly reason: string | undefined
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const json = (value: unknown) => JSON.stringify(value)

  /**
   * Decides up to `batch` SMS: the parsed ones, and unmatched ones (within their window) for which
   * a pending deposit has since appeared. Approvals are committed with their deposit and a lease
   * before any wallet call.
   */
  const decideBatch = (batch: number, now: DateTime.Utc, leaseUntil: Date) =>
    sql.withTransaction(Effect.gen(function*() {
      const parsed = yield* sql`
        SELECT id, status, payer_name, amount::text AS amount, payer_key AS key
        FROM recon.shooter_sms WHERE status = 'parsed'
        ORDER BY id LIMIT ${batch} FOR UPDATE SKIP LOCKED`.pipe(Effect.flatMap(decodeClaimed))
      const retried = parsed.length >= batch ? [] : yield* sql`
        SELECT s.id, s.status, s.payer_name, s.amount::text AS amount, s.payer_key AS key
        FROM recon.shooter_sms AS s
        WHERE s.status = 'unmatched' AND s.match_started_at > now() - ${UNMATCHED_WINDOW}::interval
          AND EXISTS (SELECT 1 FROM recon.deposit AS d
            WHERE d.status = 'pending' AND d.owner_key = s.payer_key AND d.amount = s.amount
              AND NOT EXISTS (SELECT 1 FROM recon.shooter_sms AS a WHERE a.status = 'approving' AND a.deposit_id = d.id))
        ORDER BY s.id LIMIT ${batch - parsed.length} FOR UPDATE OF s SKIP LOCKED`.pipe(Effect.flatMap(decodeClaimed))
      const claimed = [...parsed, ...retried]
      if (claimed.length === 0) return { approving: [], reviews: 0, unmatchedChanged: 0, claimed: 0 } satisfies Decided
      const keys = [...new Set(claimed.flatMap((s) => s.key === null || s.key === "" ? [] : [s.key]))]
      // From here on, no other process decides on these names until we commit; the next statements
      // see every approval committed before.
      if (keys.length > 0) yield* sql`SELECT recon.lock_match_keys(ARRAY(SELECT jsonb_array_elements_text(${json(keys)}::jsonb)))`
      const ids = claimed.map((s) => s.id)
      const candidates = keys.length === 0 ? [] : yield* sql`
        SELECT s.id AS sms_id, d.id AS deposit_id, d.player_id, d.from_bank_owner, d.amount::text AS amount
        FROM recon.shooter_sms AS s
        JOIN recon.deposit AS d ON d.status = 'pending' AND d.owner_key = s.payer_key AND d.amount = s.amount
        WHERE s.id IN ${sql.in(ids)}
          AND NOT EXISTS (SELECT 1 FROM recon.shooter_sms AS a WHERE a.status = 'approving' AND a.deposit_id = d.id)
        ORDER BY d.id`.pipe(Effect.flatMap(decodeCandidates))
      const players = keys.length === 0 ? [] : yield* sql`
        SELECT name_key AS key, count(*) AS n, (array_agg(id ORDER BY id))[1:${PLAYERS_SHOWN}] AS ids
        FROM recon.player WHERE name_key IN ${sql.in(keys)} GROUP BY name_key`.pipe(Effect.flatMap(decodePlayers))

      const bySms = new Map<number, Array<Candidate>>()
      for (const { sms_id, ...candidate } of candidates) bySms.set(sms_id, [...(bySms.get(sms_id) ?? []), candidate])
      const byKey = new Map(players.map((p) => [p.key, p]))
      const decidedAt = DateTime.formatIso(now)
      // A deposit taken by an earlier SMS of this batch is no longer a candidate for a later one.
      const taken = new Set<number>()
      const decisions: Array<{ readonly id: number; readonly previous: string; readonly decision: Decision }> = []
      for (const sms of claimed) {
        const known = sms.key === null ? undefined : byKey.get(sms.key)
        const decision = decide({
          payerName: sms.payer_name,
          amount: sms.amount,
          key: sms.key,
          candidates: (bySms.get(sms.id) ?? []).filter((c) => !taken.has(c.deposit_id)),
          players: known?.ids ?? [],
          playerCount: known?.n ?? 0
        }, decidedAt)
        if (decision._tag === "Approve") taken.add(decision.depositId)
        decisions.push({ id: sms.id, previous: sms.status, decision })
      }

      // An unmatched SMS still without a candidate is left as it is.
      const writes = decisions.filter((d) => !(d.previous === "unmatched" && d.decision._tag === "Unmatched"))
      if (writes.length > 0) {
        yield* sql`
          UPDATE recon.shooter_sms AS s SET
            status = x.status, deposit_id = x.deposit_id, match_detail = x.detail,
            match_attempts = 0, match_next_at = x.next_at, updated_at = now()
          FROM jsonb_to_recordset(${json(writes.map(({ decision, id }) => ({
            id,
            status: decision.detail.decision,
            deposit_id: decision._tag === "Approve" ? decision.depositId : null,
            detail: decision.detail satisfies MatchDetail,
            next_at: decision._tag === "Approve" ? leaseUntil.toISOString() : null
          })))}::jsonb) AS x(id bigint, status text, deposit_id bigint, detail jsonb, next_at timestamptz)
          WHERE s.id = x.id`
      }
      yield* sql.afterCommit(countMatchDecisions(decisions))
      yield* reportSmsChanges(sql, writes.map(({ decision, id }) => ({ id, status: decision.detail.decision })))
      const flagged = [...new Set(decisions.flatMap((d) => d.decision._tag === "Review" ? d.decision.depositIds : []))]
      if (flagged.length > 0) {
        yield* sql`UPDATE recon.deposit SET task_status = 6
          WHERE id IN ${sql.in(flagged)} AND status = 'pending' AND task_status IS DISTINCT FROM 6`
      }
      const decided: Decided = {
        approving: decisions.flatMap((d) => d.decision._tag === "Approve" ? [{ id: d.id, deposit_id: d.decision.depositId, attempts: 0 }] : []),
        reviews: decisions.filter((d) => d.decision._tag === "Review").length,
        unmatchedChanged: writes.filter((d) => (d.previous === "unmatched") !== (d.decision._tag === "Unmatched")).length,
        claimed: claimed.length
      }
      return decided
    }))

  /** Approving SMS due for a wallet call (never sent, lease expired, or backoff over), leased to this process. */
  const leaseDue = (limit: number, now: Date, leaseUntil: Date) =>
    limit <= 0 ? Effect.succeed([] as ReadonlyArray<Due>) : sql`
      UPDATE recon.shooter_sms AS s SET match_next_at = ${leaseUntil}
      FROM (SELECT id FROM recon.shooter_sms
        WHERE status = 'approving' AND deposit_id IS NOT NULL AND (match_next_at IS NULL OR match_next_at <= ${now})
        ORDER BY match_next_at NULLS FIRST, id LIMIT ${limit} FOR UPDATE SKIP LOCKED) AS due
      WHERE s.id = due.id
      RETURNING s.id, s.deposit_id, s.match_attempts AS attempts`.pipe(Effect.flatMap(decodeDue))

  /** Gives leases back (a pass interrupted mid-call, or out of time): due again at once. */
  const release = (ids: ReadonlyArray<number>) =>
    ids.length === 0 ? Effect.void : Effect.asVoid(sql`
      UPDATE recon.shooter_sms SET match_next_at = NULL WHERE id IN ${sql.in(ids)} AND status = 'approving'`)

  /**
   * The wallet's answers, in one statement; an SMS changed meanwhile (not approving that deposit) is
   * left alone. `match.decision` then says what happened last: `approved`, or `manual_review` and why.
   */
  const record = (outcomes: ReadonlyArray<Outcome>) =>
    outcomes.length === 0 ? Effect.succeed(0) : sql`
      UPDATE recon.shooter_sms AS s SET
        status = x.status,
        match_attempts = x.attempts,
        match_next_at = x.next_at,
        match_detail = COALESCE(s.match_detail, '{}'::jsonb) || jsonb_build_object('wallet', x.wallet)
          || CASE WHEN x.status = 'approved' THEN jsonb_build_object('decision', 'approved')
            WHEN x.reason IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('decision', 'manual_review', 'reason', x.reason) END,
        updated_at = now()
      FROM jsonb_to_recordset(${json(outcomes.map((o) => ({
        id: o.id,
        deposit_id: o.depositId,
        status: o.status,
        attempts: o.wallet.attempts,
        next_at: o.nextAt?.toISOString() ?? null,
        wallet: o.wallet,
        reason: o.reason ?? null
      })))}::jsonb) AS x(id bigint, deposit_id bigint, status text, attempts integer, next_at timestamptz, wallet jsonb, reason text)
      WHERE s.id = x.id AND s.status = 'approving' AND s.deposit_id = x.deposit_id
      RETURNING s.id, s.status`.pipe(
        Effect.tap((rows) => reportSmsChanges(sql, rows.flatMap((row) => row.status === "approving" ? [] : [{ id: Number(row.id), status: row.status as Outcome["status"] }]))),
        Effect.map((rows) => rows.length)
      )

  return { decideBatch, leaseDue, release, record }
})

export type MatchStore = Effect.Success<typeof make>
