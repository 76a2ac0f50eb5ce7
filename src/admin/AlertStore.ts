// The queries behind the console's alerts (DESIGN section 11): the conditions read from the
// state itself (a phone silent past its registration's silence_alert_s, an SMS waiting for a
// person past SVC_REVIEW_WAIT_ALERT_S, an open balance gap), and the notices that make each alert
// reach the chat once.
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { SmsStatus } from "../domain/Records.ts"
import { amountText, decodeRows } from "../db/Codecs.ts"
import { WAITING_STATUSES } from "./SmsSearchStore.ts"
import { DbId, DbTime } from "../domain/PgValues.ts"

/** The most alerts of one kind listed (the oldest first); the detail of each says how many there are in all. */
export const MAX_ALERTS_PER_KIND = 200

export const SilentPhone = Schema.Struct({
  device_id: Schema.String,
  name: Schema.NullOr(Schema.String),
  silence_alert_s: Schema.Int,
  last_sms_at: Schema.NullOr(DbTime),
  since: DbTime
})
export type SilentPhone = typeof SilentPhone.Type

export const WaitingSms = Schema.Struct({
  id: DbId,
  status: SmsStatus,
  payer_name: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String),
  received_at: DbTime,
  since: DbTime,
  total: DbId
})
export type WaitingSms = typeof WaitingSms.Type

/** An open gap in an account's balances (recon.balance_gap, balance continuity): an SMS between the two never arrived or was never read. */
export const OpenBalanceGap = Schema.Struct({
  account: Schema.NullOr(Schema.String),
  bank: Schema.NullOr(Schema.String),
  device_id: Schema.NullOr(Schema.String),
  sender: Schema.NullOr(Schema.String),
  after_sms_id: DbId,
  before_sms_id: DbId,
  unexplained: Schema.String,
  since: DbTime,
  total: DbId
})
export type OpenBalanceGap = typeof OpenBalanceGap.Type

/** One alert as the chat is told about it: (kind, subject, since) is its identity. */
export interface Notice {
  readonly kind: string
  readonly subject: string
  readonly since: string
  readonly detail: string
}

const NoticeRow = Schema.Struct({ kind: Schema.String, subject: Schema.String, since: DbTime, detail: Schema.String, attempts: Schema.Int })

/** Notices sent per message (the rest go in the next pass). */
export const NOTICES_PER_MESSAGE = 30

/** What a `sendDue` did: how many notices were sent, and `send`'s failure, if any. */
export interface SendOutcome<E> {
  readonly sent: number
  readonly failure: E | undefined
}

export interface AlertStoreShape {
  /**
   * Enabled registrations with a silence window whose newest SMS (else the registration itself)
   * is older than the window: the same reading as missing_sms_sync_loop's `silent` mark.
   */
  readonly silentPhones: (now: Date) => Effect.Effect<ReadonlyArray<SilentPhone>, SqlError.SqlError>
  /** SMS awaiting a person since more than `waitS` seconds after they were received, the oldest first. */
  readonly waitingSms: (now: Date, waitS: number) => Effect.Effect<ReadonlyArray<WaitingSms>, SqlError.SqlError>
  /** The open balance gaps with their accounts, the oldest first (read where the worker writes them, not through recon's API). */
  readonly balanceGaps: (now: Date, graceS: number) => Effect.Effect<ReadonlyArray<OpenBalanceGap>, SqlError.SqlError>
  /** Records the open alerts not seen before (to be sent once). */
  readonly noteAlerts: (alerts: ReadonlyArray<Notice>) => Effect.Effect<void, SqlError.SqlError>
  /**
   * In one transaction: claims unsent notices of alerts still open (`open`), due, up to
   * {@link NOTICES_PER_MESSAGE}, skipping those another process holds; hands them to `send`; marks
   * them sent, or backs them off (10 s doubling, at most an hour) when `send` fails. Answers
   * how many were sent and the failure, if any.
   */
  readonly sendDue: <E>(
    open: ReadonlyArray<Notice>,
    send: (notices: ReadonlyArray<Notice>) => Effect.Effect<void, E>
  ) => Effect.Effect<SendOutcome<E>, SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const silentPhones = Effect.fn("AlertStore.silentPhones")(function*(now: Date) {
    return yield* decodeRows(SilentPhone)(yield* sql`SELECT p.device_id, p.name, p.silence_alert_s, last.at AS last_sms_at,
        COALESCE(last.at, p.created_at) + make_interval(secs => p.silence_alert_s) AS since
      FROM recon.shooter_push AS p
      LEFT JOIN LATERAL (SELECT max(s.received_at) AS at FROM recon.shooter_sms AS s WHERE s.device_id = p.device_id) AS last ON true
      WHERE p.enabled AND p.silence_alert_s IS NOT NULL
        AND COALESCE(last.at, p.created_at) + make_interval(secs => p.silence_alert_s) <= ${now}
      ORDER BY since LIMIT ${MAX_ALERTS_PER_KIND}`)
  })

