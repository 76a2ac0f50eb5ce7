// The operator's search over every SMS (DESIGN section 11, /api/sms/list and /api/sms/export.csv):
// one filter — free text `q` (payer name, amount, account digits, SMS id, words of the text),
// status, bank, device, period — read page by page for the list, or in keyset batches for an
// export of any size that never holds a connection between batches.
import { Context, Effect, Layer, Option, Schema, Stream } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { parseAmount } from "../domain/Money.ts"
import type { SmsStatus } from "../domain/Records.ts"
import { decodeRows } from "../db/Codecs.ts"
import { type PageOf, pageWindow, type Paging } from "../db/Pages.ts"
import { smsColumns } from "../db/Sms.ts"
import { ConsoleSmsRow } from "../api/ConsoleRecords.ts"
import { containing } from "../domain/PgValues.ts"

/** The statuses in which an SMS waits for a person (DESIGN section 11: `waiting_s` is set for these). */
export const WAITING_STATUSES = ["need_check", "manual_review", "unmatched", "parse_failed"] as const satisfies ReadonlyArray<SmsStatus>

export interface SmsQuery {
  readonly status?: SmsStatus | null | undefined
  readonly q?: string | null | undefined
  readonly bank?: string | null | undefined
  readonly device_id?: string | null | undefined
  readonly since?: string | null | undefined
  readonly until?: string | null | undefined
}

/** Seconds since `received_at` while a person's action is awaited; null otherwise. */
export const waitingSeconds = (sms: { readonly status: SmsStatus; readonly received_ms: number }, nowMs: number): number | null =>
  (WAITING_STATUSES as ReadonlyArray<SmsStatus>).includes(sms.status) ? Math.max(0, Math.floor((nowMs - sms.received_ms) / 1000)) : null

/** The columns of a ConsoleSmsRow. */
export const consoleSmsColumns = `${smsColumns}, parse_detail->>'reason' AS reason, (extract(epoch FROM received_at) * 1000)::float8 AS received_ms`

/** Rows an export reads per statement. */
const EXPORT_BATCH = 500

/** Where an export batch continues: after this row (created_at as PostgreSQL's text, id). */
interface Cursor {
  readonly at: string
  readonly id: number
}

type Filters = { readonly banks: ReadonlyArray<string>; readonly devices: ReadonlyArray<string> }

export interface SmsSearchStoreShape {
  /** A page of the SMS the filter finds, newest first. */
  readonly list: (f: SmsQuery & Paging) => Effect.Effect<PageOf<ConsoleSmsRow>, SqlError.SqlError>
  /**
   * Every SMS the filter finds, newest first, in batches of {@link EXPORT_BATCH}: each batch one
   * statement continuing after the last row of the one before (a month of SMS is streamed, not held).
   */
  readonly export: (f: SmsQuery) => Stream.Stream<ConsoleSmsRow, SqlError.SqlError>
  /** The banks and devices to offer as filters. */
  readonly filters: () => Effect.Effect<Filters, SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** What `q` can mean, each an alternative: the SMS id, the amount, account digits, the payer's name or words of the text. */
  const matchesQ = (raw: string) => {
    const q = raw.trim()
    const id = /^#?\d{1,15}$/.test(q) ? Number(q.replace("#", "")) : undefined
    const amount = parseAmount(q.replace(/\s/g, ""))
    const digits = q.replace(/[\s*-]/g, "")
    return sql.or([
      sql`payer_name ILIKE ${containing(q)}`,
      sql`body ILIKE ${containing(q)}`,
      ...(id === undefined ? [] : [sql`id = ${id}`]),
      ...(amount === undefined ? [] : [sql`amount = ${amount}::numeric`]),
      // Account numbers are printed with hyphens and masks (352-****-4273-63): compare the digits.
      ...(/^\d{3,}$/.test(digits) ? [sql`regexp_replace(body, '[^0-9]', '', 'g') LIKE ${containing(digits)}`] : [])
    ])
  }

  const where = (f: SmsQuery) =>
    sql.and([
      ...(f.status != null ? [sql`status = ${f.status}`] : []),
      ...(f.q != null && f.q.trim() !== "" ? [matchesQ(f.q)] : []),
      ...(f.bank != null && f.bank !== "" ? [sql`bank = ${f.bank}`] : []),
      ...(f.device_id != null && f.device_id !== "" ? [sql`device_id = ${f.device_id}`] : []),
      ...(f.since != null ? [sql`received_at >= ${new Date(f.since)}`] : []),
      ...(f.until != null ? [sql`received_at < ${new Date(f.until)}`] : [])
    ])

  const list = Effect.fn("SmsSearchStore.list")(function*(f: SmsQuery & Paging) {
    const { page, size, offset } = pageWindow(f)
    const condition = where(f)
    const [count] = yield* sql<{ total: bigint }>`SELECT count(*) AS total FROM recon.shooter_sms WHERE ${condition}`
    const items = yield* decodeRows(ConsoleSmsRow)(yield* sql`SELECT ${sql.literal(consoleSmsColumns)} FROM recon.shooter_sms
      WHERE ${condition} ORDER BY created_at DESC, id DESC LIMIT ${size} OFFSET ${offset}`)
    return { items, total: Number(count?.total ?? 0), page, page_size: size }
  })

  const exportRows = (f: SmsQuery) =>
    Stream.paginate(Option.none<Cursor>(), (after) =>
      Effect.gen(function*() {
        // The cursor's time as PostgreSQL prints it: microseconds kept, so no row is skipped or repeated.
        const rows = yield* decodeRows(Schema.Struct({ ...ConsoleSmsRow.fields, cursor_at: Schema.String }))(yield* sql`
          SELECT ${sql.literal(consoleSmsColumns)}, created_at::text AS cursor_at FROM recon.shooter_sms
          WHERE ${where(f)} ${Option.match(after, { onNone: () => sql``, onSome: (c) => sql`AND (created_at, id) < (${c.at}::timestamptz, ${c.id})` })}
          ORDER BY created_at DESC, id DESC LIMIT ${EXPORT_BATCH}`)
        const last = rows.at(-1)
        const next = rows.length < EXPORT_BATCH || last === undefined ? Option.none() : Option.some(Option.some({ at: last.cursor_at, id: last.id }))
        return [rows.map(({ cursor_at: _, ...row }) => row), next] as const
      }))

  const filters = Effect.fn("SmsSearchStore.filters")(function*() {
    const banks = yield* sql<{ bank: string }>`SELECT bank FROM recon.shooter_template_recharge
      UNION SELECT bank FROM recon.shooter_phone WHERE bank IS NOT NULL ORDER BY 1 LIMIT 200`
    const devices = yield* sql<{ device_id: string }>`SELECT device_id FROM recon.shooter_device ORDER BY device_id LIMIT 500`
    return { banks: banks.map((b) => b.bank), devices: devices.map((d) => d.device_id) }
  })

  return { list, export: exportRows, filters } satisfies SmsSearchStoreShape
})

export class SmsSearchStore extends Context.Service<SmsSearchStore, SmsSearchStoreShape>()("recon/admin/SmsSearchStore") {
  static readonly layer = Layer.effect(SmsSearchStore, make)
}
