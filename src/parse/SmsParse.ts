// Reading one SMS (DESIGN section 6, Parsing): the never-a-deposit guard first, then the templates
// in order (those whose sender is the SMS's sender first, then the rest; operator ones before the
// built-ins), the first that extracts a payer name and an amount winning, and last the built-in
// reader for layouts no template knows. Pure: the parse loop feeds it rows and writes back the outcome.
import type { BalanceFact } from "../domain/BalanceSequence.ts"
import { judge } from "./DepositGuard.ts"
import type { RuleSource } from "../domain/Records.ts"
import { factsOf, nameRunsOn, type Reading, readSms, type TransactionFacts } from "./SmsReader.ts"
import { normalizeSmsText } from "../domain/SmsText.ts"
import { holderDoubt, payerName } from "./PayerName.ts"
import type { TemplateSet } from "./Templates.ts"
import { readTransactionTime, seoulIso } from "./TransactionTime.ts"
import { type CompiledRule, maxTextLength, type RuleExtraction } from "./TemplateRule.ts"

/** Which reader read a deposit: a template (`template_id` says which) or the built-in reader. */
export type ReaderName = "template" | "reader"

/**
 * The transaction as read, in `parse.slots`: for deposits the slots the reader filled (a
 * template's groups, completed by the built-in reader's facts where the template has none), for
 * outgoing money what the built-in reader read (balance continuity needs both).
 */
export interface Slots extends TransactionFacts {
  readonly payer_name?: string
}

/** What parse_detail holds (shown as `parse` by sms/get). */
export interface ParseDetail {
  readonly kind: "deposit" | "outgoing" | "no_transaction"
  /** Why the SMS is not `parsed`, as a sentence for the person who reads it. */
  readonly reason?: string
  readonly reader?: ReaderName
  readonly template_id?: number
  readonly template_bank?: string
  readonly rule_source?: RuleSource
  /** The transaction time as printed, and read (ISO, Asia/Seoul). */
  readonly time_text?: string
  readonly time?: string
  readonly balance?: string
  readonly account?: string
  readonly slots?: Slots
  /** Templates that failed on this SMS (a rule that threw), by id. */
  readonly broken_templates?: ReadonlyArray<number>
  /** Templates that matched but whose name was no payer (masked holder, account, balance…). */
  readonly rejected?: ReadonlyArray<{ readonly template_id: number; readonly reason: string }>
}

export type ParseOutcome =
  | {
    readonly status: "parsed"
    /** The bank of the template, or the one the message names (null when it names none). */
    readonly bank: string | null
    readonly payerName: string
    readonly amount: string
    /** Null when the built-in reader read it. */
    readonly templateId: number | null
    readonly txnAt: Date | undefined
    readonly balance: string | undefined
    readonly detail: ParseDetail
  }
  | { readonly status: "ignored" | "parse_failed"; readonly detail: ParseDetail }

/** The message a parse outcome is of, as balance continuity places it. */
export interface ParsedSms {
  readonly smsId: number
  readonly receivedAt: Date
  readonly deviceId: string
  readonly sender: string
}

/**
 * The balance continuity fact of a message (BalanceSequence.ts): a deposit read, or outgoing money
 * whose amount was read; none for anything else. The account is what the built-in reader read in
 * both directions (never a template's bank), so a bank's deposits and withdrawals land in one
 * account however each was read.
 */
export const balanceFactOf = (sms: ParsedSms, outcome: ParseOutcome): BalanceFact | undefined => {
  const slots = outcome.detail.slots
  if (outcome.status === "parse_failed" || slots === undefined || slots.amount === undefined) return undefined
  const txnAt = outcome.status === "parsed"
    ? outcome.txnAt
    : slots.time_text === undefined ? undefined : readTransactionTime(slots.time_text, sms.receivedAt)
  return {
    ...sms,
    bank: slots.bank ?? null,
    account: slots.account ?? null,
    direction: slots.direction,
    amount: slots.amount,
    balance: slots.balance ?? null,
    txnAt: txnAt ?? null
  }
}

export interface SmsToParse {
  readonly body: string
  readonly sender: string
  readonly receivedAt: Date
}

// ---------------------------------------------------------------------------------------------
// One SMS
// ---------------------------------------------------------------------------------------------

/** What was said about templates while parsing (the loop logs it). */
export interface ParseReport {
  /** Rules that threw on this SMS. */
  readonly brokenTemplates: ReadonlyArray<{ readonly id: number; readonly error: string }>
  /** Rules that took longer than {@link slowRuleMillis} on this SMS (for the log). */
  readonly slowTemplates: ReadonlyArray<{ readonly id: number; readonly millis: number }>
}

/** One rule on one SMS taking longer than this is worth a warning. */
export const slowRuleMillis = 100

const tryRule = (rule: CompiledRule, text: string): RuleExtraction | undefined | { readonly thrown: string } => {
  try {
    return rule.extract(text)
  } catch (error) {
    return { thrown: error instanceof Error ? error.message : String(error) }
  }
}

