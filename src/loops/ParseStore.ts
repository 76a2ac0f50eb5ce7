// The queries of parse_loop: the templates with the version of the table they are of, the claim of
// `received` SMS (SKIP LOCKED, answering the version too), the write of what was read, taken only
// while the templates it was read with are still the table's, and the balance facts it left to be
// placed (migration 0019). The transactions around them are the loop's: a pass's claim and write
// commit together; a handed-over SMS's write is one statement.
import { Context, Duration, Effect, Layer, Option, Schema, SchemaTransformation } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import type { BalanceFact } from "../domain/BalanceSequence.ts"
import { RuleSource } from "../domain/Records.ts"
import type { ParseOutcome } from "../parse/SmsParse.ts"
import { DbId } from "../domain/PgValues.ts"
import { countParses } from "../observability/Metrics.ts"
import { reportSmsChanges } from "../observability/SmsChanges.ts"
import { sqlFailures } from "../db/Codecs.ts"
import { sourceText } from "../db/SourceText.ts"

/** An SMS still `received`, with what parsing reads. */
export interface ReceivedSms {
  readonly id: number
  readonly deviceId: string
  readonly sender: string
  readonly body: string
  readonly receivedAt: Date
}

/** A template row as the table holds it; `rule` is compiled by the loop. */
export interface TemplateRow {
  readonly id: number
  readonly bank: string
  readonly sender: string | null
  readonly rule: string
  readonly ruleSource: RuleSource
}

/** The table's templates and the version they are of. */
export interface Templates {
  readonly version: string
  readonly templates: ReadonlyArray<TemplateRow>
}

/** The SMS claimed (none when none waited) and the templates' version, read in the same statement. */
export interface Claimed {
  readonly version: string | undefined
  readonly sms: ReadonlyArray<ReceivedSms>
}

/** What a write did: the SMS it wrote, or nothing because the templates changed since they were read. */
export type Written =
  | { readonly _tag: "Written"; readonly ids: ReadonlySet<number> }
  | { readonly _tag: "TemplatesChanged" }

/** One SMS read, what it was read as, and the balance fact to place in its account (if any). */
export interface Read {
  readonly id: number
  readonly outcome: ParseOutcome
  readonly fact: BalanceFact | undefined
}

/** A balance fact as balance_pending keeps it (JSON: times as ISO strings). */
const PendingFact = Schema.Struct({
  smsId: Schema.Number,
  receivedAt: Schema.DateFromString,
  deviceId: Schema.String,
  sender: Schema.String,
  bank: Schema.NullOr(Schema.String),
  account: Schema.NullOr(Schema.String),
  direction: Schema.Literals(["in", "out"]),
  amount: Schema.String,
  balance: Schema.NullOr(Schema.String),
  txnAt: Schema.NullOr(Schema.DateFromString)
})
const encodeFact = Schema.encodeSync(PendingFact)
const PendingRow = Schema.Struct({ fact: PendingFact })

/** The fact of a read, as the write records it in balance_pending (null: nothing to place). */
const pendingOf = (fact: BalanceFact | undefined) =>
  fact === undefined ? null : encodeFact({
    smsId: fact.smsId,
    receivedAt: fact.receivedAt,
    deviceId: fact.deviceId,
    sender: fact.sender,
    bank: fact.bank ?? null,
    account: fact.account ?? null,
    direction: fact.direction,
    amount: fact.amount,
    balance: fact.balance,
    txnAt: fact.txnAt ?? null
  })

/** The template_version column (bigint) as text, as the write compares it. */
const Version = Schema.Union([Schema.BigInt, Schema.Number, Schema.String]).pipe(
  Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (value) => String(value), encode: (value) => value }))
)

const TemplateResult = Schema.Struct({
  version: Version,
  id: Schema.NullOr(DbId),
  bank: Schema.String,
  sender: Schema.NullOr(Schema.String),
  rule: Schema.String,
  rule_source: RuleSource
})

/** A claimed SMS, or only the version (`id` null) when none was there to claim. */
const ClaimResult = Schema.Union([
  Schema.Struct({
    version: Version,
    id: DbId,
    device_id: Schema.String,
    sender: Schema.String,
    body: Schema.String,
    received_at: Schema.Date
  }),
  Schema.Struct({ version: Version, id: Schema.Null })
])

const WriteResult = Schema.Struct({ version: Schema.String, ids: Schema.Array(DbId) })
const WRITE = sourceText(import.meta.url, "./ParseStore.write.sql")

const rowFor = ({ id, outcome, fact }: Read) => ({
  id: String(id),
  status: outcome.status,
  detail: outcome.detail,
  fact: pendingOf(fact),
  ...(outcome.status === "parsed"
    ? {
      bank: outcome.bank,
      payer_name: outcome.payerName,
      amount: outcome.amount,
      template_id: outcome.templateId,
      txn_at: outcome.txnAt?.toISOString() ?? null,
      balance: outcome.balance ?? null
    }
    : { bank: null, payer_name: null, amount: null, template_id: null, txn_at: null, balance: null })
})

