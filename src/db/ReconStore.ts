// The queries behind recon_service's routes: one method per route, on the recon tables, each
// failing with the envelope error it answers with. Writes that the worker must see at once
// also NOTIFY the `recon_changes` channel with the table's name.
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { ApiFailure, fail } from "../http/Envelope.ts"
import { DeviceRow, PhoneRow, RegistrationRow, SmsDetailRow, SmsRow, TemplateRow } from "../domain/Records.ts"
import type { PushFormat, SmsStatus } from "../domain/Records.ts"

export const CHANGES_CHANNEL = "recon_changes"

export interface Paging {
  readonly page?: number | null | undefined
  readonly page_size?: number | null | undefined
}
export interface PageOf<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly page: number
  readonly page_size: number
}

type Row<S extends Schema.Top> = S["Type"]
type Failure<S extends 404 | 409 | 503> = ApiFailure<S>

/** A lost or refused connection is the database being away (503); anything else is a defect (500). */
export const isDatabaseAway = (error: SqlError.SqlError): boolean => error.reason._tag === "ConnectionError"
  || /ECONNREFUSED|ECONNRESET|EPIPE|terminating connection|connection.*closed|the database system is/i.test(String(error.reason.cause ?? error.message))

/** A lost connection fails as 503; any other SqlError is a defect (500, nothing leaked). */
export const orAway = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError.SqlError> | Failure<503>, R> =>
  Effect.catch(effect, (error: E): Effect.Effect<never, Exclude<E, SqlError.SqlError> | Failure<503>> =>
    (error as { _tag?: string })._tag !== "SqlError"
      ? Effect.fail(error as Exclude<E, SqlError.SqlError>)
      : isDatabaseAway(error as SqlError.SqlError)
      ? Effect.fail(fail(503, "the database is unreachable"))
      : Effect.die(error))

const escapeLike = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export interface NewRegistration {
  readonly device_id: string
  readonly name?: string | null | undefined
  readonly format: PushFormat
  readonly secret?: string | null | undefined
  readonly api_url?: string | null | undefined
  readonly silence_alert_s?: number | null | undefined
}
export interface NewTemplate {
  readonly bank: string
  readonly sender: string | null
  readonly sample: string
  readonly rule: string
  readonly rule_source: "builtin" | "manual" | "ai"
}
export interface SmsFilter extends Paging {
  readonly status?: SmsStatus | null | undefined
  readonly device_id?: string | null | undefined
  readonly sender?: string | null | undefined
  readonly keyword?: string | null | undefined
  readonly since?: string | null | undefined
  readonly until?: string | null | undefined
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const decodeRows = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => {
    const decode = Schema.decodeUnknownEffect(Schema.Array(schema))
    return (rows: ReadonlyArray<unknown>) => Effect.orDie(decode(rows)) as Effect.Effect<ReadonlyArray<S["Type"]>>
  }

  const listPage = <S extends Schema.Top & { readonly DecodingServices: never }>(
    schema: S,
    table: string,
    columns: string,
    where: ReturnType<typeof sql.and>,
    paging: Paging
  ): Effect.Effect<PageOf<Row<S>>, Failure<503>> => {
    const page = paging.page ?? 1
    const size = paging.page_size ?? 20
    return orAway(Effect.gen(function*() {
      const from = sql.literal(`recon.${table}`)
      const [count] = yield* sql<{ total: bigint }>`SELECT count(*) AS total FROM ${from} WHERE ${where}`
      const rows = yield* sql`SELECT ${sql.literal(columns)} FROM ${from} WHERE ${where}
        ORDER BY created_at DESC, id DESC LIMIT ${size} OFFSET ${(page - 1) * size}`
      const items = yield* decodeRows(schema)(rows)
      return { items, total: Number(count?.total ?? 0), page, page_size: size }
    }))
  }