/** Reads one SMS: the guard, the templates, the built-in reader; never throws (a rule that throws fails only its template). */
export const parseSms = (sms: SmsToParse, templates: TemplateSet, report?: (r: ParseReport) => void): ParseOutcome => {
  const text = normalizeSmsText(sms.body)
  const reading = readSms(text)
  const verdict = judge(reading)
  if (verdict.kind !== "deposit") {
    return {
      status: "ignored",
      detail: { kind: verdict.kind, reason: verdict.reason, ...(verdict.kind === "outgoing" ? { slots: factsOf(reading, "out") } : {}) }
    }
  }
  if (text.length > maxTextLength) {
    return { status: "parse_failed", detail: { kind: "deposit", reason: `the text is longer than ${maxTextLength} characters` } }
  }
  const broken: Array<{ id: number; error: string }> = []
  const slow: Array<{ id: number; millis: number }> = []
  const rejected: Array<{ template_id: number; reason: string }> = []
  const tell = () => {
    if (broken.length > 0 || slow.length > 0) report?.({ brokenTemplates: broken, slowTemplates: slow })
  }
  const said = () => ({
    ...(broken.length === 0 ? {} : { broken_templates: broken.map((b) => b.id) }),
    ...(rejected.length === 0 ? {} : { rejected })
  })
  for (const template of templates.forSender(sms.sender)) {
    if ("broken" in template.rule) continue
    const started = performance.now()
    const extraction = tryRule(template.rule, text)
    const millis = performance.now() - started
    if (millis > slowRuleMillis) slow.push({ id: template.id, millis: Math.round(millis) })
    if (extraction === undefined) continue
    if ("thrown" in extraction) {
      broken.push({ id: template.id, error: extraction.thrown })
      continue
    }
    const name = payerName(extraction.name)
    const doubt = "rejected" in name ? undefined : holderDoubt(text, name.name)
    if (doubt !== undefined) {
      rejected.push({ template_id: template.id, reason: doubt })
      continue
    }
    if ("rejected" in name) {
      rejected.push({ template_id: template.id, reason: name.rejected })
      continue
    }
    const runsOn = nameRunsOn(reading, name.name)
    if (runsOn !== undefined) {
      const reason = `the name read (${JSON.stringify(name.name)}) runs on into ${JSON.stringify(runsOn)} on the next line: one name over two lines, or a name and another field`
      rejected.push({ template_id: template.id, reason })
      continue
    }
    if (/^0+(?:\.0+)?$/.test(extraction.amount)) {
      rejected.push({ template_id: template.id, reason: "the amount is zero" })
      continue
    }
    tell()
    const timeText = extraction.time ?? reading.timeText
    const read: Read = {
      payerName: name.name,
      amount: extraction.amount,
      balance: extraction.balance ?? reading.balance,
      account: extraction.account ?? reading.account,
      bank: template.bank,
      timeText
    }
    return parsed(read, sms, reading, template.id, {
      reader: "template",
      template_id: template.id,
      template_bank: template.bank,
      rule_source: template.ruleSource,
      ...said()
    })
  }
  tell()
  const byReader = readDeposit(reading)
  if ("read" in byReader) return parsed(byReader.read, sms, reading, null, { reader: "reader", ...said() })
  const templateSaid = rejected.length > 0 ? `; a template matched, but ${rejected[0]!.reason}` : ""
  return {
    status: "parse_failed",
    detail: { kind: "deposit", reason: `a deposit that no template reads, and the built-in reader ${byReader.failed}${templateSaid}`, ...said() }
  }
}

/** A deposit as one of the readers read it. */
interface Read {
  readonly payerName: string
  readonly amount: string
  readonly balance: string | undefined
  readonly account: string | undefined
  readonly bank: string | undefined
  readonly timeText: string | undefined
}

const parsed = (
  read: Read,
  sms: SmsToParse,
  reading: Reading,
  templateId: number | null,
  how: Pick<ParseDetail, "reader" | "template_id" | "template_bank" | "rule_source" | "broken_templates" | "rejected">
): ParseOutcome => {
  const txnAt = read.timeText === undefined ? undefined : readTransactionTime(read.timeText, sms.receivedAt)
  const bank = read.bank ?? reading.bank
  const slots: Slots = {
    direction: "in",
    payer_name: read.payerName,
    amount: read.amount,
    ...(read.balance === undefined ? {} : { balance: read.balance }),
    ...(read.account === undefined ? {} : { account: read.account }),
    ...(reading.bank === undefined ? {} : { bank: reading.bank }),
    ...(read.timeText === undefined ? {} : { time_text: read.timeText })
  }
  return {
    status: "parsed",
    bank: bank ?? null,
    payerName: read.payerName,
    amount: read.amount,
    templateId,
    txnAt,
    balance: read.balance,
    detail: {
      kind: "deposit",
      ...how,
      ...(read.timeText === undefined ? {} : { time_text: read.timeText }),
      ...(txnAt === undefined ? {} : { time: seoulIso(txnAt) }),
      ...(read.balance === undefined ? {} : { balance: read.balance }),
      ...(read.account === undefined ? {} : { account: read.account }),
      slots
    }
  }
}

/** The built-in reader's deposit, or what it could not find (completing "the built-in reader …"). */
const readDeposit = (reading: Reading): { readonly read: Read } | { readonly failed: string } => {
  if (reading.amount === undefined) return { failed: "found no amount next to the deposit word" }
  if (/^0+(?:\.0+)?$/.test(reading.amount)) return { failed: "read an amount of zero" }
  if (reading.counterpart === undefined) {
    return { failed: reading.counterpartDoubt === undefined ? "found no payer name" : `found ${reading.counterpartDoubt}` }
  }
  const name = payerName(reading.counterpart.text)
  if ("rejected" in name) return { failed: `found no payer name: ${name.rejected}` }
  const doubt = holderDoubt(reading.text, name.name)
  if (doubt !== undefined) return { failed: `found no payer name: ${doubt}` }
  return {
    read: {
      payerName: name.name,
      amount: reading.amount,
      balance: reading.balance,
      account: reading.account,
      bank: reading.bank,
      timeText: reading.timeText
    }
  }
}
