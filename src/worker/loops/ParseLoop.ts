// parse_loop (DESIGN sections 6 and 8): reads the `received` SMS (domain/SmsParse.ts: the
// never-a-deposit guard, the templates, the built-in reader) and writes what it read: `parsed`
// (bank, payer name, amount, the transaction time and balance printed, which reader), `ignored`
// (outgoing money or no transaction) or `parse_failed` (a deposit no reader reads), each with its
// parse_detail.
//
// An SMS the push endpoint has just stored is handed over with its text (ParseInbox) and parsed at
// once, without claiming it again; a pass (on its schedule, kicked by the chat-bot, and through
// NOTIFY by everything that puts an SMS back to `received` from another process: sms/reset,
// sms/check pass, need_check moved on) claims the other `received` rows. The templates are
// compiled once and kept until the table's version moves (a trigger of migration 0017, read in the
// claim; the same trigger's NOTIFY kicks a pass at once). A parsed SMS kicks order_match_loop in
// this process; no NOTIFY is sent for it: the match loop of this process does the work, another
// process's would only find it taken, and a NOTIFY per batch would wake this loop in every worker
// for nothing.
import { Cause, Context, Effect, Layer, Queue, Result } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { BalanceStore } from "../../db/BalanceStore.ts"
import { balanceFactOf, type LoadedTemplate, parseSms, type ParseOutcome, type RuleSource, templateSet, type TemplateSet } from "../../domain/SmsParse.ts"
import { compileRule } from "../../domain/TemplateRule.ts"
import { countParses } from "../../observability/Metrics.ts"
import { reportSmsChanges } from "../../observability/SmsChanges.ts"
import { Kicks, type Loop } from "./Loop.ts"

/** SMS claimed per transaction, and transactions per pass (a pass stays short however deep the backlog). */
const BATCH = 500
const BATCHES_PER_PASS = 8
/** SMS handed over and not yet parsed, at most; past that an SMS waits in the table for a pass. */
const INBOX = 2000

/** An SMS just stored as `received`, with what parsing reads. */
export interface ReceivedSms {
  readonly id: number
  readonly deviceId: string
  readonly sender: string
  readonly body: string
  readonly receivedAt: Date
}

/**
 * SMS the push endpoint has just stored as `received`, handed to this process's parse_loop with
 * their text: parsed at once, without a statement to claim them again. Safe without the claim:
 * the write takes only rows still `received`, so one another worker claimed meanwhile is left to
 * it. When parse_loop is behind (the inbox full), the SMS stays in the table and a pass is kicked.
 */
export class ParseInbox extends Context.Service<ParseInbox, {
  readonly hand: (sms: ReceivedSms) => Effect.Effect<void>
  /** parse_loop's side. */
  readonly take: Effect.Effect<ReadonlyArray<ReceivedSms>>
}>()("recon/worker/loops/ParseLoop/ParseInbox") {
  static readonly layer = Layer.effect(ParseInbox, Effect.gen(function*() {
    const kicks = yield* Kicks
    const inbox = yield* Queue.dropping<ReceivedSms>(INBOX)
    return ParseInbox.of({
      hand: (sms) => Effect.flatMap(Queue.offer(inbox, sms), (taken) => taken ? Effect.void : kicks.kick("parse_loop")),
      take: Queue.takeBetween(inbox, 1, BATCH)
    })
  }))
}

interface TemplateRow {
  readonly version: bigint | number | string
  readonly id: bigint | number | string | null
  readonly bank: string
  readonly sender: string | null
  readonly rule: string
  readonly rule_source: RuleSource
}

/** A claimed SMS, or only the version (`id` null) when none was there to claim. */
interface ClaimRow {
  readonly version: bigint | number | string
  readonly id: bigint | number | string | null
  readonly device_id: string
  readonly sender: string
  readonly body: string
  readonly received_at: Date
}

