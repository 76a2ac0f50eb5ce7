// Balance continuity in the database: `record` places the balance facts of parsed and ignored
// messages in their accounts' sequences (parse_loop calls it once per batch, in its transaction),
// closes the gaps they explain, opens those they reveal and writes a `balance.gap` event for each
// new one; `listAccounts` is /accounts/list. The sequence logic is domain/BalanceSequence.ts.
import { BigDecimal, Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import {
  accountOf,
  type BalanceFact,
  DUPLICATE_WINDOW_MS,
  type Entry,
  entryOf,
  type OpenGap,
  place,
  type Placement
} from "../domain/BalanceSequence.ts"
import { BalanceGap } from "../domain/Records.ts"
import { decodeRows } from "./Codecs.ts"
import { type PageOf, pageWindow, type Paging } from "./Pages.ts"
import { DbId, DbTimeOrNull } from "../domain/PgValues.ts"

/** An entry as the window query answers it (times in epoch milliseconds). */
const EntryRow = Schema.Struct({
  sms_id: Schema.Number,
  received_at: Schema.Number,
  txn_at: Schema.NullOr(Schema.Number),
  device_id: Schema.String,
  direction: Schema.Literals(["in", "out"]),
  amount: Schema.String,
  balance: Schema.NullOr(Schema.String),
  duplicate_of: Schema.NullOr(Schema.Number)
})

/** An account's window as one row: its entries, the candidates outside them and its open gaps. */
const WindowRow = Schema.Struct({
  account_id: DbId,
  at_end: Schema.Boolean,
  entries: Schema.Array(EntryRow),
  candidates: Schema.Array(EntryRow),
  gaps: Schema.Array(Schema.Struct({
    id: Schema.Number,
    after_sms_id: Schema.Number,
    before_sms_id: Schema.Number,
    unexplained: Schema.String,
    since: Schema.Number
  }))
})
const AccountRow = Schema.Struct({
  id: DbId,
  account: Schema.NullOr(Schema.String),
  bank: Schema.NullOr(Schema.String),
  device_id: Schema.NullOr(Schema.String),
  sender: Schema.NullOr(Schema.String),
  last_balance: Schema.NullOr(Schema.String),
  last_at: DbTimeOrNull,
  gaps: Schema.Array(Schema.Struct({ ...BalanceGap.fields, after_sms_id: DbId, before_sms_id: DbId }))
})
const decodeWindows = decodeRows(WindowRow)
const toEntry = (e: typeof EntryRow.Type): Entry => ({
  smsId: e.sms_id,
  receivedAt: e.received_at,
  txnAt: e.txn_at,
  deviceId: e.device_id,
  direction: e.direction,
  amount: e.amount,
  balance: e.balance,
  duplicateOf: e.duplicate_of
})
const decodeAccounts = decodeRows(AccountRow)

/** What one call did, for the caller's log line. */
export interface Recorded {
  readonly placed: number
  readonly duplicates: number
  readonly opened: number
  readonly closed: number
}

/** Prefixes an account key among the advisory locks of recon.lock_match_keys (never a payer's name key). */
const LOCK_NAMESPACE = "balance-account:"

const isDecimal = (text: string | null) => text === null || Option.isSome(BigDecimal.fromString(text))

export interface BalanceStoreShape {
  /**
   * Places balance facts (one per parsed or ignored message that carried a transaction), in the
   * caller's transaction or a transaction of its own. Accounts are locked in key order first, so
   * concurrent batches (several parse loops, several processes) never deadlock. A fact whose SMS
   * was recorded before (a re-parse) changes nothing.
   */
  readonly record: (facts: ReadonlyArray<BalanceFact>) => Effect.Effect<Recorded, SqlError.SqlError>
  /** /accounts/list: accounts with their open gaps, the latest balance first. */
  readonly listAccounts: (
    filter: Paging & { readonly has_gaps?: boolean | null | undefined }
  ) => Effect.Effect<PageOf<typeof AccountRow.Type>, SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const json = (value: unknown) => JSON.stringify(value)
  /** A timestamptz column as epoch milliseconds inside JSON. */
  const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::bigint`
  const EPOCH_MS = (column: string) => sql.literal(epochMs(column))
  /** A balance_entry row (alias `alias`) as EntryRow's JSON. */
  const ENTRY_JSON = (alias: string) => sql.literal(`jsonb_build_object('sms_id', ${alias}.sms_id, ` +
    `'received_at', ${epochMs(`${alias}.received_at`)}, 'txn_at', ${epochMs(`${alias}.txn_at`)}, ` +
    `'device_id', ${alias}.device_id, 'direction', ${alias}.direction, 'amount', ${alias}.amount::text, ` +
    `'balance', ${alias}.balance::text, 'duplicate_of', ${alias}.duplicate_of)`)

  const record = Effect.fn("BalanceStore.record")(function*(facts: ReadonlyArray<BalanceFact>) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      const usable = facts.filter((f) => isDecimal(f.amount) && isDecimal(f.balance))
      if (usable.length === 0) return { placed: 0, duplicates: 0, opened: 0, closed: 0 }
      const now = new Date(yield* Clock.currentTimeMillis)
      const identities = new Map(usable.map((f) => {
        const identity = accountOf(f)
        return [identity.key, identity]
      }))
      const keys = [...identities.keys()].sort()
      // Migration 0009's ordered advisory locks, in a namespace of our own.
      yield* sql`SELECT recon.lock_match_keys(ARRAY(SELECT ${LOCK_NAMESPACE} || k FROM jsonb_array_elements_text(${json(keys)}::jsonb) AS k))`
      // The accounts seen before and the new ones (no other writer adds these keys: we hold their
      // locks), and which of the SMS were recorded before (a re-parse).
      const accounts = yield* sql<{ id: bigint; account_key: string; recorded: ReadonlyArray<bigint | number> | null }>`
        WITH x AS (SELECT * FROM jsonb_to_recordset(${json(keys.map((k) => {
          const i = identities.get(k)!
          return { key: k, bank: i.bank, account: i.account, device_id: i.deviceId, sender: i.sender }
        }))}::jsonb) AS x(key text, bank text, account text, device_id text, sender text)),
        added AS (INSERT INTO recon.balance_account (account_key, bank, account, device_id, sender)
          SELECT x.key, x.bank, x.account, x.device_id, x.sender FROM x ON CONFLICT (account_key) DO NOTHING
          RETURNING id, account_key)
        SELECT found.id, found.account_key, (SELECT array_agg(e.sms_id) FROM recon.balance_entry AS e
            WHERE e.sms_id = ANY (ARRAY(SELECT jsonb_array_elements_text(${json(usable.map((f) => f.smsId))}::jsonb)::bigint))) AS recorded
        FROM (SELECT id, account_key FROM added
          UNION ALL SELECT a.id, a.account_key FROM recon.balance_account AS a JOIN x ON x.key = a.account_key) AS found`
      const accountId = new Map(accounts.map((a) => [a.account_key, Number(a.id)]))
      const recordedBefore = new Set((accounts[0]?.recorded ?? []).map(Number))

      const incoming = new Map<number, Array<Entry>>()
      for (const fact of usable) {
        if (recordedBefore.has(fact.smsId)) continue
        const id = accountId.get(accountOf(fact).key)!
        incoming.set(id, [...(incoming.get(id) ?? []), entryOf(fact)])
      }
      if (incoming.size === 0) return { placed: 0, duplicates: 0, opened: 0, closed: 0 }

      // Each account's window: every entry from the last placed one before the new facts to the
      // first placed one after them, with the open gaps between them; and, as candidates only, the
      // entries received within the duplicate window that repeat one of them (direction, amount,
      // balance): an original the run does not hold.
      const spans = [...incoming].map(([id, entries]) => ({
        account_id: id,
        lo: new Date(Math.min(...entries.map((e) => e.receivedAt))).toISOString(),
        hi: new Date(Math.max(...entries.map((e) => e.receivedAt))).toISOString(),
        // What a copy repeats: direction, amount and balance (DUPLICATE_WINDOW_MS is the time).
        keys: entries.map((e) => ({ direction: e.direction, amount: e.amount, balance: e.balance }))
      }))
      const windows = yield* sql`
        WITH b AS (
          SELECT x.account_id, x.lo, x.hi, x.keys, p.received_at AS from_at, p.sms_id AS from_id, n.received_at AS to_at, n.sms_id AS to_id
          FROM jsonb_to_recordset(${json(spans)}::jsonb) AS x(account_id bigint, lo timestamptz, hi timestamptz, keys jsonb)
          LEFT JOIN LATERAL (SELECT received_at, sms_id FROM recon.balance_entry
            WHERE account_id = x.account_id AND balance IS NOT NULL AND duplicate_of IS NULL AND received_at < x.lo
            ORDER BY received_at DESC, sms_id DESC LIMIT 1) AS p ON true
          LEFT JOIN LATERAL (SELECT received_at, sms_id FROM recon.balance_entry
            WHERE account_id = x.account_id AND balance IS NOT NULL AND duplicate_of IS NULL AND received_at > x.hi
            ORDER BY received_at, sms_id LIMIT 1) AS n ON true)
        , w AS (
          SELECT b.account_id AS window_of, e.* FROM b JOIN recon.balance_entry AS e
            ON (e.account_id, e.received_at, e.sms_id) >= (b.account_id, COALESCE(b.from_at, b.lo), COALESCE(b.from_id, 0))
              AND (e.account_id, e.received_at, e.sms_id) <= (b.account_id, COALESCE(b.to_at, b.hi), COALESCE(b.to_id, ${Number.MAX_SAFE_INTEGER})))
        SELECT b.account_id, b.to_at IS NULL AS at_end,
          COALESCE((SELECT jsonb_agg(${ENTRY_JSON("e")})
            FROM w AS e WHERE e.window_of = b.account_id), '[]'::jsonb) AS entries,
          -- Only the open gaps inside the window (both ends in it): an account's old gaps, however
          -- many, cost nothing here.
          COALESCE((SELECT jsonb_agg(jsonb_build_object('id', g.id, 'after_sms_id', g.after_sms_id, 'before_sms_id', g.before_sms_id,
              'unexplained', g.unexplained::text, 'since', ${EPOCH_MS("g.since")}))
            FROM recon.balance_gap AS g
            WHERE g.account_id = b.account_id AND g.closed_at IS NULL
              AND g.after_sms_id IN (SELECT e.sms_id FROM w AS e WHERE e.window_of = b.account_id)
              AND g.before_sms_id IN (SELECT e.sms_id FROM w AS e WHERE e.window_of = b.account_id)), '[]'::jsonb) AS gaps,
          -- Looked up by balance (migration 0019's index), key by key: in a burst an account holds
          -- hundreds of entries of one amount within the window, and a scan of them per batch cost
          -- more than the rest of the money path.
          COALESCE((SELECT jsonb_agg(${ENTRY_JSON("c")} ORDER BY c.received_at, c.sms_id)
            FROM recon.balance_entry AS c
            WHERE c.sms_id IN (SELECT r.sms_id
              FROM jsonb_to_recordset(b.keys) AS k(direction text, amount numeric, balance numeric)
              CROSS JOIN LATERAL (
                SELECT r.sms_id, r.direction, r.amount FROM recon.balance_entry AS r
                WHERE r.account_id = b.account_id AND r.duplicate_of IS NULL AND r.balance = k.balance
                  AND r.received_at BETWEEN b.lo - ${`${DUPLICATE_WINDOW_MS} milliseconds`}::interval AND b.hi + ${`${DUPLICATE_WINDOW_MS} milliseconds`}::interval
                UNION ALL
                SELECT r.sms_id, r.direction, r.amount FROM recon.balance_entry AS r
                WHERE k.balance IS NULL AND r.account_id = b.account_id AND r.duplicate_of IS NULL AND r.balance IS NULL
                  AND r.received_at BETWEEN b.lo - ${`${DUPLICATE_WINDOW_MS} milliseconds`}::interval AND b.hi + ${`${DUPLICATE_WINDOW_MS} milliseconds`}::interval
              ) AS r
              WHERE r.direction = k.direction AND r.amount = k.amount)), '[]'::jsonb) AS candidates
        FROM b`.pipe(Effect.flatMap(decodeWindows))

      const placements = windows.map((w) => {
        const openGaps = w.gaps.map((g): OpenGap => ({ id: g.id, afterSmsId: g.after_sms_id, beforeSmsId: g.before_sms_id, unexplained: g.unexplained, since: g.since }))
        const window = { entries: w.entries.map(toEntry), openGaps, atEnd: w.at_end, candidates: w.candidates.map(toEntry) }
        return { accountId: w.account_id, placement: place(window, incoming.get(w.account_id)!, now.getTime()) }
      })
      yield* write(placements, now)
      const all = placements.map((p) => p.placement)
      const inserted = all.flatMap((p) => p.inserted)
      return {
        placed: inserted.filter((e) => e.duplicateOf === null).length,
        duplicates: inserted.filter((e) => e.duplicateOf !== null).length,
        opened: all.reduce((n, p) => n + p.opened.length, 0),
        closed: all.reduce((n, p) => n + p.closed.length, 0)
      }
    }))
  })

  /** The entries with each account's last balance, then the gaps closed, changed and opened (with their events). */
  const write = (placements: ReadonlyArray<{ readonly accountId: number; readonly placement: Placement }>, now: Date) =>
    Effect.gen(function*() {
      const entries = placements.flatMap(({ accountId, placement }) => placement.inserted.map((e) => ({
        sms_id: e.smsId,
        account_id: accountId,
        received_at: new Date(e.receivedAt).toISOString(),
        txn_at: e.txnAt === null ? null : new Date(e.txnAt).toISOString(),
        device_id: e.deviceId,
        direction: e.direction,
        amount: e.amount,
        balance: e.balance,
        duplicate_of: e.duplicateOf
      })))
      const last = placements.flatMap(({ accountId, placement }) => placement.last === undefined ? [] : [{
        id: accountId,
        balance: placement.last.balance,
        at: new Date(placement.last.receivedAt).toISOString(),
        sms_id: placement.last.smsId
      }])
      // The entries and each account's last balance in one statement. An original inserted by the
      // same statement satisfies duplicate_of's key: it is checked at the statement's end.
      yield* sql`
        WITH entry AS (INSERT INTO recon.balance_entry (sms_id, account_id, received_at, txn_at, device_id, direction, amount, balance, duplicate_of)
          SELECT x.sms_id, x.account_id, x.received_at, x.txn_at, x.device_id, x.direction, x.amount::numeric, x.balance::numeric, x.duplicate_of
          FROM jsonb_to_recordset(${json(entries)}::jsonb) AS x(sms_id bigint, account_id bigint, received_at timestamptz, txn_at timestamptz,
            device_id text, direction text, amount text, balance text, duplicate_of bigint)),
        latest AS (UPDATE recon.balance_account AS a SET last_balance = x.balance::numeric, last_at = x.at, last_sms_id = x.sms_id
          FROM jsonb_to_recordset(${json(last)}::jsonb) AS x(id bigint, balance text, at timestamptz, sms_id bigint) WHERE a.id = x.id)
        SELECT 1`
      const closed = placements.flatMap((p) => p.placement.closed)
      if (closed.length > 0) {
        yield* sql`UPDATE recon.balance_gap AS g SET closed_at = ${now}, closed_by_sms_id = x.by
          FROM jsonb_to_recordset(${json(closed.map((c) => ({ id: c.id, by: c.bySmsId })))}::jsonb) AS x(id bigint, by bigint)
          WHERE g.id = x.id`
      }
      const updated = placements.flatMap((p) => p.placement.updated)
      if (updated.length > 0) {
        yield* sql`UPDATE recon.balance_gap AS g SET unexplained = x.unexplained::numeric
          FROM jsonb_to_recordset(${json(updated)}::jsonb) AS x(id bigint, unexplained text) WHERE g.id = x.id`
      }
      const opened = placements.flatMap(({ accountId, placement }) => placement.opened.map((g) => ({
        account_id: accountId,
        after_sms_id: g.afterSmsId,
        before_sms_id: g.beforeSmsId,
        unexplained: g.unexplained,
        since: new Date(g.since).toISOString(),
        announce: g.announce
      })))
      if (opened.length > 0) {
        yield* sql`
          WITH x AS (SELECT * FROM jsonb_to_recordset(${json(opened)}::jsonb)
              AS x(account_id bigint, after_sms_id bigint, before_sms_id bigint, unexplained text, since timestamptz, announce boolean)),
            gap AS (INSERT INTO recon.balance_gap (account_id, after_sms_id, before_sms_id, unexplained, since)
              SELECT account_id, after_sms_id, before_sms_id, unexplained::numeric, since FROM x
              RETURNING account_id, after_sms_id, before_sms_id, unexplained, since)
          SELECT recon.emit_event('balance.gap', jsonb_build_object('account', a.account, 'bank', a.bank, 'device_id', a.device_id,
              'sender', a.sender, 'after_sms_id', gap.after_sms_id, 'before_sms_id', gap.before_sms_id,
              'unexplained', recon.amount_text(gap.unexplained), 'since', recon.iso_time(gap.since)))
          FROM gap JOIN x USING (account_id, after_sms_id) JOIN recon.balance_account AS a ON a.id = gap.account_id
          WHERE x.announce`
      }
    })

  const listAccounts = Effect.fn("BalanceStore.listAccounts")(function*(filter: Paging & { readonly has_gaps?: boolean | null | undefined }) {
    const { page, size, offset } = pageWindow(filter)
    const where = filter.has_gaps == null ? sql`true` : filter.has_gaps
      ? sql`EXISTS (SELECT 1 FROM recon.balance_gap AS g WHERE g.account_id = a.id AND g.closed_at IS NULL)`
      : sql`NOT EXISTS (SELECT 1 FROM recon.balance_gap AS g WHERE g.account_id = a.id AND g.closed_at IS NULL)`
    const [count] = yield* sql<{ total: bigint }>`SELECT count(*) AS total FROM recon.balance_account AS a WHERE ${where}`
    const items = yield* decodeAccounts(yield* sql`
      SELECT a.id, a.account, a.bank, a.device_id, a.sender, recon.amount_text(a.last_balance) AS last_balance, a.last_at,
        COALESCE((SELECT jsonb_agg(jsonb_build_object('after_sms_id', g.after_sms_id, 'before_sms_id', g.before_sms_id,
            'unexplained', recon.amount_text(g.unexplained), 'since', recon.iso_time(g.since)) ORDER BY g.since, g.id)
          FROM recon.balance_gap AS g WHERE g.account_id = a.id AND g.closed_at IS NULL), '[]'::jsonb) AS gaps
      FROM recon.balance_account AS a WHERE ${where}
      ORDER BY a.last_at DESC NULLS LAST, a.id DESC LIMIT ${size} OFFSET ${offset}`)
    return { items, total: Number(count?.total ?? 0), page, page_size: size }
  })

  return { record, listAccounts } satisfies BalanceStoreShape
})

export class BalanceStore extends Context.Service<BalanceStore, BalanceStoreShape>()("recon/db/BalanceStore") {
  /** For a loop's `start` (parse_loop): the store on the loop's own SqlClient. */
  static readonly make = make
  static readonly layer = Layer.effect(BalanceStore, make)
}