  const waitingSms = Effect.fn("AlertStore.waitingSms")(function*(now: Date, waitS: number) {
    return yield* decodeRows(WaitingSms)(yield* sql`SELECT id, status, payer_name, ${sql.literal(amountText("amount"))} AS amount, received_at,
        received_at + make_interval(secs => ${waitS}) AS since, count(*) OVER () AS total
      FROM recon.shooter_sms
      WHERE ${sql.in("status", WAITING_STATUSES)} AND received_at + make_interval(secs => ${waitS}) <= ${now}
      ORDER BY received_at, id LIMIT ${MAX_ALERTS_PER_KIND}`)
  })

  const balanceGaps = Effect.fn("AlertStore.balanceGaps")(function*(now: Date, graceS: number) {
    // Past the grace period (a message a moment late closes its gap first), and not explained by an operator.
    return yield* decodeRows(OpenBalanceGap)(yield* sql`SELECT a.account, a.bank, a.device_id, a.sender, g.after_sms_id, g.before_sms_id,
        ${sql.literal(amountText("g.unexplained"))} AS unexplained, g.since + make_interval(secs => ${graceS}) AS since, count(*) OVER () AS total
      FROM recon.balance_gap AS g JOIN recon.balance_account AS a ON a.id = g.account_id
      WHERE g.closed_at IS NULL AND g.explained_at IS NULL AND g.since + make_interval(secs => ${graceS}) <= ${now}
      ORDER BY g.since, g.id LIMIT ${MAX_ALERTS_PER_KIND}`)
  })

  const noteAlerts = Effect.fn("AlertStore.noteAlerts")(function*(alerts: ReadonlyArray<Notice>) {
    if (alerts.length === 0) return
    yield* sql`INSERT INTO admin.alert_notice (kind, subject, since, detail)
      SELECT x.kind, x.subject, x.since, x.detail
      FROM jsonb_to_recordset(${JSON.stringify(alerts)}::jsonb) AS x(kind text, subject text, since timestamptz, detail text)
      ON CONFLICT (kind, subject, since) DO NOTHING`
  })

  // Generic in `send`'s failure, so a span around it rather than Effect.fn (which would lose E).
  const sendDue = <E>(open: ReadonlyArray<Notice>, send: (notices: ReadonlyArray<Notice>) => Effect.Effect<void, E>) =>
    (open.length === 0 ? Effect.succeed<SendOutcome<E>>({ sent: 0, failure: undefined }) : sql.withTransaction(Effect.gen(function*() {
      const rows = yield* decodeRows(NoticeRow)(yield* sql`SELECT n.kind, n.subject, n.since, n.detail, n.attempts
        FROM admin.alert_notice AS n
        JOIN jsonb_to_recordset(${JSON.stringify(open)}::jsonb) AS o(kind text, subject text, since timestamptz)
          ON o.kind = n.kind AND o.subject = n.subject AND o.since = n.since
        WHERE n.sent_at IS NULL AND n.next_at <= now()
        ORDER BY n.since, n.kind, n.subject LIMIT ${NOTICES_PER_MESSAGE} FOR UPDATE OF n SKIP LOCKED`)
      if (rows.length === 0) return { sent: 0, failure: undefined }
      const keys = JSON.stringify(rows.map(({ kind, since, subject }) => ({ kind, subject, since })))
      const outcome = yield* Effect.result(send(rows))
      yield* outcome._tag === "Success"
        ? sql`UPDATE admin.alert_notice AS n SET sent_at = now(), attempts = n.attempts + 1
            FROM jsonb_to_recordset(${keys}::jsonb) AS k(kind text, subject text, since timestamptz)
            WHERE n.kind = k.kind AND n.subject = k.subject AND n.since = k.since`
        : sql`UPDATE admin.alert_notice AS n SET attempts = n.attempts + 1,
              next_at = now() + least(interval '10 seconds' * power(2, least(n.attempts, 20)), interval '1 hour')
            FROM jsonb_to_recordset(${keys}::jsonb) AS k(kind text, subject text, since timestamptz)
            WHERE n.kind = k.kind AND n.subject = k.subject AND n.since = k.since`
      return outcome._tag === "Success" ? { sent: rows.length, failure: undefined } : { sent: 0, failure: outcome.failure }
    }))).pipe(Effect.withSpan("AlertStore.sendDue"))

  return { silentPhones, waitingSms, balanceGaps, noteAlerts, sendDue } satisfies AlertStoreShape
})

export class AlertStore extends Context.Service<AlertStore, AlertStoreShape>()("recon/admin/AlertStore") {
  static readonly layer = Layer.effect(AlertStore, make)
}
