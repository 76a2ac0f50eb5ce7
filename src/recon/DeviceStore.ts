// The phones that forward SMS, behind /shooter/pushsvc, /shooter/device and /shooter/phone: push
// registrations, devices (trusted or not) and the whitelisted sender numbers. Every change is
// NOTIFYed on `recon_changes`: the worker's push listener and whitelist act on it at once.
import { Context, Effect, Layer, Schema } from "effect"
import type { SqlError } from "effect/sql"
import { decodeRows } from "../db/Codecs.ts"
import type { PageOf, Paging } from "../db/Pages.ts"
import { DeviceRow, PhoneRow, RegistrationRow } from "../domain/Records.ts"
import type { PushFormat } from "../domain/Records.ts"
import { makeTables } from "./ReconTables.ts"
import { containing } from "../domain/PgValues.ts"

/** No push registration has this id. */
export class RegistrationNotFound extends Schema.TaggedError<RegistrationNotFound>()("RegistrationNotFound", { id: Schema.Int }) {}

/** The device has a push registration already. */
export class RegistrationExists extends Schema.TaggedError<RegistrationExists>()("RegistrationExists", { deviceId: Schema.String }) {}

/** No whitelisted phone has this id. */
export class PhoneNotFound extends Schema.TaggedError<PhoneNotFound>()("PhoneNotFound", { id: Schema.Int }) {}

/** The phone number is whitelisted already. */
export class DuplicatePhone extends Schema.TaggedError<DuplicatePhone>()("DuplicatePhone", { phone: Schema.String }) {}

/** No device has this id. */
export class DeviceNotFound extends Schema.TaggedError<DeviceNotFound>()("DeviceNotFound", { id: Schema.Int }) {}

/** What a DeviceStore method can fail with besides the SqlError. */
export type DeviceStoreError = RegistrationNotFound | RegistrationExists | PhoneNotFound | DuplicatePhone | DeviceNotFound

export interface NewRegistration {
  readonly device_id: string
  readonly name?: string | null | undefined
  readonly format: PushFormat
  readonly secret?: string | null | undefined
  readonly api_url?: string | null | undefined
  readonly silence_alert_s?: number | null | undefined
}

type Registration = typeof RegistrationRow.Type
type Phone = typeof PhoneRow.Type
type Device = typeof DeviceRow.Type
type Deleted = { readonly id: number }

export interface DeviceStoreShape {
  readonly listRegistrations: (
    p: Paging & { readonly device_id?: string | null | undefined; readonly enabled?: boolean | null | undefined }
  ) => Effect.Effect<PageOf<Registration>, SqlError.SqlError>
  readonly addRegistration: (r: NewRegistration) => Effect.Effect<Registration, RegistrationExists | SqlError.SqlError>
  readonly deleteRegistration: (id: number) => Effect.Effect<Deleted, RegistrationNotFound | SqlError.SqlError>
  readonly listPhones: (p: Paging & { readonly keyword?: string | null | undefined }) => Effect.Effect<PageOf<Phone>, SqlError.SqlError>
  readonly addPhone: (phone: string, bank: string | null, note: string | null) => Effect.Effect<Phone, DuplicatePhone | SqlError.SqlError>
  readonly deletePhone: (id: number) => Effect.Effect<Deleted, PhoneNotFound | SqlError.SqlError>
  readonly listDevices: (p: Paging & { readonly trusted?: boolean | null | undefined }) => Effect.Effect<PageOf<Device>, SqlError.SqlError>
  readonly trustDevice: (id: number, trusted: boolean) => Effect.Effect<Device, DeviceNotFound | SqlError.SqlError>
  /** Its registrations go with it; its SMS history stays. */
  readonly deleteDevice: (id: number) => Effect.Effect<Deleted, DeviceNotFound | SqlError.SqlError>
}

const registrationColumns = "id, device_id, name, format, api_url, silence_alert_s, enabled, listener_status, last_event_at, created_at"
const phoneColumns = "id, phone, bank, note, created_at"
const deviceColumns = "id, device_id, name, trusted, last_seen_at, sms_count, created_at"

