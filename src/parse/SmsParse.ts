// Reading one SMS (DESIGN section 6, Parsing): the never-a-deposit guard first, then the templates
// in order (those whose sender is the SMS's sender first, then the rest; operator ones before the
// built-ins), the first that extracts a payer name and an amount winning, and last the built-in
// reader for layouts no template knows. Pure: the parse loop feeds it rows and writes back the outcome.
import type { BalanceFact } from "../domain/BalanceSequence.ts"
import { judge } from "./DepositGuard.ts"
import { normalizePhone } from "../domain/Phone.ts"
import type { RuleSource } from "../domain/Records.ts"
import { factsOf, type Reading, readSms, type TransactionFacts } from "./SmsReader.ts"
import { normalizeSmsText } from "../domain/SmsText.ts"
import { isReference } from "./SmsTokens.ts"
import { type CompiledRule, maxTextLength, type RuleExtraction } from "./TemplateRule.ts"

/** A template row with its rule compiled (or why it does not compile). */
export interface LoadedTemplate {
  readonly id: number
  readonly bank: string
  readonly sender: string | null
  readonly ruleSource: RuleSource
  readonly rule: CompiledRule | { readonly broken: string }
}

/** The templates in the order they are tried for one sender. */
export interface TemplateSet {
  readonly forSender: (sender: string) => ReadonlyArray<LoadedTemplate>
}

const senderKey = (sender: string): string => normalizePhone(sender) ?? sender.trim()

/**
 * Orders templates once: within the templates of one sender and within the rest, operator ones
 * (manual, ai) before the built-ins, older before newer. A template whose rule does not compile
 * stays in the set (the outcome names it) but is never tried.
 */
export const templateSet = (templates: ReadonlyArray<LoadedTemplate>): TemplateSet => {
  const rank = (t: LoadedTemplate) => (t.ruleSource === "builtin" ? 1 : 0)
  const sorted = [...templates].sort((a, b) => rank(a) - rank(b) || a.id - b.id)
  const bySender = new Map<string, Array<LoadedTemplate>>()
  for (const t of sorted) {
    if (t.sender === null || t.sender.trim() === "") continue
    const key = senderKey(t.sender)
    bySender.set(key, [...(bySender.get(key) ?? []), t])
  }
  const cache = new Map<string, ReadonlyArray<LoadedTemplate>>()
  return {
    forSender: (sender) => {
      const key = senderKey(sender)
      const cached = cache.get(key)
      if (cached !== undefined) return cached
      const first = bySender.get(key) ?? []
      const ordered = first.length === 0 ? sorted : [...first, ...sorted.filter((t) => !first.includes(t))]
      if (cache.size < 10_000) cache.set(key, ordered)
      return ordered
    }
  }
}

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
// Transaction time
// ---------------------------------------------------------------------------------------------

const seoulOffsetMs = 9 * 3600_000
const dayMs = 86_400_000

// `2026/08/10 14:49`, `2026.12.11 22:05`, `07/04 15:24`, `08/07, 15:33`, `05:31`, `16:07:35`,
// `01/02` (date alone); a 2-digit year `26/08/10` too.
const dateTimePattern =
  /(?:(?<year>\d{4}|\d{2})[./-])?(?<month>\d{1,2})[./-](?<day>\d{1,2})\.?(?:[ ,]*(?<hour>\d{1,2}):(?<minute>\d{2})(?::(?<second>\d{2}))?)?|(?<hourOnly>\d{1,2}):(?<minuteOnly>\d{2})(?::(?<secondOnly>\d{2}))?/u

const seoulTime = (year: number, month: number, day: number, hour: number, minute: number, second: number): Date | undefined => {
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined
  const utc = Date.UTC(year, month - 1, day, hour, minute, second) - seoulOffsetMs
  const check = new Date(utc + seoulOffsetMs)
  return check.getUTCDate() === day ? new Date(utc) : undefined
}

/**
 * The transaction time printed in an SMS, in Asia/Seoul. A date without a year is put in the year
 * that makes it nearest before the time received (up to a day after it, for phone clocks ahead);
 * a time without a date on the day that does the same.
 */
export const readTransactionTime = (text: string, receivedAt: Date): Date | undefined => {
  const match = dateTimePattern.exec(text)
  const g = match?.groups
  if (g === undefined) return undefined
  const seoul = new Date(receivedAt.getTime() + seoulOffsetMs)
  const latest = receivedAt.getTime() + dayMs
  if (g["month"] !== undefined) {
    const month = Number(g["month"])
    const day = Number(g["day"])
    const hour = Number(g["hour"] ?? 0)
    const minute = Number(g["minute"] ?? 0)
    const second = Number(g["second"] ?? 0)
    if (g["year"] !== undefined) {
      const printed = Number(g["year"])
      return seoulTime(printed < 100 ? 2000 + printed : printed, month, day, hour, minute, second)
    }
    const year = seoul.getUTCFullYear()
    for (const candidate of [year + 1, year, year - 1, year - 2, year - 3, year - 4]) {
      const at = seoulTime(candidate, month, day, hour, minute, second)
      if (at !== undefined && at.getTime() <= latest) return at
    }
    return undefined
  }
  const hour = Number(g["hourOnly"])
  const minute = Number(g["minuteOnly"])
  const second = Number(g["secondOnly"] ?? 0)
  const today = seoulTime(seoul.getUTCFullYear(), seoul.getUTCMonth() + 1, seoul.getUTCDate(), hour, minute, second)
  if (today === undefined) return undefined
  // Nearest before the time received, a few minutes of clock skew allowed.
  return today.getTime() <= receivedAt.getTime() + 10 * 60_000 ? today : new Date(today.getTime() - dayMs)
}

