// Balance continuity in the database: `record` places the balance facts of parsed and ignored
// messages in their accounts' chains (parse_loop's placer calls it, off the money path), by the
// balances themselves (domain/BalanceChain.ts): per fact a bounded read of the account's end, of
// the open gaps its balance or amount fits and of the chain's last TAIL messages, whatever the
// account's history. `announce` sends `balance.gap` for the gaps open past the grace period;
// operators explain gaps and merge device-accounts (audited in recon.balance_action, undoable);
// `listAccounts` is /accounts/list.
import { BigDecimal, Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { accountOf, type BalanceFact, DUPLICATE_WINDOW_MS, type Entry, entryOf } from "../domain/BalanceSequence.ts"
import { type ChainChanges, type ChainView, emptyView, type GapView, type Placed, placeInChain, TAIL } from "../domain/BalanceChain.ts"
import { DbId, DbTimeOrNull } from "../domain/PgValues.ts"
import { decodeRows } from "./Codecs.ts"
import { type PageOf, pageWindow, type Paging } from "./Pages.ts"
import { sourceText } from "./SourceText.ts"

/** An entry as the queries answer it (times in epoch milliseconds). */
const EntryRow = Schema.Struct({
  sms_id: Schema.Number,
  received_at: Schema.Number,
  txn_at: Schema.NullOr(Schema.Number),
  device_id: Schema.String,
  direction: Schema.Literals(["in", "out"]),
  amount: Schema.String,
  balance: Schema.NullOr(Schema.String),
  duplicate_of: Schema.NullOr(Schema.Number),
  pos: Schema.NullOr(Schema.String)
})
type EntryRow = typeof EntryRow.Type

/** What placing needs of one account (ChainView as rows). */
const ViewRow = Schema.Struct({
  account_id: DbId,
  last_balance: Schema.NullOr(EntryRow),
  end_pos: Schema.NullOr(Schema.String),
  tail_between: Schema.String,
  tail: Schema.Array(EntryRow),
  gaps: Schema.Array(Schema.Struct({
    id: Schema.Number,
    after: EntryRow,
    before: EntryRow,
    between: Schema.String,
    after_next: Schema.String,
    before_prev: Schema.String,
    since: Schema.Number
  })),
  candidates: Schema.Array(EntryRow)
})

const ExplainedGap = Schema.Struct({ reason: Schema.String, amount: Schema.NullOr(Schema.String), operator: Schema.String, at: Schema.String })
const ListedGap = Schema.Struct({
  id: DbId,
  after_sms_id: DbId,
  before_sms_id: DbId,
  unexplained: Schema.String,
  since: Schema.String,
  explained: Schema.NullOr(ExplainedGap)
})
const AccountRow = Schema.Struct({
  id: DbId,
  account: Schema.NullOr(Schema.String),
  bank: Schema.NullOr(Schema.String),
  device_id: Schema.NullOr(Schema.String),
  sender: Schema.NullOr(Schema.String),
  last_balance: Schema.NullOr(Schema.String),
  last_at: DbTimeOrNull,
  merged_into: Schema.NullOr(DbId),
  gaps: Schema.Array(ListedGap)
})
const ActionRow = Schema.Struct({
  id: DbId,
  action: Schema.Literals(["explain", "unexplain", "merge", "unmerge"]),
  operator: Schema.String,
  account_id: DbId,
  gap_id: Schema.NullOr(DbId),
  other_account_id: Schema.NullOr(DbId),
  reason: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String),
  at: DbTimeOrNull
})
const decodeViews = decodeRows(ViewRow)
const decodeAccounts = decodeRows(AccountRow)
const decodeEntries = decodeRows(EntryRow)

const toEntry = (e: EntryRow): Entry => ({
  smsId: e.sms_id,
  receivedAt: e.received_at,
  txnAt: e.txn_at,
  deviceId: e.device_id,
  direction: e.direction,
  amount: e.amount,
  balance: e.balance,
  duplicateOf: e.duplicate_of
})
const toPlaced = (e: EntryRow): Placed => ({ ...toEntry(e), pos: e.pos! })

