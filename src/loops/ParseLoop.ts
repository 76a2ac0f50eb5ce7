// parse_loop (DESIGN sections 6 and 8): reads the `received` SMS (parse/SmsParse.ts: the
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
//
// Balance continuity is off the money path: the write records each balance fact in
// balance_pending (migration 0019) and commits, the match loop is kicked, and the placer puts the
// facts in their accounts PLACE_AFTER later, several writes' facts in one transaction that also
// takes them off balance_pending. A fact a dead process left there is placed by a pass. Each pass
// also announces (balance.gap) the gaps open past SVC_BALANCE_GAP_GRACE_S.
import { Cause, Clock, Context, Duration, Effect, Layer, Queue, Result } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { BalanceStore } from "../db/BalanceStore.ts"
import { isDatabaseAway } from "../db/Database.ts"
import type { BalanceFact } from "../domain/BalanceSequence.ts"
import { balanceFactOf, parseSms } from "../parse/SmsParse.ts"
import { type LoadedTemplate, templateSet, type TemplateSet } from "../parse/Templates.ts"
import { compileRule } from "../parse/TemplateRule.ts"
import { ParseStore, type ReceivedSms, type TemplateRow } from "./ParseStore.ts"
import { HealthRegistry } from "../health/HealthRegistry.ts"
import * as Supervisor from "../actors/Supervisor.ts"
import { Kicks, type Loop, Worker } from "./Loop.ts"

/** SMS claimed per transaction, and transactions per pass (a pass stays short however deep the backlog). */
const BATCH = 500
const BATCHES_PER_PASS = 8
/** SMS handed over and not yet parsed, at most; past that an SMS waits in the table for a pass. */
const INBOX = 2000
/**
 * Balance facts are placed this long after their write: the money path (the match pass, the
 * wallet call) has the process and the database first, and the facts of several writes are placed
 * in one transaction.
 */
const PLACE_AFTER = Duration.millis(50)
/** Facts placed per transaction at most. */
const PLACE_BATCH = 500
/** A fact still pending this long after its write lost its placer (its process died): a pass places it, looking this often at most. */
const LEFT_BEHIND = Duration.seconds(30)
/** SVC_BALANCE_GAP_GRACE_S's default. */
const DEFAULT_GAP_GRACE_S = 120

/** SMS ids for a log line: the first 20, and how many more. */
const idList = (ids: ReadonlyArray<number>) => ids.length <= 20 ? ids.join(", ") : `${ids.slice(0, 20).join(", ")} and ${ids.length - 20} more`

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
}>()("recon/loops/ParseLoop/ParseInbox") {
  static readonly layer = Layer.effect(ParseInbox, Effect.gen(function*() {
    const kicks = yield* Kicks
    const inbox = yield* Queue.dropping<ReceivedSms>(INBOX)
    return ParseInbox.of({
      hand: (sms) => Effect.flatMap(Queue.offer(inbox, sms), (taken) => taken ? Effect.void : kicks.kick("parse_loop")),
      take: Queue.takeBetween(inbox, 1, BATCH)
    })
  }))
}

/** The templates compiled; one whose rule does not compile is kept as broken, and said so. */
const compileTemplates = (rows: ReadonlyArray<TemplateRow>) =>
  Effect.forEach(rows, (row) => {
    const compiled = compileRule(row.rule)
    const template: LoadedTemplate = {
      id: row.id,
      bank: row.bank,
      sender: row.sender,
      ruleSource: row.ruleSource,
      rule: Result.isSuccess(compiled) ? compiled.success : { broken: compiled.failure.detail }
    }
    return Result.isFailure(compiled)
      ? Effect.as(Effect.logWarning(`template ${row.id} (${row.bank}, ${row.ruleSource}) is not used: ${compiled.failure.detail}`), template)
      : Effect.succeed(template)
  })