const make = Effect.gen(function*() {
  const { sql, listPage, one, notify, deleteById } = yield* makeTables

  const listRegistrations = Effect.fn("DeviceStore.listRegistrations")(function*(
    p: Paging & { readonly device_id?: string | null | undefined; readonly enabled?: boolean | null | undefined }
  ) {
    return yield* listPage(RegistrationRow, "shooter_push", registrationColumns, sql.and([
      ...(p.device_id != null ? [sql`device_id = ${p.device_id}`] : []),
      ...(p.enabled != null ? [sql`enabled = ${p.enabled}`] : [])
    ]), p)
  })

  const addRegistration = Effect.fn("DeviceStore.addRegistration")(function*(r: NewRegistration) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`INSERT INTO recon.shooter_device (device_id, name) VALUES (${r.device_id}, ${r.name ?? null})
                 ON CONFLICT (device_id) DO NOTHING`
      // Without silence_alert_s the column's default applies (migration 0013: an hour).
      const rows = yield* sql`INSERT INTO recon.shooter_push ${sql.insert({
        device_id: r.device_id,
        name: r.name ?? null,
        format: r.format,
        secret: r.secret ?? null,
        api_url: r.api_url ?? null,
        ...(r.silence_alert_s == null ? {} : { silence_alert_s: r.silence_alert_s })
      })}
        ON CONFLICT (device_id) DO NOTHING
        RETURNING ${sql.literal(registrationColumns)}`
      if (rows.length === 0) return yield* new RegistrationExists({ deviceId: r.device_id })
      yield* notify("shooter_push")
      const [row] = yield* decodeRows(RegistrationRow)(rows)
      return row!
    }))
  })

  const deleteRegistration = Effect.fn("DeviceStore.deleteRegistration")(function*(id: number) {
    return yield* deleteById("shooter_push", () => new RegistrationNotFound({ id }), id)
  })

  const listPhones = Effect.fn("DeviceStore.listPhones")(function*(p: Paging & { readonly keyword?: string | null | undefined }) {
    return yield* listPage(PhoneRow, "shooter_phone", phoneColumns, sql.and([
      ...(p.keyword != null && p.keyword !== ""
        ? [sql`(phone LIKE ${containing(p.keyword)} OR bank ILIKE ${containing(p.keyword)} OR note ILIKE ${containing(p.keyword)})`]
        : [])
    ]), p)
  })

  const addPhone = Effect.fn("DeviceStore.addPhone")(function*(phone: string, bank: string | null, note: string | null) {
    const rows = yield* sql`INSERT INTO recon.shooter_phone (phone, bank, note) VALUES (${phone}, ${bank}, ${note})
      ON CONFLICT (phone) DO NOTHING RETURNING ${sql.literal(phoneColumns)}`
    if (rows.length === 0) return yield* new DuplicatePhone({ phone })
    yield* notify("shooter_phone")
    const [row] = yield* decodeRows(PhoneRow)(rows)
    return row!
  })

  const deletePhone = Effect.fn("DeviceStore.deletePhone")(function*(id: number) {
    return yield* deleteById("shooter_phone", () => new PhoneNotFound({ id }), id)
  })

  const listDevices = Effect.fn("DeviceStore.listDevices")(function*(p: Paging & { readonly trusted?: boolean | null | undefined }) {
    return yield* listPage(DeviceRow, "shooter_device", deviceColumns, sql.and([
      ...(p.trusted != null ? [sql`trusted = ${p.trusted}`] : [])
    ]), p)
  })

  const trustDevice = Effect.fn("DeviceStore.trustDevice")(function*(id: number, trusted: boolean) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql`UPDATE recon.shooter_device SET trusted = ${trusted} WHERE id = ${id}
        RETURNING ${sql.literal(deviceColumns)}`
      if (rows.length > 0) yield* notify("shooter_device")
      return yield* one(DeviceRow, () => new DeviceNotFound({ id }))(rows)
    }))
  })

  const deleteDevice = Effect.fn("DeviceStore.deleteDevice")(function*(id: number) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<{ device_id: string }>`DELETE FROM recon.shooter_device WHERE id = ${id} RETURNING device_id`
      if (rows.length === 0) return yield* new DeviceNotFound({ id })
      // Its registrations go with it; its SMS history stays.
      yield* sql`DELETE FROM recon.shooter_push WHERE device_id = ${rows[0]!.device_id}`
      yield* notify("shooter_device")
      return { id }
    }))
  })

  return {
    listRegistrations,
    addRegistration,
    deleteRegistration,
    listPhones,
    addPhone,
    deletePhone,
    listDevices,
    trustDevice,
    deleteDevice
  } satisfies DeviceStoreShape
})

export class DeviceStore extends Context.Service<DeviceStore, DeviceStoreShape>()("recon/recon/DeviceStore") {
  static readonly layer = Layer.effect(DeviceStore, make)
}