  const one = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, what: string) =>
  (rows: ReadonlyArray<unknown>): Effect.Effect<Row<S>, Failure<404>> =>
    rows.length === 0
      ? Effect.fail(fail(404, `${what} not found`))
      : Effect.map(decodeRows(schema)(rows), (items) => items[0]!)

  const notify = (table: string) => sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${table})`

  const registrationColumns = "id, device_id, name, format, api_url, silence_alert_s, enabled, listener_status, last_event_at, created_at"
  // Amounts as DESIGN section 4 writes them: "50000", "12.50" (no ".00" on whole won).
  const smsColumns = "id, device_id, sender, body, received_at, status, bank, payer_name, "
    + "CASE WHEN amount = trunc(amount) THEN trunc(amount)::text ELSE amount::text END AS amount, deposit_id, created_at"

  return {
    listRegistrations: (p: Paging & { readonly device_id?: string | null | undefined; readonly enabled?: boolean | null | undefined }) =>
      listPage(RegistrationRow, "shooter_push", registrationColumns, sql.and([
        ...(p.device_id != null ? [sql`device_id = ${p.device_id}`] : []),
        ...(p.enabled != null ? [sql`enabled = ${p.enabled}`] : [])
      ]), p),

    addRegistration: (r: NewRegistration) =>
      orAway(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO recon.shooter_device (device_id, name) VALUES (${r.device_id}, ${r.name ?? null})
                   ON CONFLICT (device_id) DO NOTHING`
        const rows = yield* sql`INSERT INTO recon.shooter_push (device_id, name, format, secret, api_url, silence_alert_s)
          VALUES (${r.device_id}, ${r.name ?? null}, ${r.format}, ${r.secret ?? null}, ${r.api_url ?? null}, ${r.silence_alert_s ?? null})
          ON CONFLICT (device_id) DO NOTHING
          RETURNING ${sql.literal(registrationColumns)}`
        if (rows.length === 0) return yield* fail(409, `device ${r.device_id} already has a registration`)
        yield* notify("shooter_push")
        const [row] = yield* decodeRows(RegistrationRow)(rows)
        return row!
      }))),

    deleteRegistration: (id: number) =>
      orAway(sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{ id: bigint }>`DELETE FROM recon.shooter_push WHERE id = ${id} RETURNING id`
        if (rows.length === 0) return yield* fail(404, `registration ${id} not found`)
        yield* notify("shooter_push")
        return { id }
      }))),

    listTemplates: (p: Paging & { readonly bank?: string | null | undefined }) =>
      listPage(TemplateRow, "shooter_template_recharge", "id, bank, sender, sample, rule, rule_source, created_at", sql.and([
        ...(p.bank != null ? [sql`bank = ${p.bank}`] : [])
      ]), p),

    addTemplate: (t: NewTemplate) =>
      orAway(Effect.gen(function*() {
        const rows = yield* sql`INSERT INTO recon.shooter_template_recharge (bank, sender, sample, rule, rule_source)
          VALUES (${t.bank}, ${t.sender}, ${t.sample}, ${t.rule}, ${t.rule_source})
          ON CONFLICT (bank, md5(rule)) DO NOTHING
          RETURNING id, bank, sender, sample, rule, rule_source, created_at`
        if (rows.length === 0) return yield* fail(409, `bank ${t.bank} already has a template with this rule`)
        yield* notify("shooter_template_recharge")
        const [row] = yield* decodeRows(TemplateRow)(rows)
        return row!
      })),

    deleteTemplate: (id: number) => deleteById("shooter_template_recharge", "template", id),

    listPhones: (p: Paging & { readonly keyword?: string | null | undefined }) =>
      listPage(PhoneRow, "shooter_phone", "id, phone, bank, note, created_at", sql.and([
        ...(p.keyword != null && p.keyword !== ""
          ? [sql`(phone LIKE ${escapeLike(p.keyword)} OR bank ILIKE ${escapeLike(p.keyword)} OR note ILIKE ${escapeLike(p.keyword)})`]
          : [])
      ]), p),

    addPhone: (phone: string, bank: string | null, note: string | null) =>
      orAway(Effect.gen(function*() {
        const rows = yield* sql`INSERT INTO recon.shooter_phone (phone, bank, note) VALUES (${phone}, ${bank}, ${note})
          ON CONFLICT (phone) DO NOTHING RETURNING id, phone, bank, note, created_at`
        if (rows.length === 0) return yield* fail(409, `phone ${phone} is already whitelisted`)
        yield* notify("shooter_phone")
        const [row] = yield* decodeRows(PhoneRow)(rows)
        return row!
      })),

    deletePhone: (id: number) => deleteById("shooter_phone", "phone", id),

    listSms: (f: SmsFilter) =>
      listPage(SmsRow, "shooter_sms", smsColumns, sql.and([
        ...(f.status != null ? [sql`status = ${f.status}`] : []),
        ...(f.device_id != null ? [sql`device_id = ${f.device_id}`] : []),
        ...(f.sender != null ? [sql`sender = ${f.sender}`] : []),
        ...(f.keyword != null && f.keyword !== "" ? [sql`body ILIKE ${escapeLike(f.keyword)}`] : []),
        ...(f.since != null ? [sql`received_at >= ${new Date(f.since)}`] : []),
        ...(f.until != null ? [sql`received_at < ${new Date(f.until)}`] : [])
      ]), f),

    getSms: (id: number) =>
      orAway(Effect.flatMap(
        sql`SELECT ${sql.literal(smsColumns)}, duplicate_of, parse_detail AS parse, match_detail AS match
            FROM recon.shooter_sms WHERE id = ${id}`,
        one(SmsDetailRow, `sms ${id}`)
      )),

    resetSms: (id: number) =>
      changeSmsStatus(id, (status) =>
        status === "approving" || status === "approved"
          ? `sms ${id} is ${status}: money has moved or is moving, it cannot be reset`
          : undefined, sql`status = 'received', bank = NULL, payer_name = NULL, amount = NULL, deposit_id = NULL,
            template_id = NULL, parse_detail = NULL, match_detail = NULL, duplicate_of = NULL`),

    checkSms: (id: number, result: "pass" | "reject") =>
      changeSmsStatus(id, (status) =>
        status === "need_check" ? undefined : `sms ${id} is ${status}, not need_check`,
        result === "pass"
          ? sql`status = 'received', check_result = 'pass', checked_at = now()`
          : sql`status = 'rejected', check_result = 'reject', checked_at = now()`),

    listDevices: (p: Paging & { readonly trusted?: boolean | null | undefined }) =>
      listPage(DeviceRow, "shooter_device", "id, device_id, name, trusted, last_seen_at, sms_count, created_at", sql.and([
        ...(p.trusted != null ? [sql`trusted = ${p.trusted}`] : [])
      ]), p),

    trustDevice: (id: number, trusted: boolean) =>
      orAway(sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql`UPDATE recon.shooter_device SET trusted = ${trusted} WHERE id = ${id}
          RETURNING id, device_id, name, trusted, last_seen_at, sms_count, created_at`
        if (rows.length > 0) yield* notify("shooter_device")
        return yield* one(DeviceRow, `device ${id}`)(rows)
      }))),

    deleteDevice: (id: number) =>
      orAway(sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{ device_id: string }>`DELETE FROM recon.shooter_device WHERE id = ${id} RETURNING device_id`
        if (rows.length === 0) return yield* fail(404, `device ${id} not found`)
        // Its registrations go with it; its SMS history stays.
        yield* sql`DELETE FROM recon.shooter_push WHERE device_id = ${rows[0]!.device_id}`
        yield* notify("shooter_device")
        return { id }
      }))),

    topInfo: () =>
      orAway(Effect.gen(function*() {
        // Kept by a trigger on shooter_sms (migration 0004): four rows, whatever the table's size.
        const rows = yield* sql<{ status: string; n: bigint }>`SELECT status, n FROM recon.sms_status_count`
        const count = (status: string) => Number(rows.find((row) => row.status === status)?.n ?? 0)
        return {
          sms_need_check_cnt: count("need_check"),
          parse_fail_cnt: count("parse_failed"),
          unmatched_sms_cnt: count("unmatched"),
          duplicate_sms_cnt: count("duplicate")
        }
      })),

    /** true while the database answers. */
    ping: () => sql`SELECT 1`.pipe(Effect.timeout("3 seconds"), Effect.as(true), Effect.orElseSucceed(() => false))
  }

  function deleteById(table: string, what: string, id: number) {
    return orAway(sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql`DELETE FROM ${sql.literal(`recon.${table}`)} WHERE id = ${id} RETURNING id`
      if (rows.length === 0) return yield* fail(404, `${what} ${id} not found`)
      yield* notify(table)
      return { id }
    })))
  }

  function changeSmsStatus(id: number, refuse: (status: string) => string | undefined, set: ReturnType<typeof sql.and>) {
    return orAway(sql.withTransaction(Effect.gen(function*() {
      const current = yield* sql<{ status: string }>`SELECT status FROM recon.shooter_sms WHERE id = ${id} FOR UPDATE`
      if (current.length === 0) return yield* fail(404, `sms ${id} not found`)
      const refusal = refuse(current[0]!.status)
      if (refusal !== undefined) return yield* fail(409, refusal)
      const rows = yield* sql`UPDATE recon.shooter_sms SET ${set}, updated_at = now() WHERE id = ${id}
        RETURNING ${sql.literal(smsColumns)}`
      yield* notify("shooter_sms")
      const [row] = yield* decodeRows(SmsRow)(rows)
      return row!
    })))
  }
})

export class ReconStore extends Context.Service<ReconStore, Effect.Success<typeof make>>()("recon/db/ReconStore") {
  static readonly layer = Layer.effect(ReconStore, make)
}
