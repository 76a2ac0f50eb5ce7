// Webhooks to the merchant's platform: the routes' queries (add, list, delete, the attempts) and
// webhook_delivery_loop's (claim due deliveries with SKIP LOCKED and a lease, record an attempt,
// give leases back). The events and their deliveries are written by the database itself
// (recon.emit_event, migration 0014), in the transaction of the change they report.
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { WebhookAttemptRow, WebhookRow } from "../domain/Records.ts"
import type { AttemptStatus } from "../domain/Webhooks.ts"
import { decodeRows } from "./Codecs.ts"
import { type PageOf, pageWindow, type Paging } from "./Pages.ts"
import { DbId } from "../domain/PgValues.ts"
import { sourceText } from "./SourceText.ts"

/** No webhook has this id. */
export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>()("WebhookNotFound", { id: Schema.Int }) {}

export interface NewWebhook {
  readonly url: string
  readonly secret: string
  readonly events: ReadonlyArray<string>
}

export interface AttemptFilter extends Paging {
  readonly event_id?: number | null | undefined
  readonly webhook_id?: number | null | undefined
}

const ADD = sourceText(import.meta.url, "./WebhookStore.add.sql")
const CLAIM = sourceText(import.meta.url, "./WebhookStore.claim.sql")
const RECORD = sourceText(import.meta.url, "./WebhookStore.record.sql")

const decodeWebhooks = decodeRows(WebhookRow)
const decodeAttempts = decodeRows(WebhookAttemptRow)

const webhookColumns = `w.id, w.url, w.events, w.created_at,
  (SELECT count(*) FROM recon.webhook_delivery AS d WHERE d.webhook_id = w.id AND d.status = 'pending') AS pending,
  (SELECT count(*) FROM recon.webhook_delivery AS d WHERE d.webhook_id = w.id AND d.status = 'failed') AS failed`

type Webhook = typeof WebhookRow.Type
type WebhookAttempt = typeof WebhookAttemptRow.Type

export interface WebhookStoreShape {
  readonly add: (hook: NewWebhook) => Effect.Effect<Webhook, SqlError.SqlError>
  /** The webhooks newest first, each with its pending and failed deliveries counted. */
  readonly list: (paging: Paging) => Effect.Effect<PageOf<Webhook>, SqlError.SqlError>
  /** Its deliveries and their attempts go with it; the events stay. */
  readonly remove: (id: number) => Effect.Effect<{ readonly id: number }, WebhookNotFound | SqlError.SqlError>
  /** Every attempt, newest first. */
  readonly attempts: (filter: AttemptFilter) => Effect.Effect<PageOf<WebhookAttempt>, SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const add = Effect.fn("WebhookStore.add")(function*(hook: NewWebhook) {
    const rows = yield* sql.unsafe(ADD, [hook.url, hook.secret, JSON.stringify(hook.events)])
    const [row] = yield* decodeWebhooks(rows)
    return row!
  })

  const list = Effect.fn("WebhookStore.list")(function*(paging: Paging) {
    const { page, size, offset } = pageWindow(paging)
    const [count] = yield* sql<{ total: bigint }>`SELECT count(*) AS total FROM recon.webhook`
    const items = yield* decodeWebhooks(yield* sql`SELECT ${sql.literal(webhookColumns)} FROM recon.webhook AS w
      ORDER BY w.created_at DESC, w.id DESC LIMIT ${size} OFFSET ${offset}`)
    return { items, total: Number(count?.total ?? 0), page, page_size: size }
  })

  const remove = Effect.fn("WebhookStore.remove")(function*(id: number) {
    const rows = yield* sql`DELETE FROM recon.webhook WHERE id = ${id} RETURNING id`
    if (rows.length === 0) return yield* new WebhookNotFound({ id })
    return { id }
  })