/** `2026-01-01T00:01:00+09:00`: a time in Asia/Seoul for people to read. */
export const seoulIso = (at: Date): string => `${new Date(at.getTime() + seoulOffsetMs).toISOString().slice(0, 19)}+09:00`

// ---------------------------------------------------------------------------------------------
// Payer names
// ---------------------------------------------------------------------------------------------

/**
 * The payer name as printed, or why the captured text is no payer: a masked account-holder name
 * (`김*늘님`, `장영*(0276)`), an account number, an amount, a time, the balance line.
 */
export const payerName = (captured: string): { readonly name: string } | { readonly rejected: string } => {
  // `김신혁 → 내 입출금통장(2856)`: the arrow and the holder's own account after it are no part of the name
  // (a template's group that ran past a line break takes them along).
  let name = captured.replace(/\s+/gu, " ").replace(/\s*(?:→|->|➡|⇒|▶|=>)\s*(?:내\s?.*|[가-힣A-Za-z]*(?:통장|계좌)\s?(?:\([\d*-]+\))?)$/u, "").trim()
  // `coinpos365 지현주`: an aggregator's reference before the name is no part of it (SmsTokens.isReference).
  const [first, ...rest] = name.split(" ")
  if (rest.length > 0 && isReference(first!) && /\p{L}/u.test(rest.join(" "))) name = rest.join(" ")
  // `김철수님`: the honorific is no part of the name.
  if (name.length > 2 && name.endsWith("님")) name = name.slice(0, -1).trim()
  if (name === "") return { rejected: "the name is empty" }
  if (name.includes("*")) return { rejected: `${JSON.stringify(name)} is a masked account-holder name, not the payer` }
  // `홍길동 입금`, `잔액 1,000`: a word of the transaction line came with the name. A name that only
  // contains such a syllable pair (김출금) is a name.
  if (/잔액|(?:^|\s)(?:입금|출금)|(?:입금|출금)(?:\s|$)/u.test(name) && !/^[가-힣]{2,4}$/u.test(name)) {
    return { rejected: `${JSON.stringify(name)} is part of the transaction line, not a name` }
  }
  if (/\d{1,2}:\d{2}/u.test(name)) return { rejected: `${JSON.stringify(name)} holds a time, not only a name` }
  if (/계좌\s*[\d*#-]{3,}/u.test(name)) return { rejected: `${JSON.stringify(name)} holds an account, not only a name` }
  if (/^[\d\s,.:/#()\-+]*원?$/u.test(name)) return { rejected: `${JSON.stringify(name)} is a number (account, amount or time), not a name` }
  if (/^\(?[가-힣A-Za-z]*은행\)?$/u.test(name)) return { rejected: `${JSON.stringify(name)} is a bank, not a name` }
  if (name.length > 60) return { rejected: "the name is longer than 60 characters" }
  return { name }
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
    if (/^0+(?:\.0+)?$/.test(extraction.amount)) {
      rejected.push({ template_id: template.id, reason: "the amount is zero" })
      continue
    }
    tell()
    const timeText = extraction.time ?? reading.timeText ?? dateTimePattern.exec(text)?.[0]
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

/**
 * The account holder's slots the message prints (issue 39), as spans of the text: a masked or
 * plain name followed by the account's digits (`[카카오뱅크] 홍*동(1234)`, `홍길동(3333-**-1234)`), not
 * an account's own name (`입출금통장(2856)`); a `…님` greeting (`홍길동님,`, `홍길동님 안녕하세요`, `홍길동님의 입출금통장`; a line `홍길동님` alone
 * is the payer in some layouts);
 * the holder's own account an arrow points to (`→ 내 입출금통장(2856)`).
 */
export const holderSlots = (text: string): ReadonlyArray<readonly [number, number]> => {
  const slots: Array<readonly [number, number]> = []
  for (const m of text.matchAll(/(?<=^|[\s\]>)])([가-힣A-Za-z*]{2,8})\s?\(\s*[\d*#-]{3,}\s*\)/gu)) {
    if (!/(?:통장|계좌|예금|적금|카드|은행|뱅크|머니|저축|체크|입출금|잔액|입금|출금)$/u.test(m[1]!)) slots.push([m.index, m.index + m[0].length])
  }
  for (const m of text.matchAll(/(?<=^|[\s\]])[가-힣*]{2,5}님(?=\s?,|\s*안녕|의\s?[가-힣]*(?:계좌|통장))/gu)) slots.push([m.index, m.index + m[0].length])
  for (const m of text.matchAll(/(?:→|->|➡|⇒|▶|=>)\s*(?:내\s?[^\n]*|[가-힣A-Za-z]*(?:통장|계좌)\s?(?:\([\d*-]+\))?)/gu)) slots.push([m.index, m.index + m[0].length])
  return slots
}

/**
 * Why the payer read cannot be told from the account holder, or nothing: every place the name
 * stands in the text is a holder slot (a name printed elsewhere too, as in a transfer to oneself
 * `김*늘님 … 김하늘 전자금융입금`, is the payer's own slot).
 */
const holderDoubt = (text: string, payer: string): string | undefined => {
  const slots = holderSlots(text)
  if (slots.length === 0) return undefined
  const forms = [payer, payer.replace(/^[가-힣A-Za-z]+\s/u, "")]
  const places = forms.flatMap((form) => [...text.matchAll(new RegExp(form.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&"), "gu"))].map((m) => [m.index, m.index + form.length] as const))
  if (places.length === 0) return undefined
  const inHolder = (at: readonly [number, number]) => slots.some(([start, end]) => at[0] >= start && at[1] <= end)
  return places.every(inHolder) ? `the payer read (${JSON.stringify(payer)}) stands only where the message names the account holder` : undefined
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