/** What reading `rows` with `templates` gives (with each row's balance fact), and the templates that broke or were slow on them. */
const readAll = (rows: ReadonlyArray<ReceivedSms>, templates: TemplateSet) => {
  const broken: Array<{ id: number; error: string }> = []
  const slow = new Map<number, number>()
  const reads = rows.map((row) => {
    const outcome = parseSms({ body: row.body, sender: row.sender, receivedAt: row.receivedAt }, templates, (r) => {
      broken.push(...r.brokenTemplates)
      for (const s of r.slowTemplates) slow.set(s.id, s.millis)
    })
    const fact = balanceFactOf({ smsId: row.id, receivedAt: row.receivedAt, deviceId: row.deviceId, sender: row.sender }, outcome)
    return { id: row.id, outcome, fact }
  })
  return { reads, broken, slow }
}

/**
 * Balance continuity, after the write has committed: facts are placed in their accounts and taken
 * off balance_pending in one transaction. Should placing fail, the SMS are written all the same
 * (their money never waits on an aid) and the facts stay pending: a pass places them again once
 * they are LEFT_BEHIND old (a connection lost mid-way, a worker killed, a lock timeout). Only a
 * fact that fails again when a pass places it alone is given up, logged with its SMS (the account
 * shows a gap at worst, which a person looks at): one bad fact never holds up the others.
 */
const makePlacer = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* ParseStore
  const balances = yield* BalanceStore.make
  const graceS = (yield* Worker).balanceGapGraceS ?? DEFAULT_GAP_GRACE_S
  const waiting: Array<BalanceFact> = []
  const wake = yield* Queue.dropping<void>(1)
  let lookAt = 0

  /** The facts placed and taken off balance_pending; on failure, whether the database was away. */
  const attempt = (facts: ReadonlyArray<BalanceFact>) =>
    sql.withTransaction(Effect.andThen(balances.record(facts), store.placed(facts.map((f) => f.smsId)))).pipe(
      Effect.as({ placed: true, away: false, cause: undefined as Cause.Cause<unknown> | undefined }),
      Effect.catchCause((cause) => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
        const error = Cause.findErrorOption(cause)
        const away = error._tag === "Some" && SqlError.isSqlError(error.value) && isDatabaseAway(error.value)
        return Effect.succeed({ placed: false, away, cause: cause as Cause.Cause<unknown> | undefined })
      })
    )

  /** Facts just written: on failure they stay pending for a pass. */
  const place = (facts: ReadonlyArray<BalanceFact>): Effect.Effect<void> =>
    facts.length === 0 ? Effect.void : Effect.flatMap(attempt(facts), (result) =>
      result.placed ? Effect.void : result.away
        ? Effect.logWarning(`balance continuity: SMS ${idList(facts.map((f) => f.smsId))} wait to be placed in their accounts (the database is away); a pass places them`)
        : Effect.logWarning(`balance continuity: SMS ${idList(facts.map((f) => f.smsId))} not placed yet (kept pending; a pass places them again)`, result.cause))

  /** Facts left pending: tried together, then each alone; one that fails alone is given up. */
  const placeLeftBehind = (facts: ReadonlyArray<BalanceFact>): Effect.Effect<void> =>
    facts.length === 0 ? Effect.void : Effect.flatMap(attempt(facts), (result) => {
      if (result.placed) return Effect.void
      if (result.away) return (Effect.logWarning(`balance continuity: SMS ${idList(facts.map((f) => f.smsId))} still wait to be placed (the database is away)`))
      return Effect.forEach(facts, (fact) =>
        Effect.flatMap(attempt([fact]), (alone) =>
          alone.placed || alone.away ? Effect.void : Effect.andThen(
            Effect.logError(`balance continuity: SMS ${fact.smsId} not placed in its account after a second try (given up; written all the same)`, alone.cause),
            Effect.ignore(store.placed([fact.smsId]))
          )), { discard: true })
    })

  return {
    /** Facts just written: placed PLACE_AFTER from now. */
    hand: (facts: ReadonlyArray<BalanceFact>) =>
      facts.length === 0 ? Effect.void : Effect.suspend(() => {
        waiting.push(...facts)
        return Queue.offer(wake, undefined)
      }),
    /** The facts a dead process left pending (a pass's work, once per LEFT_BEHIND at most). */
    leftBehind: Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (now < lookAt) return
      const facts = yield* store.leftBehind(LEFT_BEHIND, PLACE_BATCH)
      // A full batch: more may wait, and the next pass looks again.
      lookAt = facts.length < PLACE_BATCH ? now + Duration.toMillis(LEFT_BEHIND) : 0
      yield* placeLeftBehind(facts)
    }),
    /** balance.gap for the gaps open past the grace period (a pass's work; a failure waits for the next pass). */
    announce: balances.announce(graceS).pipe(
      Effect.tap((sent) => sent > 0 ? Effect.logInfo(`balance continuity: ${sent} gaps open past ${graceS} s announced`) : Effect.void)
    ),
    /** The placer's fiber. */
    run: Effect.forever(Effect.gen(function*() {
      yield* Queue.take(wake)
      yield* Effect.sleep(PLACE_AFTER)
      while (waiting.length > 0) yield* place(waiting.splice(0, PLACE_BATCH))
    }))
  }
})
type Placer = Effect.Success<typeof makePlacer>