const rowFor = (id: number, outcome: ParseOutcome) =>
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

export const ParseLoop: Loop<SqlClient.SqlClient | Kicks | ParseInbox> = {
  name: "parse_loop",
  ttl: "30 seconds",
  every: "5 seconds",
  kickedBy: ["shooter_sms", "shooter_template_recharge"],
  start: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const kicks = yield* Kicks
    const inbox = yield* ParseInbox
    const balances = yield* BalanceStore.make
    // The version of the table the templates were compiled from; undefined until the first pass.
    let version: string | undefined
    let templates: TemplateSet = templateSet([])
    const reported = new Set<number>()

    // The templates and the version they are of, read together.
    const loadTemplates = Effect.gen(function*() {
      const rows = yield* sql<TemplateRow>`SELECT v.version, t.id, t.bank, t.sender, t.rule, t.rule_source
        FROM recon.template_version AS v LEFT JOIN recon.shooter_template_recharge AS t ON true ORDER BY t.id`
      const fresh: Array<LoadedTemplate> = []
      for (const row of rows) {
        if (row.id === null) continue
        const compiled = compileRule(row.rule)
        const id = Number(row.id)
        if (Result.isFailure(compiled)) {
          yield* Effect.logWarning(`template ${id} (${row.bank}, ${row.rule_source}) is not used: ${compiled.failure.detail}`)
        }
        fresh.push({
          id,
          bank: row.bank,
          sender: row.sender,
          ruleSource: row.rule_source,
          rule: Result.isSuccess(compiled) ? compiled.success : { broken: compiled.failure.detail }
        })
      }
      templates = templateSet(fresh)
      version = String(rows[0]!.version)
      reported.clear()
      yield* Effect.logInfo(`${fresh.length} templates loaded`)
    })

    /**
     * Parses and writes SMS still `received` (one statement), answers how many became `parsed`.
     * Written only while the templates they were read with are the table's: after a change, they
     * are read again with the new ones (an SMS stored after a template was added never misses it).
     */
    const parseAndWrite = (rows: ReadonlyArray<ReceivedSms>): Effect.Effect<number, SqlError.SqlError> => Effect.gen(function*() {
      const broken: Array<{ id: number; error: string }> = []
      const slow = new Map<number, number>()
      const outcomes = rows.map((row) =>
        parseSms({ body: row.body, sender: row.sender, receivedAt: row.receivedAt }, templates, (r) => {
          broken.push(...r.brokenTemplates)
          for (const s of r.slowTemplates) slow.set(s.id, s.millis)
        })
      )
      const updates = outcomes.map((outcome, i) => rowFor(rows[i]!.id, outcome))
      const [written] = yield* sql<{ version: string; ids: ReadonlyArray<bigint | number | string> }>`
        WITH written AS (
          UPDATE recon.shooter_sms AS s SET status = x.status, bank = x.bank, payer_name = x.payer_name,
            amount = x.amount::numeric, template_id = x.template_id, txn_at = x.txn_at, balance = x.balance::numeric,
            parse_detail = x.detail, updated_at = now()
          FROM jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) AS x(id bigint, status text, bank text,
            payer_name text, amount text, template_id bigint, txn_at timestamptz, balance text, detail jsonb)
          WHERE s.id = x.id AND s.status = 'received'
            AND EXISTS (SELECT 1 FROM recon.template_version WHERE version::text = ${version ?? ""})
          RETURNING s.id)
        SELECT version::text AS version, ARRAY(SELECT id FROM written) AS ids FROM recon.template_version`
      if (written !== undefined && written.version !== version) {
        yield* loadTemplates
        return yield* parseAndWrite(rows)
      }
      // What this statement wrote (an SMS another process took meanwhile is its to report).
      const ids = new Set((written?.ids ?? []).map(Number))
      const done = updates.filter((u) => ids.has(Number(u.id)))
      yield* sql.afterCommit(countParses(done))
      yield* reportSmsChanges(sql, done.map((u) => ({ id: Number(u.id), status: u.status })))
      // Balance continuity, in the same transaction: a message is placed exactly when it is written.
      // In a savepoint of its own (BalanceStore's transaction, nested): should placing fail, the
      // SMS are written all the same (their money must not wait on an aid); the account then shows
      // a gap at worst, which a person looks at.
      const facts = rows.flatMap((row, i) => {
        const fact = ids.has(row.id) ? balanceFactOf({ smsId: row.id, receivedAt: row.receivedAt, deviceId: row.deviceId, sender: row.sender }, outcomes[i]!) : undefined
        return fact === undefined ? [] : [fact]
      })
      if (facts.length > 0) {
        yield* balances.record(facts).pipe(Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError(`balance continuity: SMS ${facts.map((f) => f.smsId).join(", ")} not placed in their accounts (written all the same)`, cause)
        ))
      }
      for (const b of broken) {
        if (reported.has(b.id)) continue
        reported.add(b.id)
        yield* Effect.logWarning(`template ${b.id} failed on an SMS and was skipped: ${b.error}`)
      }
      // Validation refuses rules that are slow on a long text; one slow here (a row written
      // by hand, a pause of the process) is reported, and still used: resting a template on one
      // measurement would let a garbage-collection pause turn deposits into parse failures.
      for (const [id, millis] of slow) {
        if (reported.has(-id)) continue
        reported.add(-id)
        yield* Effect.logWarning(`template ${id} took ${millis} ms on one SMS`)
      }
      return done.filter((u) => u.status === "parsed").length
    })

    // The claim answers the templates' version too (one row with no SMS when none waits).
    const batch = sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<ClaimRow>`
        SELECT v.version, c.id, c.device_id, c.sender, c.body, c.received_at FROM recon.template_version AS v
        LEFT JOIN LATERAL (SELECT id, device_id, sender, body, received_at FROM recon.shooter_sms
          WHERE status = 'received' ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) AS c ON true`
      if (rows[0] !== undefined && String(rows[0].version) !== version) yield* loadTemplates
      const claimed = rows.flatMap((row) =>
        row.id === null ? [] : [{ id: Number(row.id), deviceId: row.device_id, sender: row.sender, body: row.body, receivedAt: row.received_at }])
      if (claimed.length === 0) return { claimed: 0, parsed: 0 }
      return { claimed: claimed.length, parsed: yield* parseAndWrite(claimed) }
    }))

    // The SMS handed over by the push endpoint, as they come, beside the passes; until the first
    // pass has compiled the templates they are left to it.
    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      const handed = yield* inbox.take
      if (version === undefined) return yield* kicks.kick("parse_loop")
      // Written with their balance facts in one transaction. Failing (the database away), the SMS
      // stay `received` for a pass, and the hand-over goes on with the next ones.
      const parsed = yield* sql.withTransaction(parseAndWrite(handed)).pipe(
        Effect.catch((error) =>
          Effect.as(Effect.andThen(Effect.logWarning(`${handed.length} SMS handed over were not written; a pass reads them`, error), kicks.kick("parse_loop")), 0))
      )
      if (parsed > 0) yield* kicks.kick("order_match_loop")
    })))

    return Effect.gen(function*() {
      let parsed = 0
      let claimed = 0
      for (let i = 0; i < BATCHES_PER_PASS; i++) {
        const done = yield* batch
        parsed += done.parsed
        claimed += done.claimed
        if (done.parsed > 0) yield* kicks.kick("order_match_loop")
        if (done.claimed < BATCH) break
        // More waits: the next pass comes at once, after this one has reported its success.
        if (i === BATCHES_PER_PASS - 1) yield* kicks.kick("parse_loop")
      }
      if (claimed > 0) yield* Effect.logDebug(`${claimed} SMS read, ${parsed} parsed`)
    })
  })
}