  const attempts = Effect.fn("WebhookStore.attempts")(function*(filter: AttemptFilter) {
    const { page, size, offset } = pageWindow(filter)
    const where = sql.and([
      ...(filter.event_id != null ? [sql`a.event_id = ${filter.event_id}`] : []),
      ...(filter.webhook_id != null ? [sql`a.webhook_id = ${filter.webhook_id}`] : [])
    ])
    const [count] = yield* sql<{ total: bigint }>`SELECT count(*) AS total FROM recon.webhook_attempt AS a WHERE ${where}`
    const items = yield* decodeAttempts(yield* sql`
      SELECT a.event_id, a.webhook_id, e.type, a.attempt, a.status, a.http_status, a.error, a.at
      FROM recon.webhook_attempt AS a JOIN recon.webhook_event AS e ON e.id = a.event_id
      WHERE ${where} ORDER BY a.at DESC, a.id DESC LIMIT ${size} OFFSET ${offset}`)
    return { items, total: Number(count?.total ?? 0), page, page_size: size }
  })

  return { add, list, remove, attempts } satisfies WebhookStoreShape
})

export class WebhookStore extends Context.Service<WebhookStore, WebhookStoreShape>()("recon/db/WebhookStore") {
  static readonly layer = Layer.effect(WebhookStore, make)
}

// webhook_delivery_loop's side.

const Claimed = Schema.Struct({
  id: DbId,
  event_id: DbId,
  webhook_id: DbId,
  attempts: Schema.Int,
  first_attempt_at: Schema.Date,
  url: Schema.String,
  secret: Schema.String,
  type: Schema.String,
  data: Schema.Unknown,
  created_at: Schema.String
})
export type Claimed = typeof Claimed.Type
const decodeClaimed = decodeRows(Claimed)

export interface Claim {
  readonly now: Date
  /** The claimed deliveries are this process's until then (past the request's timeout). */
  readonly leaseUntil: Date
  readonly limit: number
  /** At most this many in flight per webhook, counting `busy` (this process's in flight, by webhook id). */
  readonly perWebhook: number
  readonly busy: ReadonlyMap<number, number>
}

export interface Attempt {
  readonly deliveryId: number
  /** 1 for the first attempt. */
  readonly attempt: number
  readonly status: AttemptStatus
  readonly httpStatus: number | null
  readonly error: string | null
  readonly at: Date
  readonly nextAt: Date | null
}

/** webhook_delivery_loop's queries, made on the loop's own SqlClient. */
export interface Deliveries {
  /**
   * Due deliveries (never tried, or their backoff or a dead process's lease over), leased to this
   * process, at most `perWebhook` in flight for any webhook, so one slow receiver never takes every
   * slot; the oldest first within a webhook.
   */
  readonly claim: (c: Claim) => Effect.Effect<ReadonlyArray<Claimed>, SqlError.SqlError>
  /**
   * The attempt and the delivery's new state, in one statement; nothing when the delivery moved on
   * meanwhile (another process recorded this attempt after our lease ran out) or was deleted.
   * Answers whether it was recorded.
   */
  readonly record: (a: Attempt) => Effect.Effect<boolean, SqlError.SqlError>
  /** Leases given back (the loop stopped mid-request): due again at once, in this process or another. */
  readonly release: (ids: ReadonlyArray<number>) => Effect.Effect<void, SqlError.SqlError>
}

export const deliveries: Effect.Effect<Deliveries, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const claim = Effect.fn("WebhookDeliveries.claim")(function*(c: Claim) {
    if (c.limit <= 0) return []
    return yield* decodeClaimed(yield* sql.unsafe(CLAIM, [c.now, c.perWebhook, JSON.stringify(Object.fromEntries(c.busy)), c.limit, c.leaseUntil]))
  })

  const record = Effect.fn("WebhookDeliveries.record")(function*(a: Attempt) {
    const rows = yield* sql.unsafe(RECORD, [a.status === "retrying" ? "pending" : a.status, a.attempt, a.nextAt, a.deliveryId, a.attempt - 1,
      a.status, a.httpStatus, a.error, a.at])
    return rows.length > 0
  })

  const release = Effect.fn("WebhookDeliveries.release")(function*(ids: ReadonlyArray<number>) {
    if (ids.length === 0) return
    yield* sql`
      UPDATE recon.webhook_delivery SET next_at = NULL WHERE id IN ${sql.in(ids)} AND status = 'pending'`
  })

  return { claim, record, release } satisfies Deliveries
})