/**
 * parse_loop's state while it runs: the templates compiled from the table's version (undefined
 * until the first pass), and the templates already reported as broken or slow under it.
 */
const makeParser = Effect.gen(function*() {
  const store = yield* ParseStore
  let version: string | undefined
  let templates: TemplateSet = templateSet([])
  const reported = new Set<number>()

  const loadTemplates = Effect.gen(function*() {
    const loaded = yield* store.templates()
    const fresh = yield* compileTemplates(loaded.templates)
    templates = templateSet(fresh)
    version = loaded.version
    reported.clear()
    yield* Effect.logInfo(`${fresh.length} templates loaded`)
  })

  // Reported once per template and version. Validation refuses rules that are slow on a long text;
  // one slow here (a row written by hand, a pause of the process) is reported, and still used:
  // resting a template on one measurement would let a garbage-collection pause turn deposits into
  // parse failures.
  const reportTemplates = (broken: ReadonlyArray<{ id: number; error: string }>, slow: ReadonlyMap<number, number>) =>
    Effect.gen(function*() {
      for (const b of broken) {
        if (reported.has(b.id)) continue
        reported.add(b.id)
        yield* Effect.logWarning(`template ${b.id} failed on an SMS and was skipped: ${b.error}`)
      }
      for (const [id, millis] of slow) {
        if (reported.has(-id)) continue
        reported.add(-id)
        yield* Effect.logWarning(`template ${id} took ${millis} ms on one SMS`)
      }
    })

  /**
   * Parses and writes SMS still `received` (one statement), answers how many became `parsed` and
   * the balance facts of those written, to place once committed. Written only while the templates
   * they were read with are the table's: after a change, they are read again with the new ones (an
   * SMS stored after a template was added never misses it).
   */
  const parseAndWrite = (rows: ReadonlyArray<ReceivedSms>): Effect.Effect<Parsed, SqlError.SqlError> =>
    Effect.gen(function*() {
      const { reads, broken, slow } = readAll(rows, templates)
      const written = yield* store.write(reads, version)
      if (written._tag === "TemplatesChanged") {
        yield* loadTemplates
        return yield* parseAndWrite(rows)
      }
      yield* reportTemplates(broken, slow)
      const kept = reads.filter((read) => written.ids.has(read.id))
      return {
        parsed: kept.filter((read) => read.outcome.status === "parsed").length,
        facts: kept.flatMap((read) => read.fact === undefined ? [] : [read.fact])
      }
    })

  // The claim answers the templates' version too (one row with no SMS when none waits).
  const batch = Effect.gen(function*() {
    const claimed = yield* store.claim(BATCH)
    if (claimed.version !== undefined && claimed.version !== version) yield* loadTemplates
    if (claimed.sms.length === 0) return { claimed: 0, parsed: 0, facts: [] }
    return { claimed: claimed.sms.length, ...(yield* parseAndWrite(claimed.sms)) }
  })

  return { parseAndWrite, batch, loaded: Effect.sync(() => version !== undefined) }
})
type Parser = Effect.Success<typeof makeParser>

/** What a write did: how many SMS became `parsed`, and the balance facts to place. */
interface Parsed {
  readonly parsed: number
  readonly facts: ReadonlyArray<BalanceFact>
}

