// missing_sms_sync_loop: asks every SMS Gateway phone to re-send what it received since the last
// SMS we stored (the copies come back through the webhook, duplicates are dropped there), and
// marks registrations silent past their silence_alert_s.
import { DateTime, Duration, Effect, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { SmsGatewayClient } from "../../clients/SmsGatewayClient.ts"
import type { Loop } from "./Loop.ts"

/** Re-sent window reaches this far before the last stored SMS: covers phone clock skew and late webhooks. */
export const OVERLAP = Duration.minutes(5)
/** Never ask for more than this much history (a new phone, or one silent for days). */
export const MAX_LOOKBACK = Duration.hours(24)
/**
 * A device is asked at most once per this period across all worker processes: each export is
 * claimed in recon.worker_cursor first, so two workers (or a kick right after a pass) never ask
 * the same phone twice in one pass period. Slightly under the loop period so each pass claims.
 */
export const EXPORT_PERIOD = Duration.seconds(85)
/** Gateways asked at once; one that hangs costs its own time-out, not the others'. */
const CONCURRENCY = 8

export const exportCursorName = (deviceId: string): string => `missing_sms_sync_loop.export:${deviceId}`

/**
 * The window to ask for: from the last stored SMS (the registration's creation when there is
 * none yet) minus {@link OVERLAP}, never later than now minus the overlap (a phone clock ahead of
 * ours) nor earlier than {@link MAX_LOOKBACK}, until now. Never earlier than the previous ask's
 * end minus the overlap either: a quiet phone would otherwise re-send its last SMS at every ask,
 * each copy stored as one more duplicate.
 */
export const exportWindow = (
  now: DateTime.Utc,
  lastReceivedAt: Option.Option<DateTime.Utc>,
  createdAt: DateTime.Utc,
  lastAskedAt: Option.Option<DateTime.Utc> = Option.none()
): { readonly since: DateTime.Utc; readonly until: DateTime.Utc } => {
  const base = DateTime.min(Option.getOrElse(lastReceivedAt, () => createdAt), now)
  const floor = Option.match(lastAskedAt, {
    onNone: () => DateTime.subtractDuration(now, MAX_LOOKBACK),
    onSome: (at) => DateTime.max(DateTime.subtractDuration(at, OVERLAP), DateTime.subtractDuration(now, MAX_LOOKBACK))
  })
  const since = DateTime.max(DateTime.subtractDuration(base, OVERLAP), floor)
  return { since: DateTime.min(since, now), until: now }
}

const Candidate = Schema.Struct({
  device_id: Schema.String,
  api_url: Schema.String,
  remote_device_id: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  last_received_at: Schema.NullOr(Schema.Date),
  last_asked_at: Schema.NullOr(Schema.String)
})
const decodeCandidates = Schema.decodeUnknownEffect(Schema.Array(Candidate))

const Silenced = Schema.Struct({ device_id: Schema.String, silence_alert_s: Schema.Int })
const decodeSilenced = Schema.decodeUnknownEffect(Schema.Array(Silenced))

export const MissingSmsSyncLoop: Loop = {
  name: "missing_sms_sync_loop",
  ttl: "90 seconds",
  every: "30 seconds",
  kickedBy: ["shooter_push"],
  start: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const gateway = yield* SmsGatewayClient.make

    // 'listening'/'pending' → 'silent' once the newest SMS (else the registration) is older than
    // silence_alert_s. One conditional statement: each change happens, and is logged, in one process.
    const markSilent = (now: Date) =>
      sql`UPDATE recon.shooter_push AS p SET listener_status = 'silent'
        WHERE p.enabled AND p.silence_alert_s IS NOT NULL AND p.listener_status IN ('listening', 'pending')
          AND COALESCE((SELECT max(s.received_at) FROM recon.shooter_sms AS s WHERE s.device_id = p.device_id), p.created_at)
            < ${now}::timestamptz - make_interval(secs => p.silence_alert_s)
        RETURNING p.device_id, p.silence_alert_s`.pipe(Effect.flatMap(decodeSilenced))

    /** True when this process may ask the device now (nobody did within EXPORT_PERIOD). */
    const claim = (deviceId: string, now: DateTime.Utc) =>
      sql`INSERT INTO recon.worker_cursor (name, value, updated_at)
        VALUES (${exportCursorName(deviceId)}, ${DateTime.formatIso(now)}, ${DateTime.toDateUtc(now)})
        ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
        WHERE recon.worker_cursor.updated_at <= ${DateTime.toDateUtc(DateTime.subtractDuration(now, EXPORT_PERIOD))}
        RETURNING name`.pipe(Effect.map((rows) => rows.length > 0))

    /** A failed ask gives its claim back, so the next pass tries again instead of waiting a period. */
    const release = (deviceId: string, now: DateTime.Utc) =>
      sql`DELETE FROM recon.worker_cursor WHERE name = ${exportCursorName(deviceId)} AND value = ${DateTime.formatIso(now)}`

    return Effect.gen(function*() {
      const now = yield* DateTime.now

      for (const row of yield* markSilent(DateTime.toDateUtc(now))) {
        yield* Effect.logWarning(`registration ${row.device_id} is silent: no SMS for more than ${row.silence_alert_s} s`).pipe(
          Effect.annotateLogs({ device_id: row.device_id })
        )
      }

      const candidates = yield* sql`
        SELECT p.device_id, p.api_url, p.remote_device_id, p.created_at,
          (SELECT max(s.received_at) FROM recon.shooter_sms AS s WHERE s.device_id = p.device_id) AS last_received_at,
          (SELECT c.value FROM recon.worker_cursor AS c WHERE c.name = 'missing_sms_sync_loop.export:' || p.device_id) AS last_asked_at
        FROM recon.shooter_push AS p
        WHERE p.enabled AND p.api_url IS NOT NULL AND btrim(p.api_url) <> ''
        ORDER BY p.device_id`.pipe(Effect.flatMap(decodeCandidates))

      const due: Array<typeof Candidate.Type & { readonly remote_device_id: string }> = []
      for (const candidate of candidates) {
        const remoteDeviceId = candidate.remote_device_id
        if (remoteDeviceId === null) {
          // The gateway's id of the phone arrives with its first webhook; until then there is nothing to ask.
          yield* Effect.logDebug(`registration ${candidate.device_id}: no SMS Gateway device id yet, not asked`)
          continue
        }
        if (yield* claim(candidate.device_id, now)) due.push({ ...candidate, remote_device_id: remoteDeviceId })
      }
      if (due.length === 0) return

      const outcomes = yield* Effect.forEach(due, (candidate) => {
        const window = exportWindow(
          now,
          Option.map(Option.fromNullishOr(candidate.last_received_at), DateTime.fromDateUnsafe),
          DateTime.fromDateUnsafe(candidate.created_at),
          Option.flatMap(Option.fromNullishOr(candidate.last_asked_at), (iso) => DateTime.make(iso))
        )
        return gateway.exportInbox(candidate.api_url, { deviceId: candidate.remote_device_id, ...window }).pipe(
          Effect.as(true),
          Effect.catchTag("SmsGatewayExportFailed", (error) =>
            Effect.logWarning(`export request for ${candidate.device_id} failed: ${error.reason}`).pipe(
              Effect.andThen(release(candidate.device_id, now)),
              Effect.as(false)
            )),
          Effect.annotateLogs({ device_id: candidate.device_id })
        )
      }, { concurrency: CONCURRENCY })

      const failed = outcomes.filter((ok) => !ok).length
      yield* Effect.logDebug(`asked ${due.length - failed} SMS Gateway phone(s) to re-send their inbox; ${failed} failed`)
    })
  })
}