export class ParseStore extends Context.Service<ParseStore, {
  /** The templates and the version they are of, read together. */
  templates(): Effect.Effect<Templates, SqlError.SqlError>
  /** Up to `limit` `received` SMS locked for this transaction (SKIP LOCKED), with the templates' version. */
  claim(limit: number): Effect.Effect<Claimed, SqlError.SqlError>
  /**
   * What was read, written over the SMS still `received` (one statement), if the table's templates
   * are still those of `version`; the SMS written are counted and reported once committed, and their
   * balance facts recorded in balance_pending by the same statement.
   */
  write(reads: ReadonlyArray<Read>, version: string | undefined): Effect.Effect<Written, SqlError.SqlError>
  /** Balance facts recorded at least `age` ago and still not placed (their placer died), the oldest first. */
  leftBehind(age: Duration.Duration, limit: number): Effect.Effect<ReadonlyArray<BalanceFact>, SqlError.SqlError>
  /** The facts of these SMS placed (or given up): no longer pending. In the placing transaction. */
  placed(smsIds: ReadonlyArray<number>): Effect.Effect<void, SqlError.SqlError>
}>()("recon/loops/ParseStore") {
  static readonly layer = Layer.effect(ParseStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findTemplates = SqlSchema.findNonEmpty({
      Request: Schema.Void,
      Result: TemplateResult,
      execute: () =>
        sql`SELECT v.version, t.id, t.bank, t.sender, t.rule, t.rule_source
        FROM recon.template_version AS v LEFT JOIN recon.shooter_template_recharge AS t ON true ORDER BY t.id`
    })
    const findClaimed = SqlSchema.findAll({
      Request: Schema.Int,
      Result: ClaimResult,
      execute: (limit) =>
        sql`
        SELECT v.version, c.id, c.device_id, c.sender, c.body, c.received_at FROM recon.template_version AS v
        LEFT JOIN LATERAL (SELECT id, device_id, sender, body, received_at FROM recon.shooter_sms
          WHERE status = 'received' ORDER BY id LIMIT ${limit} FOR NO KEY UPDATE SKIP LOCKED) AS c ON true`
    })
    const findWritten = SqlSchema.findOneOption({
      Request: Schema.Struct({ updates: Schema.String, version: Schema.String }),
      Result: WriteResult,
      execute: ({ updates, version }) => sql.unsafe(WRITE, [updates, version])
    })

    const templates = Effect.fn("ParseStore.templates")(function*() {
      const rows = yield* sqlFailures(findTemplates(undefined))
      return {
        version: rows[0].version,
        templates: rows.flatMap((row) =>
          row.id === null ? [] : [{ id: row.id, bank: row.bank, sender: row.sender, rule: row.rule, ruleSource: row.rule_source }])
      }
    })

    const claim = Effect.fn("ParseStore.claim")(function*(limit: number) {
      const rows = yield* sqlFailures(findClaimed(limit))
      return {
        version: rows[0]?.version,
        sms: rows.flatMap((row) =>
          row.id === null
            ? []
            : [{ id: row.id, deviceId: row.device_id, sender: row.sender, body: row.body, receivedAt: row.received_at }])
      }
    })

    const write = Effect.fn("ParseStore.write")(function*(reads: ReadonlyArray<Read>, version: string | undefined) {
      const updates = reads.map(rowFor)
      const written = yield* sqlFailures(findWritten({ updates: JSON.stringify(updates), version: version ?? "" }))
      if (Option.isSome(written) && written.value.version !== version) return { _tag: "TemplatesChanged" } as const
      // What this statement wrote (an SMS another process took meanwhile is its to report).
      const ids: ReadonlySet<number> = new Set(Option.match(written, { onNone: () => [], onSome: (row) => row.ids }))
      const done = updates.filter((u) => ids.has(Number(u.id)))
      yield* sql.afterCommit(countParses(done))
      yield* reportSmsChanges(sql, done.map((u) => ({ id: Number(u.id), status: u.status })))
      return { _tag: "Written", ids } as const
    })

    const findLeftBehind = SqlSchema.findAll({
      Request: Schema.Struct({ age: Schema.String, limit: Schema.Int }),
      Result: PendingRow,
      execute: ({ age, limit }) =>
        sql`SELECT fact FROM recon.balance_pending WHERE created_at < now() - ${age}::interval ORDER BY created_at, sms_id LIMIT ${limit}`
    })

    const leftBehind = Effect.fn("ParseStore.leftBehind")(function*(age: Duration.Duration, limit: number) {
      const rows = yield* sqlFailures(findLeftBehind({ age: `${Duration.toMillis(age)} milliseconds`, limit }))
      return rows.map((row): BalanceFact => row.fact)
    })

    const placed = Effect.fn("ParseStore.placed")(function*(smsIds: ReadonlyArray<number>) {
      if (smsIds.length === 0) return
      yield* sql`DELETE FROM recon.balance_pending WHERE sms_id IN ${sql.in(smsIds)}`
    })

    return ParseStore.of({ templates, claim, write, leftBehind, placed })
  }))
}
