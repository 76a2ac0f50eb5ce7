// Storing incoming SMS (push webhooks, chat-bot): duplicate detection and the need_check rule of
// DESIGN section 6, in one transaction per SMS, serialised per body so concurrent copies of one
// SMS arriving on several phones are caught.
import { Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { DbId } from "./Codecs.ts"
import { CHANGES_CHANNEL } from "./ReconStore.ts"
import { PushFormat } from "../domain/Records.ts"
import { normalizeForDuplicates } from "../domain/SmsText.ts"

/** Copies within this window of each other, on any device, are one SMS. */
export const DUPLICATE_WINDOW = "10 minutes"

export interface NewSms {
  readonly deviceId: string
  /** As the phone reported it. */
  readonly sender: string
  /** The whitelist's form of the sender (`normalizePhone`); absent for names, never whitelisted. */
  readonly senderNormalized?: string | undefined
  /** The SMS text, forwarder wrapper removed. */
  readonly text: string
  readonly receivedAt: DateTime.Utc
  /** The forwarder's own id of the message, if it has one. */
  readonly remoteId?: string | undefined
  /** SMS Gateway's id of the phone, kept on the registration for the export API. */
  readonly remoteDeviceId?: string | undefined
}

export interface StoredSms {
  readonly smsId: number
  readonly duplicate: boolean
  readonly status: "received" | "need_check" | "duplicate"
}

/** An enabled registration, as the push endpoint needs it. */
export const ActiveRegistration = Schema.Struct({
  device_id: Schema.String,
  format: PushFormat,
  secret: Schema.NullOr(Schema.String)
})
export type ActiveRegistration = typeof ActiveRegistration.Type

const Inserted = Schema.Struct({
  id: DbId,
  status: Schema.Literals(["received", "need_check", "duplicate"])
})

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const decodeInserted = Schema.decodeUnknownEffect(Inserted)
  const decodeRegistration = Schema.decodeUnknownEffect(ActiveRegistration)

  const ingest = (sms: NewSms, options?: { readonly ensureDevice?: boolean }): Effect.Effect<StoredSms, SqlError.SqlError> =>
    sql.withTransaction(Effect.gen(function*() {
      const normalized = normalizeForDuplicates(sms.text)
      const receivedAt = DateTime.toDateUtc(sms.receivedAt)
      const remoteId = sms.remoteId ?? null
      // Separate statement, before the lookup: under READ COMMITTED the lookup's snapshot must be
      // taken after any concurrent copy holding the lock has committed. Body lock first, then the
      // remote-id lock: one order everywhere, so two ingests never wait on each other in a cycle.
      yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`sms-body:${normalized}`}, 0)),
        pg_advisory_xact_lock(hashtextextended(${remoteId === null ? "sms-remote:" : `sms-remote:${sms.deviceId}:${remoteId}`}, 0)),
        pg_notify(${CHANGES_CHANNEL}, 'shooter_sms')`
      if (options?.ensureDevice) {
        yield* sql`INSERT INTO recon.shooter_device (device_id) VALUES (${sms.deviceId}) ON CONFLICT (device_id) DO NOTHING`
      }
      if (sms.remoteDeviceId !== undefined) {
        yield* sql`UPDATE recon.shooter_push SET remote_device_id = ${sms.remoteDeviceId}
          WHERE device_id = ${sms.deviceId} AND remote_device_id IS DISTINCT FROM ${sms.remoteDeviceId}`
      }
      const rows = yield* sql`
        WITH original AS (
          SELECT min(id) AS id FROM (
            (SELECT id FROM recon.shooter_sms
              WHERE normalized_body = ${normalized} AND status <> 'duplicate'
                AND received_at BETWEEN ${receivedAt}::timestamptz - ${DUPLICATE_WINDOW}::interval
                                    AND ${receivedAt}::timestamptz + ${DUPLICATE_WINDOW}::interval
              ORDER BY id LIMIT 1)
            UNION ALL
            (SELECT id FROM recon.shooter_sms
              WHERE ${remoteId}::text IS NOT NULL AND device_id = ${sms.deviceId} AND remote_id = ${remoteId}
                AND status <> 'duplicate'
              ORDER BY id LIMIT 1)
          ) AS found
        )
        INSERT INTO recon.shooter_sms
          (device_id, sender, sender_normalized, body, normalized_body, remote_id, received_at, status, duplicate_of)
        SELECT ${sms.deviceId}, ${sms.sender}, ${sms.senderNormalized ?? null}, ${sms.text}, ${normalized}, ${remoteId}, ${receivedAt},
          CASE
            WHEN original.id IS NOT NULL THEN 'duplicate'
            WHEN COALESCE((SELECT trusted FROM recon.shooter_device WHERE device_id = ${sms.deviceId}), false)
              AND EXISTS (SELECT 1 FROM recon.shooter_phone WHERE phone = ${sms.senderNormalized ?? null}) THEN 'received'
            ELSE 'need_check'
          END,
          original.id
        FROM original
        RETURNING id, status`
      const row = yield* decodeInserted(rows[0]).pipe(Effect.orDie)
      return { smsId: row.id, duplicate: row.status === "duplicate", status: row.status }
    }))

  return {
    ingest,
    /** The enabled registration of a device, if there is one. */
    activeRegistration: (deviceId: string): Effect.Effect<Option.Option<ActiveRegistration>, SqlError.SqlError> =>
      sql`SELECT device_id, format, secret FROM recon.shooter_push WHERE device_id = ${deviceId} AND enabled`.pipe(
        Effect.flatMap((rows) =>
          rows.length === 0
            ? Effect.succeed(Option.none())
            : Effect.map(Effect.orDie(decodeRegistration(rows[0])), Option.some)
        )
      )
  }
})

export class IngestStore extends Context.Service<IngestStore, Effect.Success<typeof make>>()("recon/db/IngestStore") {
  static readonly layer = Layer.effect(IngestStore, make)
}