/** What one call did, for the caller's log line. */
export interface Recorded {
  readonly placed: number
  readonly duplicates: number
  readonly opened: number
  readonly closed: number
}

/** An operator's action on balances that names a gap or an account that is not there (404). */
export class BalanceNotFound extends Schema.TaggedError<BalanceNotFound>()("BalanceNotFound", { what: Schema.String }) {}
/** An operator's action that does not apply to the state found (409): the detail says why. */
export class BalanceConflict extends Schema.TaggedError<BalanceConflict>()("BalanceConflict", { detail: Schema.String }) {}

/** Prefixes an account key among the advisory locks of recon.lock_match_keys (never a payer's name key). */
const LOCK_NAMESPACE = "balance-account:"
/** Gaps announced per call at most (the next call takes the rest). */
const ANNOUNCE_BATCH = 500

// The long statements, each in its file beside this one (its parameters named in its head).
const VIEWS = sourceText(import.meta.url, "./BalanceStore.views.sql")
const ACCOUNTS = sourceText(import.meta.url, "./BalanceStore.accounts.sql")
const WRITE = sourceText(import.meta.url, "./BalanceStore.write.sql")
const ANNOUNCE = sourceText(import.meta.url, "./BalanceStore.announce.sql")
const REBUILD_GAPS = sourceText(import.meta.url, "./BalanceStore.rebuildGaps.sql")

const isDecimal = (text: string | null) => text === null || Option.isSome(BigDecimal.fromString(text))
const signed = (e: Entry) => e.direction === "in" ? BigDecimal.fromStringUnsafe(e.amount) : BigDecimal.negate(BigDecimal.fromStringUnsafe(e.amount))
const decText = (d: BigDecimal.BigDecimal) => BigDecimal.format(BigDecimal.normalize(d))

export interface ExplainInput {
  readonly gap_id: number
  readonly reason: string
  readonly amount?: string | null | undefined
  readonly operator: string
}

