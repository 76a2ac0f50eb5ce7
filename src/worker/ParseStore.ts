// The queries of parse_loop: the templates with the version of the table they are of, the claim of
// `received` SMS (SKIP LOCKED, answering the version too), and the write of what was read, taken
// only while the templates it was read with are still the table's. The transaction around them is
// the loop's: claim, parse, write and balance placement commit together.
import { Context, Effect, Layer, Option, Schema, SchemaTransformation } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import type { ParseOutcome, RuleSource } from "../domain/SmsParse.ts"
import { DbId } from "../domain/PgValues.ts"
import { countParses } from "../observability/Metrics.ts"
import { reportSmsChanges } from "../observability/SmsChanges.ts"

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

/** One SMS read, and what it was read as. */
export interface Read {
  readonly id: number
  readonly outcome: ParseOutcome
}

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
  rule_source: Schema.Literals(["builtin", "manual", "ai"])
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

const rowFor = ({ id, outcome }: Read) =>
  outcome.status === "parsed"
    ? {
      id: String(id),
      status: outcome.status,
      bank: outcome.bank,
      payer_name: outcome.payerName,
      amount: outcome.amount,
      template_id: outcome.templateId,
      txn_at: outcome.txnAt?.toISOString() ?? null,
      balance: outcome.balance ?? null,
      detail: outcome.detail
    }
    : {
      id: String(id),
      status: outcome.status,
      bank: null,
      payer_name: null,
      amount: null,
      template_id: null,
      txn_at: null,
      balance: null,
      detail: outcome.detail
    }

export class ParseStore extends Context.Service<ParseStore, {
  /** The templates and the version they are of, read together. */
  templates(): Effect.Effect<Templates, SqlError.SqlError>
  /** Up to `limit` `received` SMS locked for this transaction (SKIP LOCKED), with the templates' version. */
  claim(limit: number): Effect.Effect<Claimed, SqlError.SqlError>
  /**
   * What was read, written over the SMS still `received` (one statement), if the table's templates
   * are still those of `version`; the SMS written are counted and reported once committed.
   */
  write(reads: ReadonlyArray<Read>, version: string | undefined): Effect.Effect<Written, SqlError.SqlError>
}>()("recon/worker/ParseStore") {
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
          WHERE status = 'received' ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED) AS c ON true`
    })
    const findWritten = SqlSchema.findOneOption({
      Request: Schema.Struct({ updates: Schema.String, version: Schema.String }),
      Result: WriteResult,
      execute: ({ updates, version }) =>
        sql`
        WITH written AS (
          UPDATE recon.shooter_sms AS s SET status = x.status, bank = x.bank, payer_name = x.payer_name,
            amount = x.amount::numeric, template_id = x.template_id, txn_at = x.txn_at, balance = x.balance::numeric,
            parse_detail = x.detail, updated_at = now()
          FROM jsonb_to_recordset(${updates}::jsonb) AS x(id bigint, status text, bank text,
            payer_name text, amount text, template_id bigint, txn_at timestamptz, balance text, detail jsonb)
          WHERE s.id = x.id AND s.status = 'received'
            AND EXISTS (SELECT 1 FROM recon.template_version WHERE version::text = ${version})
          RETURNING s.id)
        SELECT version::text AS version, ARRAY(SELECT id FROM written) AS ids FROM recon.template_version`
    })

    const templates = Effect.fn("ParseStore.templates")(function*() {
      const rows = yield* Effect.orDie(findTemplates(undefined))
      return {
        version: rows[0].version,
        templates: rows.flatMap((row) =>
          row.id === null ? [] : [{ id: row.id, bank: row.bank, sender: row.sender, rule: row.rule, ruleSource: row.rule_source }])
      }
    })

    const claim = Effect.fn("ParseStore.claim")(function*(limit: number) {
      const rows = yield* Effect.orDie(findClaimed(limit))
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
      const written = yield* Effect.orDie(findWritten({ updates: JSON.stringify(updates), version: version ?? "" }))
      if (Option.isSome(written) && written.value.version !== version) return { _tag: "TemplatesChanged" } as const
      // What this statement wrote (an SMS another process took meanwhile is its to report).
      const ids: ReadonlySet<number> = new Set(Option.match(written, { onNone: () => [], onSome: (row) => row.ids }))
      const done = updates.filter((u) => ids.has(Number(u.id)))
      yield* sql.afterCommit(countParses(done))
      yield* reportSmsChanges(sql, done.map((u) => ({ id: Number(u.id), status: u.status })))
      return { _tag: "Written", ids } as const
    })

    return ParseStore.of({ templates, claim, write })
  }))
}