/**
 * The SMS handed over by the push endpoint, as they come, beside the passes; until the first pass
 * has compiled the templates they are left to it.
 */
const parseHandedOver = (parser: Parser, placer: Placer) =>
  Effect.gen(function*() {
    const registry = yield* HealthRegistry
    const handed = yield* (yield* ParseInbox).take
    // Handed-over SMS wait from here until written (or left for a pass); the next take is at once.
    yield* registry.reportWaiting(PARSE_HANDOVER, true)
    yield* handOver(parser, placer, handed)
    yield* registry.reportProgress(PARSE_HANDOVER)
    yield* registry.reportWaiting(PARSE_HANDOVER, false)
  })

const handOver = (parser: Parser, placer: Placer, handed: ReadonlyArray<ReceivedSms>) =>
  Effect.gen(function*() {
    const kicks = yield* Kicks
    if (!(yield* parser.loaded)) return yield* kicks.kick("parse_loop")
    // One statement, its own transaction. Failing (the database away), the SMS stay `received` for
    // a pass, and the hand-over goes on with the next ones.
    const done = yield* parser.parseAndWrite(handed).pipe(
      Effect.catch((error) =>
        Effect.as(
          Effect.andThen(Effect.logWarning(`${handed.length} SMS handed over were not written; a pass reads them`, error), kicks.kick("parse_loop")),
          { parsed: 0, facts: [] }
        ))
    )
    if (done.parsed > 0) yield* kicks.kick("order_match_loop")
    yield* placer.hand(done.facts)
  })

/** One pass: up to BATCHES_PER_PASS claims, each claim, parse and write one transaction; then the facts a dead process left. */
const pass = (parser: Parser, placer: Placer) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const kicks = yield* Kicks
    let parsed = 0
    let claimed = 0
    yield* placer.leftBehind
    yield* placer.announce
    for (let i = 0; i < BATCHES_PER_PASS; i++) {
      const done = yield* sql.withTransaction(parser.batch)
      parsed += done.parsed
      claimed += done.claimed
      if (done.parsed > 0) yield* kicks.kick("order_match_loop")
      yield* placer.hand(done.facts)
      if (done.claimed < BATCH) break
      // More waits: the next pass comes at once, after this one has reported its success.
      if (i === BATCHES_PER_PASS - 1) yield* kicks.kick("parse_loop")
    }
    if (claimed > 0) yield* Effect.logDebug(`${claimed} SMS read, ${parsed} parsed`)
  })

/** The component of readiness for the hand-over (parse_loop's fiber writing what the push port hands it). */
export const PARSE_HANDOVER = "parse_handover"
/** SMS handed over this long with none written: the hand-over is stale (readiness false). */
export const PARSE_HANDOVER_STALE_AFTER = Duration.seconds(30)

export const ParseLoop: Loop<SqlClient.SqlClient | Kicks | ParseInbox | ParseStore | Worker | HealthRegistry> = {
  name: "parse_loop",
  ttl: "30 seconds",
  every: "5 seconds",
  kickedBy: ["shooter_sms", "shooter_template_recharge"],
  start: Effect.gen(function*() {
    const parser = yield* makeParser
    const placer = yield* makePlacer
    const context = yield* Effect.context<SqlClient.SqlClient | Kicks | ParseInbox | HealthRegistry>()
    yield* (yield* HealthRegistry).registerWork(PARSE_HANDOVER, { staleAfter: PARSE_HANDOVER_STALE_AFTER })
    const loop = yield* Effect.fiber
    // The hand-over and the placer: a failed write is handled inside (the SMS wait for a pass); their
    // death (a defect) ends the loop's fiber, which the supervisor restarts (readiness false meanwhile).
    yield* Supervisor.fork({ name: "parse hand-over", answer: { endsOwner: loop } }, Effect.forever(parseHandedOver(parser, placer)).pipe(Effect.provideContext(context)))
    yield* Supervisor.fork({ name: "balance placer", answer: { endsOwner: loop } }, placer.run)
    return Effect.provideContext(pass(parser, placer), context)
  })
}
