// Storing incoming SMS (push webhooks, chat-bot): duplicate detection and the need_check rule of
// DESIGN section 6, serialised per body so concurrent copies of one SMS arriving on several phones
// are caught, and the SmsForwarder signature remembered in the same statement (PUSH_PROTOCOL:
// a signature seen with another message is a replay); concurrent webhooks share statements (the
// worker's component `ingest_batchers`).
import { Cause, Context, DateTime, Deferred, Effect, Exit, Layer, Option, Queue, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { isDatabaseAway } from "../db/Database.ts"
import { PushFormat } from "../domain/Records.ts"
import { normalizeForDuplicates } from "../domain/SmsText.ts"
import { Components } from "../actors/Components.ts"
import { reportSmsChanges } from "../observability/SmsChanges.ts"
import { currentTraceparent } from "../observability/Tracing.ts"
import { DbId } from "../domain/PgValues.ts"

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

/** SMS stored by one statement; copies waiting meanwhile go into the next one. */
const MAX_BATCH = 64
/** Statements in flight at once (each holds one pooled connection). */
const BATCHERS = 4

interface Pending {
  readonly sms: NewSms
  /** The trace of the request that brought it (tracing on). */
  readonly traceParent: string | undefined
  readonly done: Deferred.Deferred<StoredSms | Replay, SqlError.SqlError>
}

const toItem = (sms: NewSms, ensureDevice: boolean, traceParent: string | undefined) => ({
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

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const components = yield* Components
  const decodeInserted = Schema.decodeUnknownEffect(Schema.Array(Inserted))
  const decodeRegistration = Schema.decodeUnknownEffect(ActiveRegistration)

  /**
   * SMS stored by one statement (recon.ingest_sms_batch, migrations 0005 and 0017), their
   * signatures and traces with them: committed together when it succeeds, or inside the caller's
   * transaction. No NOTIFY: the worker that stores an SMS hands it to its own parse_loop, and a
   * NOTIFY per SMS would serialise every commit on PostgreSQL's notification queue.
   */
  const store = (items: ReadonlyArray<ReturnType<typeof toItem>>): Effect.Effect<ReadonlyArray<StoredSms | Replay>, SqlError.SqlError> =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT ord, sms_id AS id, sms_status AS status
        FROM recon.ingest_sms_batch(${JSON.stringify(items)}::jsonb, ${DUPLICATE_WINDOW}::interval)`
      const stored = yield* decodeInserted(rows).pipe(Effect.orDie)
      if (stored.length !== items.length) return yield* Effect.die(new Error(`ingest stored ${stored.length} of ${items.length} SMS`))
      return stored.map((row): StoredSms | Replay =>
        row.status === "replay" || row.id === null ? { status: "replay" } : { smsId: row.id, duplicate: row.status === "duplicate", status: row.status })
    })

  /** One SMS stored, not yet reported. */
  const storeOne = (sms: NewSms, ensureDevice: boolean, traceParent: string | undefined) =>
    Effect.map(store([toItem(sms, ensureDevice, traceParent)]), (stored) => stored[0]!)

  const reported = <A extends StoredSms | Replay>(stored: A): Effect.Effect<A> =>
    stored.status === "replay" ? Effect.succeed(stored) : Effect.as(reportSmsChanges(sql, [{ id: stored.smsId, status: stored.status }]), stored)

  /** One SMS without a signature, alone in its statement (its own transaction, or the caller's). */
  const ingest = (sms: Omit<NewSms, "signature">, options?: { readonly ensureDevice?: boolean }): Effect.Effect<StoredSms, SqlError.SqlError> =>
    currentTraceparent.pipe(
      Effect.flatMap((traceParent) => storeOne(sms, options?.ensureDevice ?? false, traceParent)),
      Effect.flatMap((stored) =>
        stored.status === "replay" ? Effect.die(new Error("an SMS without a signature was taken for a replay")) : Effect.succeed(stored)),
      Effect.tap(reported)
    )

  // The push endpoint's path: concurrent requests share statements. Nothing waits to fill a batch:
  // a batch is whatever queued while the previous statements ran.
  const queue = yield* Queue.unbounded<Pending>()
  const runBatch = (batch: ReadonlyArray<Pending>) =>
    store(batch.map((pending) => toItem(pending.sms, false, pending.traceParent))).pipe(
      Effect.flatMap((stored) => Effect.forEach(batch, (pending, i) => Deferred.succeed(pending.done, stored[i]!), { discard: true })),
      Effect.catchCause((cause) => {
        const error = Cause.findErrorOption(cause)
        // The database away: every request of the batch gets it (503). Anything else, e.g. one SMS
        // the database refuses: each is tried alone, so one bad SMS fails only its own request.
        if (batch.length === 1 || (Option.isSome(error) && isDatabaseAway(error.value))) {
          return Effect.forEach(batch, (pending) => Deferred.failCause(pending.done, cause), { discard: true })
        }
        return Effect.forEach(batch, (pending) => Effect.exit(storeOne(pending.sms, false, pending.traceParent)).pipe(
          Effect.flatMap((exit) => Deferred.done(pending.done, exit))
        ), { discard: true })
      })
    )
  const batcher = Effect.forever(Effect.flatMap(Queue.takeBetween(queue, 1, MAX_BATCH), (batch) =>
    runBatch(batch).pipe(
      // A batcher that stops mid-batch (killed, or a defect) answers its requests rather than
      // leaving them waiting; the SMS still queued wait for the restarted batchers.
      Effect.onExit((exit) =>
        Exit.isSuccess(exit)
          ? Effect.void
          : Effect.forEach(batch, (pending) => Deferred.die(pending.done, new Error("the ingest batcher stopped")), { discard: true })
      )
    )))
  // One component: a batcher that exits takes the others down with it, and all are restarted together.
  yield* components.run("ingest_batchers", Effect.all(Array.from({ length: BATCHERS }, () => batcher), { concurrency: "unbounded", discard: true }))
  const ingestShared = (sms: NewSms): Effect.Effect<StoredSms | Replay, SqlError.SqlError> =>
    Effect.gen(function*() {
      const done = yield* Deferred.make<StoredSms | Replay, SqlError.SqlError>()
      yield* Queue.offer(queue, { sms, traceParent: yield* currentTraceparent, done })
      return yield* Deferred.await(done).pipe(Effect.tap(reported))
    })

  return {
    ingest,
    /**
     * One SMS from a request: stored together with whatever other requests are storing now. With a
     * signature: a replay when that signature came before with another message (the same
     * message again is the resend it is, a duplicate); all workers agree, the signature being
     * recorded under its lock in the same transaction.
     */
    ingestShared,
    /** Forgets the signatures whose timestamps are stale by now (they are refused as stale anyway). */
    pruneSignatures: sql`DELETE FROM recon.push_signature WHERE expires_at < now()`.pipe(Effect.asVoid),
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

export class IngestStore extends Context.Service<IngestStore, Effect.Success<typeof make>>()("recon/worker/IngestStore") {
  static readonly layer = Layer.effect(IngestStore, make)
}
