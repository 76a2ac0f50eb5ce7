// missing_sms_sync_loop: asks every SMS Gateway phone to re-send what it received since the last
// SMS we stored (the copies come back through the webhook, duplicates are dropped there), and
// marks registrations silent past their silence_alert_s.
import { DateTime, Duration, Effect, Option } from "effect"
import { SmsGatewayClient } from "../clients/SmsGatewayClient.ts"
import { DeviceSyncStore, type ExportCandidate } from "./DeviceSyncStore.ts"
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

/** The candidates the gateway can be asked for (it has the phone's id), each claimed for this process. */
const claimDue = (store: DeviceSyncStore["Service"], candidates: ReadonlyArray<ExportCandidate>, now: DateTime.Utc) =>
  Effect.gen(function*() {
    const due: Array<ExportCandidate & { readonly remote_device_id: string }> = []
    for (const candidate of candidates) {
      const remoteDeviceId = candidate.remote_device_id
      if (remoteDeviceId === null) {
        // The gateway's id of the phone arrives with its first webhook; until then there is nothing to ask.
        yield* Effect.logDebug(`registration ${candidate.device_id}: no SMS Gateway device id yet, not asked`)
        continue
      }
      if (yield* store.claimExport(candidate.device_id, now, EXPORT_PERIOD)) due.push({ ...candidate, remote_device_id: remoteDeviceId })
    }
    return due
  })

/** Asks one phone to re-send its window; a failed ask is logged and its claim given back (false). */
const ask = (
  store: DeviceSyncStore["Service"],
  gateway: SmsGatewayClient["Service"],
  candidate: ExportCandidate & { readonly remote_device_id: string },
  now: DateTime.Utc
) => {
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
        Effect.andThen(store.releaseExport(candidate.device_id, now)),
        Effect.as(false)
      )),
    Effect.annotateLogs({ device_id: candidate.device_id })
  )
}

export const MissingSmsSyncLoop: Loop = {
  name: "missing_sms_sync_loop",
  ttl: "90 seconds",
  every: "30 seconds",
  kickedBy: ["shooter_push"],
  start: Effect.gen(function*() {
    const store = yield* DeviceSyncStore
    const gateway = yield* SmsGatewayClient.make

    return Effect.gen(function*() {
      const now = yield* DateTime.now

      for (const row of yield* store.markSilent(DateTime.toDateUtc(now))) {
        yield* Effect.logWarning(`registration ${row.device_id} is silent: no SMS for more than ${row.silence_alert_s} s`).pipe(
          Effect.annotateLogs({ device_id: row.device_id })
        )
      }

      const due = yield* claimDue(store, yield* store.exportCandidates(), now)
      if (due.length === 0) return

      const outcomes = yield* Effect.forEach(due, (candidate) => ask(store, gateway, candidate, now), { concurrency: CONCURRENCY })
      const failed = outcomes.filter((ok) => !ok).length
      yield* Effect.logDebug(`asked ${due.length - failed} SMS Gateway phone(s) to re-send their inbox; ${failed} failed`)
    })
  })
}