export interface BalanceStoreShape {
  /**
   * Places balance facts (one per parsed or ignored message that carried a transaction), in the
   * caller's transaction or a transaction of its own. Accounts are locked in key order, then the
   * accounts they are merged into in id order, so concurrent batches never deadlock. A fact whose
   * SMS was recorded before (a re-parse) changes nothing.
   */
  readonly record: (facts: ReadonlyArray<BalanceFact>) => Effect.Effect<Recorded, SqlError.SqlError>
  /**
   * Sends `balance.gap` for the gaps open `graceS` seconds and not explained (each once; one
   * explained and later undone is sent once past the grace period then); answers how many.
   */
  readonly announce: (graceS: number) => Effect.Effect<number, SqlError.SqlError>
  /** /accounts/list: accounts with their open gaps (explained ones say so), the latest balance first. */
  readonly listAccounts: (
    filter: Paging & { readonly has_gaps?: boolean | null | undefined }
  ) => Effect.Effect<PageOf<typeof AccountRow.Type>, SqlError.SqlError>
  /** An operator explains an open gap (a sweep, a fee): it stops alerting, stays listed, a message still closes it. */
  readonly explainGap: (input: ExplainInput) => Effect.Effect<typeof ListedGap.Type, BalanceNotFound | BalanceConflict | SqlError.SqlError>
  readonly unexplainGap: (input: { readonly gap_id: number; readonly operator: string }) => Effect.Effect<typeof ListedGap.Type, BalanceNotFound | BalanceConflict | SqlError.SqlError>
  /** Merges a device-account (no account digits) into another: one chain from then on. */
  readonly merge: (input: { readonly account_id: number; readonly into_id: number; readonly operator: string }) => Effect.Effect<typeof AccountRow.Type, BalanceNotFound | BalanceConflict | SqlError.SqlError>
  /** Undoes a merge: the account's own messages back in their own chain. */
  readonly unmerge: (input: { readonly account_id: number; readonly operator: string }) => Effect.Effect<typeof AccountRow.Type, BalanceNotFound | BalanceConflict | SqlError.SqlError>
  /** The operators' actions on balances, newest first. */
  readonly listActions: (filter: Paging & { readonly account_id?: number | null | undefined }) => Effect.Effect<PageOf<typeof ActionRow.Type>, SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const json = (value: unknown) => JSON.stringify(value)
  /** A timestamptz column as epoch milliseconds inside JSON. */
  const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::bigint`
  /** A balance_entry row (alias `alias`) as EntryRow's JSON. */
  const entryJson = (alias: string) => `jsonb_build_object('sms_id', ${alias}.sms_id, ` +
    `'received_at', ${epochMs(`${alias}.received_at`)}, 'txn_at', ${epochMs(`${alias}.txn_at`)}, ` +
    `'device_id', ${alias}.device_id, 'direction', ${alias}.direction, 'amount', ${alias}.amount::text, ` +
    `'balance', ${alias}.balance::text, 'duplicate_of', ${alias}.duplicate_of, 'pos', ${alias}.pos::text)`
  const ENTRY_JSON = (alias: string) => sql.literal(entryJson(alias))
  const WINDOW = `${DUPLICATE_WINDOW_MS} milliseconds`

  /** Migration 0009's ordered advisory locks on account keys, then the rows of the chains they place into, in id order. */
  const lockKeys = (keys: ReadonlyArray<string>) =>
    sql`SELECT recon.lock_match_keys(ARRAY(SELECT ${LOCK_NAMESPACE} || k FROM jsonb_array_elements_text(${json([...keys].sort())}::jsonb) AS k))`
  const lockRows = (ids: ReadonlyArray<number>) =>
    sql`SELECT id FROM recon.balance_account WHERE id IN (SELECT jsonb_array_elements_text(${json(ids)}::jsonb)::bigint) ORDER BY id FOR UPDATE`

  /** What placing reads of each account: its end, its last TAIL messages, the gaps the facts may fit, the entries they may repeat. */
  const loadViews = (wanted: ReadonlyArray<{ account_id: number; froms: Array<string>; befores: Array<string>; amounts: Array<string>; keys: Array<unknown> }>) =>
    sql.unsafe(VIEWS, [json(wanted), TAIL, WINDOW]).pipe(Effect.flatMap(decodeViews))

  const toView = (w: typeof ViewRow.Type): ChainView => ({
    tail: w.tail.map(toPlaced),
    complete: w.tail.length < TAIL,
    lastBalance: w.last_balance === null ? undefined : toPlaced(w.last_balance),
    endPos: w.end_pos ?? undefined,
    tailBetween: w.tail_between,
    gaps: w.gaps.map((g): GapView => ({
      id: g.id,
      after: toPlaced(g.after),
      before: toPlaced(g.before),
      between: g.between,
      afterNext: g.after_next,
      beforePrev: g.before_prev,
      since: g.since
    })),
    candidates: w.candidates.map(toEntry)
  })

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
      yield* lockKeys(keys)
      // The accounts seen before and the new ones (no other writer adds these keys: we hold their
      // locks; a merge takes them too), and which of the SMS were recorded before (a re-parse).
      const accounts = yield* sql.unsafe<{ id: bigint; account_key: string; merged_into: bigint | null; recorded: ReadonlyArray<bigint | number> | null }>(ACCOUNTS, [
        json(keys.map((k) => {
          const i = identities.get(k)!
          return { key: k, bank: i.bank, account: i.account, device_id: i.deviceId, sender: i.sender }
        })),
        json(usable.map((f) => f.smsId))
      ])
      const own = new Map(accounts.map((a) => [a.account_key, Number(a.id)]))
      const chainOf = new Map(accounts.map((a) => [a.account_key, Number(a.merged_into ?? a.id)]))
      const recordedBefore = new Set((accounts[0]?.recorded ?? []).map(Number))

      const incoming = new Map<number, Array<Entry>>()
      const origin = new Map<number, number>()
      for (const fact of usable) {
        if (recordedBefore.has(fact.smsId) || origin.has(fact.smsId)) continue
        const key = accountOf(fact).key
        const id = chainOf.get(key)!
        origin.set(fact.smsId, own.get(key)!)
        incoming.set(id, [...(incoming.get(id) ?? []), entryOf(fact)])
      }
      if (incoming.size === 0) return { placed: 0, duplicates: 0, opened: 0, closed: 0 }
      yield* lockRows([...incoming.keys()].sort((a, b) => a - b))

      const views = yield* loadViews([...incoming].map(([id, entries]) => ({
        account_id: id,
        froms: entries.flatMap((e) => e.balance === null ? [] : [decText(BigDecimal.subtract(BigDecimal.fromStringUnsafe(e.balance), signed(e)))]),
        befores: entries.flatMap((e) => e.balance === null ? [] : [e.balance]),
        amounts: entries.flatMap((e) => e.balance === null ? [decText(signed(e))] : []),
        keys: entries.map((e) => ({
          direction: e.direction,
          amount: e.amount,
          balance: e.balance,
          lo: new Date(e.receivedAt).toISOString(),
          hi: new Date(e.receivedAt).toISOString()
        }))
      })))
      const placements = views.map((w) => ({ accountId: w.account_id, changes: placeInChain(toView(w), incoming.get(w.account_id)!, now.getTime()) }))
      yield* write(placements, origin, now)
      const inserted = placements.flatMap((p) => p.changes.inserted)
      return {
        placed: inserted.filter((e) => e.duplicateOf === null).length,
        duplicates: inserted.filter((e) => e.duplicateOf !== null).length,
        opened: placements.reduce((n, p) => n + p.changes.opened.length, 0),
        closed: placements.reduce((n, p) => n + p.changes.closed.length, 0)
      }
    }))
  })

  const gapRow = (g: { afterSmsId: number; beforeSmsId: number; unexplained: string; fromBalance: string; beforeKey: string; between: string }) => ({
    after_sms_id: g.afterSmsId,
    before_sms_id: g.beforeSmsId,
    unexplained: g.unexplained,
    from_balance: g.fromBalance,
    before_key: g.beforeKey,
    between: g.between
  })

  /** The new entries, each account's end, then the gaps closed, changed and opened. */
  const write = (placements: ReadonlyArray<{ readonly accountId: number; readonly changes: ChainChanges }>, origin: ReadonlyMap<number, number>, now: Date) =>
    Effect.gen(function*() {
      const entries = placements.flatMap(({ accountId, changes }) => changes.inserted.map((e) => ({
        sms_id: e.smsId,
        account_id: accountId,
        origin_account_id: origin.get(e.smsId) ?? accountId,
        received_at: new Date(e.receivedAt).toISOString(),
        txn_at: e.txnAt === null ? null : new Date(e.txnAt).toISOString(),
        device_id: e.deviceId,
        direction: e.direction,
        amount: e.amount,
        balance: e.balance,
        duplicate_of: e.duplicateOf,
        pos: e.pos
      })))
      const ends = placements.map(({ accountId, changes }) => ({
        id: accountId,
        balance: changes.end.lastBalance?.balance ?? null,
        at: changes.end.lastBalance === undefined ? null : new Date(changes.end.lastBalance.receivedAt).toISOString(),
        sms_id: changes.end.lastBalance?.smsId ?? null,
        end_pos: changes.end.endPos ?? null,
        tail_between: changes.end.tailBetween
      }))
      yield* sql.unsafe(WRITE, [json(entries), json(ends)])
      const moved = placements.flatMap((p) => p.changes.moved.map((m) => ({ sms_id: m.smsId, pos: m.pos })))
      if (moved.length > 0) {
        yield* sql`UPDATE recon.balance_entry AS e SET pos = x.pos::numeric
          FROM jsonb_to_recordset(${json(moved)}::jsonb) AS x(sms_id bigint, pos text) WHERE e.sms_id = x.sms_id`
      }
      const closed = placements.flatMap((p) => p.changes.closed)
      if (closed.length > 0) {
        yield* sql`UPDATE recon.balance_gap AS g SET closed_at = ${now}, closed_by_sms_id = x.by
          FROM jsonb_to_recordset(${json(closed.map((c) => ({ id: c.id, by: c.bySmsId })))}::jsonb) AS x(id bigint, by bigint)
          WHERE g.id = x.id`
      }
      const changed = placements.flatMap((p) => p.changes.changed.map((g) => ({ id: g.id, ...gapRow(g) })))
      if (changed.length > 0) {
        yield* sql`UPDATE recon.balance_gap AS g SET after_sms_id = x.after_sms_id, before_sms_id = x.before_sms_id, unexplained = x.unexplained::numeric,
            from_balance = x.from_balance::numeric, before_key = x.before_key::numeric, between_sum = x.between::numeric
          FROM jsonb_to_recordset(${json(changed)}::jsonb)
            AS x(id bigint, after_sms_id bigint, before_sms_id bigint, unexplained text, from_balance text, before_key text, between text)
          WHERE g.id = x.id`
      }
      const opened = placements.flatMap(({ accountId, changes }) => changes.opened.map((g) => ({
        account_id: accountId,
        ...gapRow(g),
        since: new Date(g.since).toISOString(),
        split_from: g.splitFrom ?? null
      })))
      if (opened.length > 0) {
        // A gap split from another keeps its announcement (the same hole, already announced).
        yield* sql`INSERT INTO recon.balance_gap (account_id, after_sms_id, before_sms_id, unexplained, from_balance, before_key, between_sum, since, announced_at)
          SELECT x.account_id, x.after_sms_id, x.before_sms_id, x.unexplained::numeric, x.from_balance::numeric, x.before_key::numeric, x.between::numeric, x.since,
            (SELECT s.announced_at FROM recon.balance_gap AS s WHERE s.id = x.split_from)
          FROM jsonb_to_recordset(${json(opened)}::jsonb) AS x(account_id bigint, after_sms_id bigint, before_sms_id bigint, unexplained text,
            from_balance text, before_key text, between text, since timestamptz, split_from bigint)`
      }
    })

  const announce = Effect.fn("BalanceStore.announce")(function*(graceS: number) {
    const now = yield* Clock.currentTimeMillis
    const [row] = yield* sql.unsafe<{ sent: bigint }>(ANNOUNCE, [new Date(now), new Date(now - graceS * 1000), ANNOUNCE_BATCH])
    return Number(row?.sent ?? 0)
  })

  /** An open gap `g` as /accounts/list shows it. */
  const GAP_JSON = sql.literal(`jsonb_build_object('id', g.id, 'after_sms_id', g.after_sms_id,
      'before_sms_id', g.before_sms_id, 'unexplained', recon.amount_text(g.unexplained), 'since', recon.iso_time(g.since),
      'explained', CASE WHEN g.explained_at IS NULL THEN NULL ELSE jsonb_build_object('reason', g.explained_reason,
        'amount', recon.amount_text(g.explained_amount), 'operator', g.explained_by, 'at', recon.iso_time(g.explained_at)) END)`)
  /** Account `a`'s open gaps, the oldest first. */
  const GAPS_JSON = sql`COALESCE((SELECT jsonb_agg(${GAP_JSON} ORDER BY g.since, g.id)
    FROM recon.balance_gap AS g WHERE g.account_id = a.id AND g.closed_at IS NULL), '[]'::jsonb)`
  const ACCOUNT_COLUMNS = sql.literal(`a.id, a.account, a.bank, a.device_id, a.sender, recon.amount_text(a.last_balance) AS last_balance, a.last_at, a.merged_into`)

  const listAccounts = Effect.fn("BalanceStore.listAccounts")(function*(filter: Paging & { readonly has_gaps?: boolean | null | undefined }) {
    const { page, size, offset } = pageWindow(filter)
    const where = filter.has_gaps == null ? sql`true` : filter.has_gaps
      ? sql`EXISTS (SELECT 1 FROM recon.balance_gap AS g WHERE g.account_id = a.id AND g.closed_at IS NULL)`
      : sql`NOT EXISTS (SELECT 1 FROM recon.balance_gap AS g WHERE g.account_id = a.id AND g.closed_at IS NULL)`
    const [count] = yield* sql<{ total: bigint }>`SELECT count(*) AS total FROM recon.balance_account AS a WHERE ${where}`
    const items = yield* decodeAccounts(yield* sql`
      SELECT ${ACCOUNT_COLUMNS}, ${GAPS_JSON} AS gaps
      FROM recon.balance_account AS a WHERE ${where}
      ORDER BY a.last_at DESC NULLS LAST, a.id DESC LIMIT ${size} OFFSET ${offset}`)
    return { items, total: Number(count?.total ?? 0), page, page_size: size }
  })

  const oneAccount = (id: number) =>
    Effect.flatMap(sql`SELECT ${ACCOUNT_COLUMNS}, ${GAPS_JSON} AS gaps
      FROM recon.balance_account AS a WHERE a.id = ${id}`, decodeAccounts).pipe(Effect.map((rows) => rows[0]!))

  const oneGap = (id: number) =>
    Effect.flatMap(sql`SELECT ${GAP_JSON} AS gap FROM recon.balance_gap AS g WHERE g.id = ${id}`, decodeRows(Schema.Struct({ gap: ListedGap })))
      .pipe(Effect.map((rows) => rows[0]!.gap))

  const audit = (row: { action: string; operator: string; account_id: number; gap_id?: number | null; other_account_id?: number | null; reason?: string | null; amount?: string | null }, now: Date) =>
    sql`INSERT INTO recon.balance_action (action, operator, account_id, gap_id, other_account_id, reason, amount, at)
      VALUES (${row.action}, ${row.operator}, ${row.account_id}, ${row.gap_id ?? null}, ${row.other_account_id ?? null}, ${row.reason ?? null},
        ${row.amount ?? null}::numeric, ${now})`

  /** The open gap, locked with its account's chain. */
  const lockedGap = (gapId: number) =>
    Effect.gen(function*() {
      const [found] = yield* sql<{ account_id: bigint }>`SELECT account_id FROM recon.balance_gap WHERE id = ${gapId}`
      if (found === undefined) return yield* new BalanceNotFound({ what: `gap ${gapId}` })
      yield* lockRows([Number(found.account_id)])
      const [gap] = yield* sql<{ account_id: bigint; closed_at: Date | null; explained_at: Date | null }>`
        SELECT account_id, closed_at, explained_at FROM recon.balance_gap WHERE id = ${gapId}`
      if (gap!.closed_at !== null) return yield* new BalanceConflict({ detail: `gap ${gapId} is closed (a message explained it)` })
      return { accountId: Number(gap!.account_id), explained: gap!.explained_at !== null }
    })

  const explainGap = Effect.fn("BalanceStore.explainGap")(function*(input: ExplainInput) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const gap = yield* lockedGap(input.gap_id)
      if (gap.explained) return yield* new BalanceConflict({ detail: `gap ${input.gap_id} is explained already (undo it first)` })
      yield* sql`UPDATE recon.balance_gap SET explained_at = ${now}, explained_by = ${input.operator}, explained_reason = ${input.reason},
        explained_amount = ${input.amount ?? null}::numeric WHERE id = ${input.gap_id}`
      yield* audit({ action: "explain", operator: input.operator, account_id: gap.accountId, gap_id: input.gap_id, reason: input.reason, amount: input.amount ?? null }, now)
      return yield* oneGap(input.gap_id)
    }))
  })

  const unexplainGap = Effect.fn("BalanceStore.unexplainGap")(function*(input: { readonly gap_id: number; readonly operator: string }) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const gap = yield* lockedGap(input.gap_id)
      if (!gap.explained) return yield* new BalanceConflict({ detail: `gap ${input.gap_id} is not explained` })
      // Back to alerting: announced again past the grace period if it was never announced.
      yield* sql`UPDATE recon.balance_gap SET explained_at = NULL, explained_by = NULL, explained_reason = NULL, explained_amount = NULL
        WHERE id = ${input.gap_id}`
      yield* audit({ action: "unexplain", operator: input.operator, account_id: gap.accountId, gap_id: input.gap_id }, now)
      return yield* oneGap(input.gap_id)
    }))
  })

  const accountRow = (id: number) =>
    sql<{ id: bigint; account_key: string; account: string | null; merged_into: bigint | null }>`
      SELECT id, account_key, account, merged_into FROM recon.balance_account WHERE id = ${id}`.pipe(Effect.map((rows) => rows[0]))

  /**
   * An account's chain placed again from all its entries, in memory, by the same rules as
   * `record` (an operator's merge or its undo): positions and copies rewritten, the open gaps that
   * stay keep their rows (since, announcement, explanation), the others close, new ones open.
   */
  const rebuild = (accountId: number, now: Date) =>
    Effect.gen(function*() {
      const rows = yield* decodeEntries(yield* sql`SELECT ${ENTRY_JSON("e")} AS j FROM recon.balance_entry AS e WHERE e.account_id = ${accountId}`
        .pipe(Effect.map((rs) => rs.map((r: any) => r.j))))
      const changes = placeInChain(emptyView, rows.map((r) => ({ ...toEntry(r), duplicateOf: null })), now.getTime())
      yield* sql`UPDATE recon.balance_entry AS e SET pos = x.pos::numeric, duplicate_of = x.duplicate_of
        FROM jsonb_to_recordset(${json(changes.inserted.map((e) => ({ sms_id: e.smsId, pos: e.pos, duplicate_of: e.duplicateOf })))}::jsonb)
          AS x(sms_id bigint, pos text, duplicate_of bigint)
        WHERE e.sms_id = x.sms_id`
      const wanted = changes.opened.map(gapRow)
      // Open gaps with the same ends stay; the others close (no message closed them: closed_by_sms_id NULL).
      yield* sql`UPDATE recon.balance_gap AS g SET closed_at = ${now}
        WHERE g.account_id = ${accountId} AND g.closed_at IS NULL AND NOT EXISTS (
          SELECT 1 FROM jsonb_to_recordset(${json(wanted)}::jsonb) AS x(after_sms_id bigint, before_sms_id bigint)
          WHERE x.after_sms_id = g.after_sms_id AND x.before_sms_id = g.before_sms_id)`
      yield* sql.unsafe(REBUILD_GAPS, [json(wanted), accountId, now])
      const last = changes.end.lastBalance
      yield* sql`UPDATE recon.balance_account SET last_balance = ${last?.balance ?? null}::numeric,
          last_at = ${last === undefined ? null : new Date(last.receivedAt)}, last_sms_id = ${last?.smsId ?? null},
          end_pos = ${changes.end.endPos ?? null}::numeric, tail_between = ${changes.end.tailBetween}::numeric
        WHERE id = ${accountId}`
    })

  const merge = Effect.fn("BalanceStore.merge")(function*(input: { readonly account_id: number; readonly into_id: number; readonly operator: string }) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      if (input.account_id === input.into_id) return yield* new BalanceConflict({ detail: "an account cannot be merged into itself" })
      const [from, into] = [yield* accountRow(input.account_id), yield* accountRow(input.into_id)]
      if (from === undefined) return yield* new BalanceNotFound({ what: `account ${input.account_id}` })
      if (into === undefined) return yield* new BalanceNotFound({ what: `account ${input.into_id}` })
      yield* lockKeys([from.account_key, into.account_key])
      yield* lockRows([input.account_id, input.into_id].sort((a, b) => a - b))
      const [f, i] = [(yield* accountRow(input.account_id))!, (yield* accountRow(input.into_id))!]
      if (f.account !== null) {
        return yield* new BalanceConflict({ detail: `account ${input.account_id} shows account digits: its messages are placed by them, not merged` })
      }
      if (f.merged_into !== null) return yield* new BalanceConflict({ detail: `account ${input.account_id} is merged into account ${f.merged_into} already` })
      if (i.merged_into !== null) return yield* new BalanceConflict({ detail: `account ${input.into_id} is itself merged into account ${i.merged_into}` })
      const [has] = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.balance_account WHERE merged_into = ${input.account_id}`
      if (Number(has!.n) > 0) return yield* new BalanceConflict({ detail: `accounts are merged into account ${input.account_id}: merge into it instead` })
      yield* sql`UPDATE recon.balance_gap SET closed_at = ${now} WHERE account_id = ${input.account_id} AND closed_at IS NULL`
      yield* sql`UPDATE recon.balance_entry SET account_id = ${input.into_id} WHERE account_id = ${input.account_id}`
      yield* sql`UPDATE recon.balance_account SET merged_into = ${input.into_id}, merged_at = ${now}, last_balance = NULL, last_at = NULL,
        last_sms_id = NULL, end_pos = NULL, tail_between = 0 WHERE id = ${input.account_id}`
      yield* rebuild(input.into_id, now)
      yield* audit({ action: "merge", operator: input.operator, account_id: input.account_id, other_account_id: input.into_id }, now)
      return yield* oneAccount(input.into_id)
    }))
  })

  const unmerge = Effect.fn("BalanceStore.unmerge")(function*(input: { readonly account_id: number; readonly operator: string }) {
    return yield* sql.withTransaction(Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const from = yield* accountRow(input.account_id)
      if (from === undefined) return yield* new BalanceNotFound({ what: `account ${input.account_id}` })
      if (from.merged_into === null) return yield* new BalanceConflict({ detail: `account ${input.account_id} is not merged` })
      const into = (yield* accountRow(Number(from.merged_into)))!
      yield* lockKeys([from.account_key, into.account_key])
      yield* lockRows([Number(from.id), Number(into.id)].sort((a, b) => a - b))
      const again = (yield* accountRow(input.account_id))!
      if (again.merged_into === null || Number(again.merged_into) !== Number(into.id)) {
        return yield* new BalanceConflict({ detail: `account ${input.account_id} changed meanwhile; look again` })
      }
      // Copies pointing across the two chains are found again by the rebuilds.
      yield* sql`UPDATE recon.balance_entry SET duplicate_of = NULL WHERE account_id = ${Number(into.id)}`
      yield* sql`UPDATE recon.balance_entry SET account_id = ${input.account_id} WHERE account_id = ${Number(into.id)} AND origin_account_id = ${input.account_id}`
      yield* sql`UPDATE recon.balance_account SET merged_into = NULL, merged_at = NULL WHERE id = ${input.account_id}`
      yield* rebuild(Number(into.id), now)
      yield* rebuild(input.account_id, now)
      yield* audit({ action: "unmerge", operator: input.operator, account_id: input.account_id, other_account_id: Number(into.id) }, now)
      return yield* oneAccount(input.account_id)
    }))
  })

  const listActions = Effect.fn("BalanceStore.listActions")(function*(filter: Paging & { readonly account_id?: number | null | undefined }) {
    const { page, size, offset } = pageWindow(filter)
    const where = filter.account_id == null ? sql`true` : sql`(account_id = ${filter.account_id} OR other_account_id = ${filter.account_id})`
    const [count] = yield* sql<{ total: bigint }>`SELECT count(*) AS total FROM recon.balance_action WHERE ${where}`
    const items = yield* decodeRows(ActionRow)(yield* sql`SELECT id, action, operator, account_id, gap_id, other_account_id, reason,
        recon.amount_text(amount) AS amount, at FROM recon.balance_action WHERE ${where} ORDER BY at DESC, id DESC LIMIT ${size} OFFSET ${offset}`)
    return { items, total: Number(count?.total ?? 0), page, page_size: size }
  })

  return { record, announce, listAccounts, explainGap, unexplainGap, merge, unmerge, listActions } satisfies BalanceStoreShape
})

export class BalanceStore extends Context.Service<BalanceStore, BalanceStoreShape>()("recon/db/BalanceStore") {
  /** For a loop's `start` (parse_loop): the store on the loop's own SqlClient. */
  static readonly make = make
  static readonly layer = Layer.effect(BalanceStore, make)
}
