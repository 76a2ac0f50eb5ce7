// parse_loop (DESIGN sections 6 and 8): reads the `received` SMS (domain/SmsParse.ts: the
// never-a-deposit guard, the templates, the built-in reader) and writes what it read: `parsed`
// (bank, payer name, amount, the transaction time and balance printed, which reader), `ignored`
// (outgoing money or no transaction) or `parse_failed` (a deposit no reader reads), each with its
// parse_detail.
//
// Kicked in-process by the push endpoint and the chat-bot, and through NOTIFY by everything that
// puts an SMS back to `received` from another process (sms/reset, sms/check pass, need_check moved
// on) and by template changes. The templates are compiled once and kept until the table changes
// (a cheap fingerprint read each pass). A parsed SMS kicks order_match_loop in this process; no
// NOTIFY is sent for it: the match loop of this process does the work, another process's would
// only find it taken, and a NOTIFY per batch would wake this loop in every worker for nothing.
import { Effect, Result } from "effect"
import { SqlClient } from "effect/sql"
import { type LoadedTemplate, parseSms, type ParseOutcome, type RuleSource, templateSet, type TemplateSet } from "../domain/SmsParse.ts"
import { compileRule } from "../domain/TemplateRule.ts"
import { countParses } from "../observability/Metrics.ts"
import { reportSmsChanges } from "../observability/SmsChanges.ts"
import { Kicks, type Loop } from "./Loop.ts"

/** SMS claimed per transaction, and transactions per pass (a pass stays short however deep the backlog). */
const BATCH = 500
const BATCHES_PER_PASS = 8

interface TemplateRow {
  readonly id: bigint | number | string
  readonly bank: string
  readonly sender: string | null
  readonly rule: string
  readonly rule_source: RuleSource
}

interface SmsRow {
  readonly id: bigint | number | string
  readonly sender: string
  readonly body: string
  readonly received_at: Date
}

const rowFor = (id: SmsRow["id"], outcome: ParseOutcome) =>
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

export const ParseLoop: Loop = {
  name: "parse_loop",
  ttl: "30 seconds",
  every: "5 seconds",
  kickedBy: ["shooter_sms", "shooter_template_recharge"],
  start: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const kicks = yield* Kicks
    let fingerprint: string | undefined
    let templates: TemplateSet = templateSet([])
    const reported = new Set<number>()

    // The table's fingerprint: any insert, delete or in-place change of a template changes it.
    const loadTemplates = Effect.gen(function*() {
      const [current] = yield* sql<{ v: string }>`
        SELECT count(*)::text || ':' || coalesce(md5(string_agg(
          id::text || E'\x1f' || bank || E'\x1f' || coalesce(sender, '') || E'\x1f' || rule_source || E'\x1f' || rule,
          E'\x1e' ORDER BY id)), '') AS v
        FROM recon.shooter_template_recharge`
      if (current !== undefined && current.v === fingerprint) return
      const rows = yield* sql<TemplateRow>`SELECT id, bank, sender, rule, rule_source FROM recon.shooter_template_recharge ORDER BY id`
      const fresh: Array<LoadedTemplate> = []
      for (const row of rows) {
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
      fingerprint = current?.v
      reported.clear()
      yield* Effect.logInfo(`${fresh.length} templates loaded`)
    })

    const batch = sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<SmsRow>`
        SELECT id, sender, body, received_at FROM recon.shooter_sms
        WHERE status = 'received' ORDER BY id LIMIT ${BATCH}
        FOR UPDATE SKIP LOCKED`
      if (rows.length === 0) return { claimed: 0, parsed: 0 }
      const broken: Array<{ id: number; error: string }> = []
      const slow = new Map<number, number>()
      const updates = rows.map((row) =>
        rowFor(row.id, parseSms({ body: row.body, sender: row.sender, receivedAt: row.received_at }, templates, (r) => {
          broken.push(...r.brokenTemplates)
          for (const s of r.slowTemplates) slow.set(s.id, s.millis)
        }))
      )
      yield* sql`
        UPDATE recon.shooter_sms AS s SET status = x.status, bank = x.bank, payer_name = x.payer_name,
          amount = x.amount::numeric, template_id = x.template_id, txn_at = x.txn_at, balance = x.balance::numeric,
          parse_detail = x.detail, updated_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) AS x(id bigint, status text, bank text,
          payer_name text, amount text, template_id bigint, txn_at timestamptz, balance text, detail jsonb)
        WHERE s.id = x.id AND s.status = 'received'`
      yield* sql.afterCommit(countParses(updates))
      yield* reportSmsChanges(sql, updates.map((u) => ({ id: Number(u.id), status: u.status })))
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
      return { claimed: rows.length, parsed: updates.filter((u) => u.status === "parsed").length }
    }))

    return Effect.gen(function*() {
      yield* loadTemplates
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
