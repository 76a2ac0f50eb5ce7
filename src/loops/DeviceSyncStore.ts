// The queries of the loops that keep the phones' books: sms_id_sync_loop (each device's count and
// last SMS, duplicate links pointed at their original, under one advisory lock per transaction)
// and missing_sms_sync_loop (registrations gone silent, the SMS Gateway phones to ask for their
// inbox, each ask claimed in recon.worker_cursor across processes).
import { Context, DateTime, type Duration, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { DbId } from "../domain/PgValues.ts"
import { sqlFailures } from "../db/Codecs.ts"

const SMS_ID_SYNC_CURSOR = "sms_id_sync_loop.since"

const exportCursorName = (deviceId: string): string => `missing_sms_sync_loop.export:${deviceId}`

/** An SMS Gateway registration to ask for its inbox, with what the window is computed from. */
const ExportCandidate = Schema.Struct({
  device_id: Schema.String,
  api_url: Schema.String,
  remote_device_id: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  last_received_at: Schema.NullOr(Schema.Date),
  last_asked_at: Schema.NullOr(Schema.String)
})
export type ExportCandidate = typeof ExportCandidate.Type

/** A registration just marked silent, and the silence it was allowed. */
const Silenced = Schema.Struct({ device_id: Schema.String, silence_alert_s: Schema.Int })
export type Silenced = typeof Silenced.Type

export class DeviceSyncStore extends Context.Service<DeviceSyncStore, {
  /** sms_id_sync_loop's lock for the current transaction: false when another process holds it. */
  trySyncLock(): Effect.Effect<boolean, SqlError.SqlError>
  /** Where the previous sync started (the epoch before the first). */
  syncedSince(): Effect.Effect<Date, SqlError.SqlError>
  /** The database's transaction time, where the next sync starts. */
  now(): Effect.Effect<Date, SqlError.SqlError>
  /**
   * Recounts the devices that received SMS since `since` (2 minutes of overlap: an SMS becomes
   * visible at its commit, a moment after its created_at), exactly, not incrementally.
   */
  recountDevices(since: Date): Effect.Effect<void, SqlError.SqlError>
  /** A copy marked as the duplicate of another copy points at that copy's original instead; answers how many moved. */
  relinkDuplicates(): Effect.Effect<number, SqlError.SqlError>
  /** Where the next sync starts. */
  markSynced(at: Date): Effect.Effect<void, SqlError.SqlError>
  /**
   * 'listening'/'pending' → 'silent' once the newest SMS (else the registration) is older than
   * silence_alert_s. One conditional statement: each change happens, and is logged, in one process.
   */
  markSilent(now: Date): Effect.Effect<ReadonlyArray<Silenced>, SqlError.SqlError>
  /** The enabled registrations with an export API, by device id. */
  exportCandidates(): Effect.Effect<ReadonlyArray<ExportCandidate>, SqlError.SqlError>
  /** True when this process may ask the device now (nobody did within `period`). */
  claimExport(deviceId: string, now: DateTime.Utc, period: Duration.Duration): Effect.Effect<boolean, SqlError.SqlError>
  /** A failed ask gives its claim back, so the next pass tries again instead of waiting a period. */
  releaseExport(deviceId: string, now: DateTime.Utc): Effect.Effect<void, SqlError.SqlError>
}>()("recon/loops/DeviceSyncStore") {
  static readonly layer = Layer.effect(DeviceSyncStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findLock = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ locked: Schema.Boolean }),
      execute: () => sql`SELECT pg_try_advisory_xact_lock(hashtextextended('recon.sms_id_sync_loop', 0)) AS locked`
    })
    const findCursor = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ value: Schema.String }),
      execute: (name) => sql`SELECT value FROM recon.worker_cursor WHERE name = ${name}`
    })
    const findNow = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ at: Schema.Date }),
      execute: () => sql`SELECT now() AS at`
    })
    const relinked = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ id: DbId }),
      execute: () =>
        sql`
          UPDATE recon.shooter_sms AS copy SET duplicate_of = o.duplicate_of, updated_at = now()
          FROM recon.shooter_sms AS o
          WHERE copy.duplicate_of = o.id AND o.status = 'duplicate' AND o.duplicate_of IS NOT NULL
            AND o.duplicate_of <> copy.id
          RETURNING copy.id`
    })
    const silenced = SqlSchema.findAll({
      Request: Schema.Date,
      Result: Silenced,
      execute: (now) =>
        sql`UPDATE recon.shooter_push AS p SET listener_status = 'silent'
        WHERE p.enabled AND p.silence_alert_s IS NOT NULL AND p.listener_status IN ('listening', 'pending')
          AND COALESCE((SELECT max(s.received_at) FROM recon.shooter_sms AS s WHERE s.device_id = p.device_id), p.created_at)
            < ${now}::timestamptz - make_interval(secs => p.silence_alert_s)
        RETURNING p.device_id, p.silence_alert_s`
    })
    const candidates = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ExportCandidate,
      execute: () =>
        sql`
        SELECT p.device_id, p.api_url, p.remote_device_id, p.created_at,
          (SELECT max(s.received_at) FROM recon.shooter_sms AS s WHERE s.device_id = p.device_id) AS last_received_at,
          (SELECT c.value FROM recon.worker_cursor AS c WHERE c.name = 'missing_sms_sync_loop.export:' || p.device_id) AS last_asked_at
        FROM recon.shooter_push AS p
        WHERE p.enabled AND p.api_url IS NOT NULL AND btrim(p.api_url) <> ''
        ORDER BY p.device_id`
    })

    return DeviceSyncStore.of({
      trySyncLock: Effect.fn("DeviceSyncStore.trySyncLock")(function*() {
        return (yield* sqlFailures(findLock(undefined))).locked
      }),
      syncedSince: Effect.fn("DeviceSyncStore.syncedSince")(function*() {
        const cursor = yield* sqlFailures(findCursor(SMS_ID_SYNC_CURSOR))
        return cursor._tag === "None" ? new Date(0) : new Date(cursor.value.value)
      }),
      now: Effect.fn("DeviceSyncStore.now")(function*() {
        return (yield* sqlFailures(findNow(undefined))).at
      }),
      recountDevices: Effect.fn("DeviceSyncStore.recountDevices")(function*(since: Date) {
        yield* sql`
        UPDATE recon.shooter_device AS d SET sms_count = c.n, last_seen_at = c.last_at
        FROM (
          SELECT device_id, count(*) AS n, max(received_at) AS last_at FROM recon.shooter_sms
          WHERE device_id IN (SELECT DISTINCT device_id FROM recon.shooter_sms
                              WHERE created_at > ${since}::timestamptz - interval '2 minutes')
          GROUP BY device_id
        ) AS c
        WHERE d.device_id = c.device_id AND (d.sms_count, d.last_seen_at) IS DISTINCT FROM (c.n, c.last_at)`
      }),
      relinkDuplicates: Effect.fn("DeviceSyncStore.relinkDuplicates")(function*() {
        return (yield* sqlFailures(relinked(undefined))).length
      }),
      markSynced: Effect.fn("DeviceSyncStore.markSynced")(function*(at: Date) {
        yield* sql`INSERT INTO recon.worker_cursor (name, value, updated_at) VALUES (${SMS_ID_SYNC_CURSOR}, ${at.toISOString()}, now())
        ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = now()`
      }),
      markSilent: Effect.fn("DeviceSyncStore.markSilent")(function*(now: Date) {
        return yield* sqlFailures(silenced(now))
      }),
      exportCandidates: Effect.fn("DeviceSyncStore.exportCandidates")(function*() {
        return yield* sqlFailures(candidates(undefined))
      }),
      claimExport: Effect.fn("DeviceSyncStore.claimExport")(function*(deviceId: string, now: DateTime.Utc, period: Duration.Duration) {
        const rows = yield* sql`INSERT INTO recon.worker_cursor (name, value, updated_at)
        VALUES (${exportCursorName(deviceId)}, ${DateTime.formatIso(now)}, ${DateTime.toDateUtc(now)})
        ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
        WHERE recon.worker_cursor.updated_at <= ${DateTime.toDateUtc(DateTime.subtractDuration(now, period))}
        RETURNING name`
        return rows.length > 0
      }),
      releaseExport: Effect.fn("DeviceSyncStore.releaseExport")(function*(deviceId: string, now: DateTime.Utc) {
        yield* sql`DELETE FROM recon.worker_cursor WHERE name = ${exportCursorName(deviceId)} AND value = ${DateTime.formatIso(now)}`
      })
    })
  }))
}
