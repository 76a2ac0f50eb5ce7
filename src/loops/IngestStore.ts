// Storing incoming SMS (push webhooks, chat-bot): duplicate detection and the need_check rule of
// DESIGN section 6, serialised per body so concurrent copies of one SMS arriving on several phones
// are caught, and the SmsForwarder signature remembered in the same statement (PUSH_PROTOCOL:
// a signature seen with another message is a replay). Only SQL: concurrent webhooks share its
// statements through IngestBatchers.ts (the worker's component `ingest_batchers`).
import { Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { PushFormat } from "../domain/Records.ts"
import { normalizeForDuplicates } from "../domain/SmsText.ts"
import { reportSmsChanges } from "../observability/SmsChanges.ts"
import { currentTraceparent } from "../observability/Tracing.ts"
import { DbId } from "../domain/PgValues.ts"
import { sqlFailures } from "../db/Codecs.ts"

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
  /** SmsForwarder's `sign`, with the digest of the message it came with and when it goes stale. */
  readonly signature?: { readonly sign: string; readonly digest: string; readonly expiresAt: DateTime.Utc } | undefined
}

export interface StoredSms {
  readonly smsId: number
  readonly duplicate: boolean
  readonly status: "received" | "need_check" | "duplicate"
}

/** The SMS's signature was seen before with another message: nothing was stored. */
export interface Replay {
  readonly status: "replay"
}

/** An enabled registration, as the push endpoint needs it. */
export const ActiveRegistration = Schema.Struct({
  device_id: Schema.String,
  format: PushFormat,
  secret: Schema.NullOr(Schema.String)
})
export type ActiveRegistration = typeof ActiveRegistration.Type

const Inserted = Schema.Struct({
  ord: DbId,
  id: Schema.NullOr(DbId),
  status: Schema.Literals(["received", "need_check", "duplicate", "replay"])
})

/** An SMS to store, with the trace of the request that brought it (tracing on). */
export interface Incoming {
  readonly sms: NewSms
  readonly traceParent: string | undefined
}

const toItem = ({ sms, traceParent }: Incoming, ensureDevice: boolean) => ({
  device_id: sms.deviceId,
  sender: sms.sender,
  sender_normalized: sms.senderNormalized ?? null,
  body: sms.text,
  normalized_body: normalizeForDuplicates(sms.text),
  remote_id: sms.remoteId ?? null,
  received_at: DateTime.formatIso(sms.receivedAt),
  remote_device_id: sms.remoteDeviceId ?? null,
  ensure_device: ensureDevice,
  trace_parent: traceParent ?? null,
  sign: sms.signature?.sign ?? null,
  sign_digest: sms.signature?.digest ?? null,
  sign_expires_at: sms.signature === undefined ? null : DateTime.formatIso(sms.signature.expiresAt)
})

export class IngestStore extends Context.Service<IngestStore, {
  /** One SMS without a signature, alone in its statement (its own transaction, or the caller's), reported. */
  ingest(sms: Omit<NewSms, "signature">, options?: { readonly ensureDevice?: boolean }): Effect.Effect<StoredSms, SqlError.SqlError>
  /**
   * SMS stored by one statement, in order, not yet reported. With a signature: a replay when that
   * signature came before with another message (the same message again is the resend it is, a
   * duplicate); all workers agree, the signature being recorded under its lock in the same transaction.
   */
  storeMany(incoming: ReadonlyArray<Incoming>): Effect.Effect<ReadonlyArray<StoredSms | Replay>, SqlError.SqlError>
  /** Reports a stored SMS's status (once its transaction commits). */
  report<A extends StoredSms | Replay>(stored: A): Effect.Effect<A>
  /** Forgets the signatures whose timestamps are stale by now (they are refused as stale anyway). */
  pruneSignatures(): Effect.Effect<void, SqlError.SqlError>
  /** The enabled registration of a device, if there is one. */
  activeRegistration(deviceId: string): Effect.Effect<Option.Option<ActiveRegistration>, SqlError.SqlError>
}>()("recon/loops/IngestStore") {
  static readonly layer = Layer.effect(IngestStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * SMS stored by one statement (recon.ingest_sms_batch, src/db/sql/ingest_sms_batch.sql), their
     * signatures and traces with them: committed together when it succeeds, or inside the caller's
     * transaction. No NOTIFY: the worker that stores an SMS hands it to its own parse_loop, and a
     * NOTIFY per SMS would serialise every commit on PostgreSQL's notification queue.
     */
    const inserted = SqlSchema.findAll({
      Request: Schema.String,
      Result: Inserted,
      execute: (items) =>
        sql`SELECT ord, sms_id AS id, sms_status AS status
        FROM recon.ingest_sms_batch(${items}::jsonb, ${DUPLICATE_WINDOW}::interval)`
    })
    const registration = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ActiveRegistration,
      execute: (deviceId) => sql`SELECT device_id, format, secret FROM recon.shooter_push WHERE device_id = ${deviceId} AND enabled`
    })

    const store = (incoming: ReadonlyArray<Incoming>, ensureDevice: boolean) =>
      Effect.gen(function*() {
        const stored = yield* sqlFailures(inserted(JSON.stringify(incoming.map((one) => toItem(one, ensureDevice)))))
        if (stored.length !== incoming.length) return yield* Effect.die(new Error(`ingest stored ${stored.length} of ${incoming.length} SMS`))
        return stored.map((row): StoredSms | Replay =>
          row.status === "replay" || row.id === null ? { status: "replay" } : { smsId: row.id, duplicate: row.status === "duplicate", status: row.status })
      })

    const report = <A extends StoredSms | Replay>(stored: A): Effect.Effect<A> =>
      stored.status === "replay" ? Effect.succeed(stored) : Effect.as(reportSmsChanges(sql, [{ id: stored.smsId, status: stored.status }]), stored)

    return IngestStore.of({
      ingest: Effect.fn("IngestStore.ingest")(function*(sms: Omit<NewSms, "signature">, options?: { readonly ensureDevice?: boolean }) {
        const [stored] = yield* store([{ sms, traceParent: yield* currentTraceparent }], options?.ensureDevice ?? false)
        if (stored!.status === "replay") return yield* Effect.die(new Error("an SMS without a signature was taken for a replay"))
        return yield* report(stored!)
      }),
      storeMany: Effect.fn("IngestStore.storeMany")((incoming: ReadonlyArray<Incoming>) => store(incoming, false)),
      report,
      pruneSignatures: Effect.fn("IngestStore.pruneSignatures")(function*() {
        yield* sql`DELETE FROM recon.push_signature WHERE expires_at < now()`
      }),
      activeRegistration: Effect.fn("IngestStore.activeRegistration")((deviceId: string) => sqlFailures(registration(deviceId)))
    })
  }))
}
