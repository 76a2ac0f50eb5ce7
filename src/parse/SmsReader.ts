// The built-in reader (DESIGN section 6): one transaction read from a message's tokens
// (SmsTokens.ts). It finds the transaction words and the amount each governs, decides which way
// the money moved, and reads the slots around them: the counterpart (payer of a deposit, payee or
// merchant of outgoing money), the balance, the account as shown, the bank and the time. The
// guard (DepositGuard.ts) judges the message from this same reading; the parse loop uses it last,
// after the templates, for layouts no template knows. Pure.
import { type Direction, isReference, type LabelSlot, type Role, type Token, tokenize, type TxnWord } from "./SmsTokens.ts"
import { timeTextOf } from "./TransactionTime.ts"

type Of<K extends Token["kind"]> = Extract<Token, { kind: K }>
type TxnToken = Of<"txn">

/** Where the counterpart was read from. */
export type CounterpartSource = "label" | "sentence" | "arrow" | "position"

export interface Counterpart {
  readonly text: string
  readonly start: number
  readonly end: number
  readonly source: CounterpartSource
}

/** Which way the message's money moved, as far as its transaction words say. */
export type Movement =
  | { readonly kind: "none" }
  | { readonly kind: "in" }
  | { readonly kind: "out"; readonly reason: string }
  | { readonly kind: "several"; readonly amounts: ReadonlyArray<string> }

/** One understanding of a message, shared by the guard and the reader. */
export interface Reading {
  readonly text: string
  readonly tokens: ReadonlyArray<Token>
  readonly movement: Movement
  /** The amount the transaction word governs (digits), if one was found. */
  readonly amount: string | undefined
  /** The balance printed after `잔액` (digits; none when masked, `잔액 ****원`). */
  readonly balance: string | undefined
  readonly account: string | undefined
  readonly bank: string | undefined
  readonly timeText: string | undefined
  readonly counterpart: Counterpart | undefined
  /** Why no counterpart was chosen, when the positions left a doubt. */
  readonly counterpartDoubt: string | undefined
  /** Spans that are no transaction's words: headers, the account's own name, the counterpart, a title the body repeats. */
  readonly neutral: ReadonlyArray<readonly [number, number]>
}

// ---------------------------------------------------------------------------------------------
// Amounts governed by transaction words
// ---------------------------------------------------------------------------------------------

const isAmount = (t: Token): t is Of<"amount"> | Of<"number"> => t.kind === "amount" || t.kind === "number"

/** Tokens a transaction word reaches over to its amount (`[입금] 김도윤 45,000원`, `입금\n141,000`). */
const passable = new Set<Token["kind"]>(["word", "mark", "holder", "label", "notice", "bank", "tag", "header", "date", "time", "account"])

/** The amount a transaction word governs: after it (this line or the next), else before it on its line. */
const governedAmount = (tokens: ReadonlyArray<Token>, at: number, balances: ReadonlySet<Token>): Amount | undefined => {
  const txn = tokens[at]!
  let words = 0
  let passedLabel = false
  let passedField = false
  for (let i = at + 1; i < tokens.length; i++) {
    const t = tokens[i]!
    // This line or the next; one more when only a date, time or account lies between
    // (`입금\n09/02 08:00\n12,000원`), or one word alone (a memo: `입금 급여 2,500,000` with its spaces
    // as line breaks). Past a label, or two words, the next line only: a labelled field stands between.
    if (t.line > txn.line + (passedLabel || words > 1 ? 1 : 2)) break
    if (isAmount(t) && !balances.has(t)) {
      // A bare number is the amount only right after the word (KB: `입금\n141,000`, `FBS입금 1`).
      if (t.kind === "number" && passedField) break
      if (t.kind === "amount" && t.value === undefined) break
      return t
    }
    if (!passable.has(t.kind)) break
    if (t.kind === "word") words++
    if (t.kind === "label") passedLabel = true
    if (t.kind === "word" || t.kind === "date" || t.kind === "account") passedField = true
  }
  for (let i = at - 1; i >= 0; i--) {
    const t = tokens[i]!
    // `50,000원\n입금` too: the line before, when the word starts its line.
    if (t.line < txn.line - (tokens[at - 1]?.line === txn.line ? 0 : 1)) break
    if (t.kind === "amount" && t.value !== undefined && !balances.has(t)) return t
    if (t.kind !== "word" && t.kind !== "mark" && t.kind !== "holder" && t.kind !== "bank") break
  }
  return undefined
}

/** The balance after each `잔액` (the amount after it, past a `:`, on its line or the next). */
const readBalances = (tokens: ReadonlyArray<Token>): Map<Token, Amount> => {
  const balances = new Map<Token, Amount>()
  for (const [i, t] of tokens.entries()) {
    if (t.kind !== "balanceLabel") continue
    const value = tokens[i + 1]?.kind === "mark" ? tokens[i + 2] : tokens[i + 1]
    if (value !== undefined && isAmount(value) && value.line <= t.line + 1) balances.set(t, value)
  }
  return balances
}

// ---------------------------------------------------------------------------------------------
// Direction
// ---------------------------------------------------------------------------------------------

/** The role word of a sentence push on the line of `txn` (`홍길동님이 … 보냈어요`). */
const roleWordBefore = (tokens: ReadonlyArray<Token>, at: number): Of<"word"> | undefined => {
  // The sentence may run over lines (`홍길동님이\n50,000원을\n보냈어요`): back to the previous
  // transaction word or balance, whichever line it is on.
  for (let i = at - 1; i >= 0; i--) {
    const t = tokens[i]!
    if (t.kind === "txn" || t.kind === "balanceLabel") return undefined
    if (t.kind === "word" && t.role !== undefined) return t
  }
  return undefined
}

/**
 * Which way one transaction word moves money: `보냈어요` is in when someone sent it (`님이`), out
 * otherwise; `입금했어요` is out when it went to someone (`홍길동님께`, `홍길동님 계좌로`).
 */
const wayOf = (tokens: ReadonlyArray<Token>, at: number): { readonly way: "in" | "out" | "neutral"; readonly meaning: string } => {
  const word: TxnWord = (tokens[at] as TxnToken).word
  const role = roleOf(tokens, at)
  if (word.way === "send") return { way: role === "subject" || role === "from" ? "in" : "out", meaning: word.meaning }
  if (word.way === "receive") return { way: "in", meaning: word.meaning }
  if (word.way === "in" && role === "to") return { way: "out", meaning: "is money put into someone else's account" }
  return { way: word.way, meaning: word.meaning }
}

/** The role of the counterpart before a transaction word on its line; a name's account (`홍길동님 계좌로`) is `to`. */
const roleOf = (tokens: ReadonlyArray<Token>, at: number): Role | undefined => {
  const word = roleWordBefore(tokens, at)
  if (word !== undefined) return word.role
  for (let i = at - 1; i > 0 && tokens[i]!.line === tokens[at]!.line; i--) {
    const t = tokens[i]!
    if (t.kind === "accountName" && /(?:로|에)$/u.test(t.text) && tokens[i - 1]!.kind === "mark" && tokens[i - 1]!.text === "님") return "to"
  }
  return undefined
}

/** A first line made only of a transaction word (a push's title): `입금`, `송금`, `[입금]`, `입금 알림`. */
const titleOf = (tokens: ReadonlyArray<Token>): number | undefined => {
  const first = tokens.filter((t) => t.line === 0)
  if (tokens.every((t) => t.line === 0)) return undefined
  const txns = first.filter((t) => t.kind === "txn")
  if (txns.length !== 1 || !first.every((t) => t.kind === "txn" || t.kind === "header" || t.kind === "bank" || t.kind === "mark")) return undefined
  // Without a transaction word in the body, the first line's is the transaction's (`KB국민은행 입금\n…\n12,000원`).
  return tokens.some((t) => t.kind === "txn" && t.line > 0) ? tokens.indexOf(txns[0]!) : undefined
}

// ---------------------------------------------------------------------------------------------
// The counterpart
// ---------------------------------------------------------------------------------------------

interface Candidate {
  readonly first: number
  readonly last: number
}

/**
 * Name material: words, and a bank's name where a name stands (`토스 포인트`; 경남 is also a
 * person) — never a bank tag that starts a line before its fields (`농협 입금…`), nor an app's
 * name alone on the first line.
 */
const nameLike = (tokens: ReadonlyArray<Token>, i: number, used: ReadonlySet<Token>): boolean => {
  const t = tokens[i]!
  if (used.has(t)) return false
  if (t.kind === "word") return /[\p{L}\d]/u.test(t.text)
  if (t.kind === "number") return true
  if (t.kind !== "bank" || t.bracketed) return false
  const before = tokens[i - 1]
  const after = tokens[i + 1]
  if (before !== undefined && before.line === t.line) return true
  // Before every transaction word, a bank's name that starts a line is the bank's tag (`농협\n입금1원`:
  // `농협 입금1원` with its space a line break). After it, alone on its line, a footer or a name (the
  // score tells); before a word on its line, the start of a name (`토스 포인트`, `국민 공지영`).
  const firstTxn = tokens.findIndex((x) => x.kind === "txn")
  if (t.line === 0 || (firstTxn >= 0 && i < firstTxn)) return false
  return after === undefined || after.line !== t.line || after.kind === "word"
}

/** A bank's name alone on a line: a footer (`기업`, `케이뱅크`) more often than a person. */
const bankLine = (tokens: ReadonlyArray<Token>, c: Candidate): boolean => c.first === c.last && tokens[c.first]!.kind === "bank"

/** Runs of name material on one line, each a place a name could stand. */
const candidates = (tokens: ReadonlyArray<Token>, used: ReadonlySet<Token>): Array<Candidate> => {
  const found: Array<Candidate> = []
  let i = 0
  while (i < tokens.length) {
    if (!nameLike(tokens, i, used)) {
      i++
      continue
    }
    let last = i
    while (last + 1 < tokens.length && tokens[last + 1]!.line === tokens[i]!.line && nameLike(tokens, last + 1, used)) last++
    // Numbers at either end are no part of a name (`CMS 00012` keeps its number inside).
    let first = i
    while (first <= last && tokens[first]!.kind === "number") first++
    let end = last
    while (end >= first && tokens[end]!.kind === "number") end--
    if (first <= end) found.push({ first, last: end })
    i = last + 1
  }
  return found
}

// What lies between a name and the transaction without putting distance between them.
const transparent = new Set<Token["kind"]>(["date", "time", "account", "holder", "mark", "tag", "header", "accountName"])

/** How far a candidate stands from the transaction: the fields between them, fields of dates and accounts not counted. */
const distance = (tokens: ReadonlyArray<Token>, c: Candidate, anchors: ReadonlyArray<number>, balanceValues: ReadonlySet<Token>): number => {
  let best = Number.POSITIVE_INFINITY
  for (const anchor of anchors) {
    const [from, to] = anchor < c.first ? [anchor + 1, c.first] : [c.last + 1, anchor]
    let steps = 1
    for (let i = from; i < to; i++) {
      const t = tokens[i]!
      if (transparent.has(t.kind) || balanceValues.has(t)) continue
      steps++
    }
    best = Math.min(best, steps)
  }
  return best
}

/** A reference such as `coinpos365` or `an-coinup-11` (a memo an aggregator prints before the payer), not a person. */
const idLikeCandidate = (text: string, tokens: ReadonlyArray<Token>, c: Candidate): boolean =>
  isReference(text.slice(tokens[c.first]!.start, tokens[c.last]!.end))

const spanOf = (text: string, tokens: ReadonlyArray<Token>, c: Candidate, source: CounterpartSource): Counterpart => {
  const start = tokens[c.first]!.start
  const end = tokens[c.last]!.end
  return { text: cleanName(text.slice(start, end)), start, end, source }
}

/**
 * Another candidate that runs on from `chosen` with nothing between, on the line before or after,
 * where the two may be one name broken over two lines: two words of Latin letters (`KIM\nMINSU`:
 * names in Latin letters are printed with spaces, Korean names without, so a Hangul line after a
 * Hangul name is a memo, as in `새마을금 시명길\n아미`), or a bank's name on the line just before
 * (`토스\n포인트`, `국민\n공지영`: a remitting bank or the name's first word). No reader can tell
 * which, so a person does. A reference (`coinpos365\n지현주`) is no name and does not count.
 */
const runOnOf = (text: string, tokens: ReadonlyArray<Token>, found: ReadonlyArray<Candidate>, chosen: Candidate): Candidate | undefined => {
  const only = (c: Candidate, kind: Token["kind"]) => tokens.slice(c.first, c.last + 1).every((t) => t.kind === kind)
  const latin = (c: Candidate) => only(c, "word") && /^[A-Za-z][A-Za-z .'-]*$/u.test(text.slice(tokens[c.first]!.start, tokens[c.last]!.end))
  if (idLikeCandidate(text, tokens, chosen) || !only(chosen, "word")) return undefined
  return found.find((c) => {
    const line = tokens[c.first]!.line - tokens[chosen.first]!.line
    if (c === chosen || idLikeCandidate(text, tokens, c)) return false
    if (c.first === chosen.last + 1 && line === 1) return latin(c) && latin(chosen)
    if (c.last + 1 === chosen.first && line === -1) return (latin(c) && latin(chosen)) || bankLine(tokens, c)
    return false
  })
}

/**
 * What a name a template read runs on into (a word-only line before or after it, nothing between),
 * if anything: the same doubt as the reader's own (`runOnOf`), for a template's group that took
 * one line of a name broken over two.
 */
export const nameRunsOn = (reading: Reading, name: string): string | undefined => {
  const found = candidates(reading.tokens, new Set<Token>())
  const at = found.find((c) => spanOf(reading.text, reading.tokens, c, "position").text === name)
  const other = at === undefined ? undefined : runOnOf(reading.text, reading.tokens, found, at)
  return other === undefined ? undefined : spanOf(reading.text, reading.tokens, other, "position").text
}

/** A name as printed, without the brackets or marks around it (`(성시원)` → `성시원`, `홍길동)` → `홍길동`). */
const cleanName = (name: string): string => {
  const trimmed = name.replace(/^[\s:：,|·-]+|[\s:：,|·.]+$/gu, "")
  const bracketed = /^\(([^()]+)\)$/u.exec(trimmed)
  if (bracketed !== null) return bracketed[1]!
  return trimmed.endsWith(")") && !trimmed.includes("(") ? trimmed.slice(0, -1) : trimmed
}

/** The name after a payer label (`보낸분 홍길동`, `적요: 홍길동`, `적요\n홍길동`). */
const labelled = (tokens: ReadonlyArray<Token>, slot: LabelSlot, found: ReadonlyArray<Candidate>): Candidate | undefined => {
  for (const [i, t] of tokens.entries()) {
    if (t.kind !== "label" || t.slot !== slot) continue
    const next = found.find((c) => c.first > i && (tokens[c.first]!.line === t.line || tokens[c.first]!.line === t.line + 1))
    if (next !== undefined && tokens.slice(i + 1, next.first).every((x) => x.kind === "mark")) return next
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Reading one message
// ---------------------------------------------------------------------------------------------

interface Governing {
  readonly at: number
  readonly way: "in" | "out" | "neutral"
  readonly meaning: string
  readonly amount: Amount | undefined
}

type Amount = Of<"amount"> | Of<"number">

interface Arrow {
  readonly at: number
  readonly token: Of<"arrow">
  readonly way: "in" | "out"
}

/** Headers, the account's own name, labels (`출금계좌 1234` names the payer's account), a header line naming the bank (`케이뱅크 안내`). */
const neutralTokens = (tokens: ReadonlyArray<Token>): Array<readonly [number, number]> => {
  const neutral = tokens.filter((t) => t.kind === "header" || t.kind === "accountName" || t.kind === "label").map((t) => [t.start, t.end] as const)
  const firstLine = tokens.filter((t) => t.line === 0)
  const bankHeader = tokens.some((t) => t.line > 0) && firstLine.some((t) => t.kind === "bank") &&
    firstLine.every((t) => t.kind === "bank" || t.kind === "notice" && /^(?:안내|알림)$/u.test(t.text))
  return bankHeader ? [...neutral, ...firstLine.map((t) => [t.start, t.end] as const)] : neutral
}

/** An arrow and which way it moves money: into the holder's own account (`홍길동 → 내 토스뱅크 통장`, `입출금통장(7897) ← 김민수`) is in; any other is out. */
const arrowOf = (tokens: ReadonlyArray<Token>): Arrow | undefined => {
  const at = tokens.findIndex((t) => t.kind === "arrow")
  if (at < 0) return undefined
  const token = tokens[at] as Of<"arrow">
  const onLine = (t: Token) => t.line === token.line
  const all = token.left ? tokens.slice(0, at).reverse() : tokens.slice(at + 1)
  // An arrow alone on its line (`김신혁\n→\n내\n입출금통장`) points to the lines after it (before it for `←`).
  const sameLine = all.filter(onLine)
  const side = sameLine.length > 0 ? sameLine : all
  // The target ends at the next field (`→ 입출금통장(0000) 잔액 235,300원` on one line).
  const stop = side.findIndex((t) => t.kind === "amount" || t.kind === "txn" || t.kind === "balanceLabel" || t.kind === "date" || t.kind === "time")
  const target = stop < 0 ? side : side.slice(0, stop)
  const own = target.some((t) => t.kind === "accountName") &&
    target.every((t) => t.kind === "accountName" || t.kind === "bank" || t.kind === "mark" || t.kind === "account")
  return { at, token, way: own ? "in" : "out" }
}

/** Which way the money moved: any word of money out decides; a title must agree with its body; several amounts in are several transactions. */
const movementOf = (
  tokens: ReadonlyArray<Token>,
  governing: ReadonlyArray<Governing>,
  title: number | undefined,
  arrow: Arrow | undefined,
  balanceValues: ReadonlySet<Token>
): Movement => {
  const said = (at: number, meaning: string) => `"${tokens[at]!.text}" ${meaning}`
  const out = governing.find((g) => g.way === "out")
  if (out !== undefined) return { kind: "out", reason: said(out.at, out.meaning) }
  if (arrow?.way === "out") return { kind: "out", reason: "an arrow points from the account to someone" }
  const bodyIn = governing.some((g) => g.way === "in") || arrow?.way === "in"
  const titled = title === undefined ? undefined : { ...wayOf(tokens, title), send: (tokens[title] as TxnToken).word.way === "send" }
  // Toss titles its pushes `송금` both ways: that title says nothing the body does not.
  if (titled?.way === "out" && (!titled.send || !bodyIn)) return { kind: "out", reason: `${bodyIn ? "the title " : ""}${said(title!, titled.meaning)}` }
  if (!bodyIn) return titled?.way === "in" ? { kind: "in" } : { kind: "none" }
  // A title or a first line repeated in the body is one transaction (`입금 1,000원 … 전자금융입금 1,000`);
  // a title with an amount of its own that the body does not repeat is another (`입금\n10,000원\n입금\n20,000원`).
  const titleAmount = titled?.way === "in" ? governedAmount(tokens, title!, balanceValues)?.value : undefined
  const amounts = new Set(governing.flatMap((g) => g.way === "in" && g.amount?.value !== undefined ? [g.amount.value] : []))
  if (titleAmount !== undefined && amounts.size > 0) amounts.add(titleAmount)
  return amounts.size > 1 ? { kind: "several", amounts: [...amounts] } : { kind: "in" }
}

/** The amount the transaction governs; with an arrow, the one on its line or the lines around it (`입금 50,000원\n홍길동 → 내 통장`). */
const amountOf = (tokens: ReadonlyArray<Token>, governing: ReadonlyArray<Governing>, direction: Direction, arrow: Arrow | undefined, balanceValues: ReadonlySet<Token>): Amount | undefined => {
  const main = governing.find((g) => g.way === direction && g.amount !== undefined)
  if (main !== undefined || arrow?.way !== direction) return main?.amount
  const line = arrow.token.line
  const amounts = tokens.filter((t): t is Of<"amount"> => t.kind === "amount" && t.value !== undefined && !balanceValues.has(t))
  return amounts.find((t) => t.line === line) ?? amounts.find((t) => t.line === line + 1) ?? amounts.find((t) => t.line === line - 1)
}

interface CounterpartRead {
  readonly counterpart?: Counterpart
  readonly doubt?: string
}

/** The counterpart: labelled, named in a sentence, where an arrow starts or points, else the nearest free words. */
const counterpartOf = (
  text: string,
  tokens: ReadonlyArray<Token>,
  direction: Direction,
  amount: Amount,
  governing: ReadonlyArray<Governing>,
  arrow: Arrow | undefined,
  balanceValues: ReadonlySet<Token>
): CounterpartRead => {
  const found = candidates(tokens, new Set<Token>([amount, ...balanceValues]))
  const byLabel = labelled(tokens, direction === "in" ? "payer" : "recipient", found)
  if (byLabel !== undefined) return { counterpart: spanOf(text, tokens, byLabel, "label") }
  const received = governing.some((g) => (tokens[g.at] as TxnToken).word.way === "receive")
  const roleWord = tokens.find((t): t is Of<"word"> =>
    t.kind === "word" && t.role !== undefined && (direction === "in" ? t.role !== "to" || received : t.role === "to")
  )
  if (roleWord !== undefined) return { counterpart: { text: roleWord.text, start: roleWord.start, end: roleWord.end, source: "sentence" } }
  if (arrow !== undefined && arrow.way === direction) {
    // The payer stands where the arrow starts, the payee where it points.
    const before = direction === "in" !== arrow.token.left
    const onSide = found.filter((c) => before ? c.last < arrow.at : c.first > arrow.at)
    const sameLine = onSide.filter((c) => tokens[c.first]!.line === arrow.token.line)
    // Nothing on the arrow's line (`김신혁\n→ 내 입출금통장`): the words on the nearest line that side.
    const side = sameLine.length > 0 ? sameLine : onSide
    const nearest = before ? side.at(-1) : side[0]
    if (nearest === undefined) return {}
    const runOn = runOnOf(text, tokens, found, nearest)
    if (runOn === undefined) return { counterpart: spanOf(text, tokens, nearest, "arrow") }
    const [a, b] = [nearest, runOn].map((c) => JSON.stringify(spanOf(text, tokens, c, "arrow").text))
    return { doubt: `two places that could hold the payer's name: ${a} and ${b}` }
  }
  const anchors = governing.filter((g) => g.way === direction).flatMap((g) => g.amount === undefined ? [g.at] : [g.at, tokens.indexOf(g.amount)])
  const plain = (c: Candidate) => !idLikeCandidate(text, tokens, c) && !bankLine(tokens, c)
  const scored = found
    .filter((c) => c.last - c.first < 4)
    .map((c) => ({ c, d: distance(tokens, c, anchors, balanceValues) + (plain(c) ? 0 : 1.5) }))
    .sort((a, b) => a.d - b.d)
  const [best, next] = scored
  if (best === undefined) return {}
  const doubt = (other: Candidate) =>
    `two places that could hold the payer's name: ${JSON.stringify(spanOf(text, tokens, best.c, "position").text)} and ${
      JSON.stringify(spanOf(text, tokens, other, "position").text)
    }`
  if (next !== undefined && next.d <= best.d) return { doubt: doubt(next.c) }
  const runOn = runOnOf(text, tokens, found, best.c)
  return runOn === undefined ? { counterpart: spanOf(text, tokens, best.c, "position") } : { doubt: doubt(runOn) }
}

/** Reads a message in the form `normalizeSmsText` gives it. */
export const readSms = (text: string): Reading => {
  const tokens = tokenize(text)
  const balances = readBalances(tokens)
  const balanceValues = new Set<Token>(balances.values())
  const neutral = neutralTokens(tokens)

  const title = titleOf(tokens)
  // `금액: 7,700원`, `거래금액: 7700`: a labelled amount (its label makes bare digits one) belongs to the
  // transaction word when nothing stands next to it.
  const labelAt = tokens.findIndex((t) => t.kind === "label" && t.slot === "amount")
  const labelledAmount = labelAt < 0 ? undefined : tokens.slice(labelAt + 1, labelAt + 3).find((t): t is Amount => isAmount(t) && t.value !== undefined)
  const governing: Array<Governing> = []
  for (const [i, t] of tokens.entries()) {
    if (t.kind !== "txn" || i === title) continue
    governing.push({ at: i, ...wayOf(tokens, i), amount: governedAmount(tokens, i, balanceValues) ?? labelledAmount })
  }
  const arrow = arrowOf(tokens)
  const movement = movementOf(tokens, governing, title, arrow, balanceValues)
  if (title !== undefined && movement.kind === "in") neutral.push([tokens[title]!.start, tokens[title]!.end])
  // Sentence pushes: `홍길동님이 보낸 50,000원이 입금됐어요` — sent by the payer is no money sent.
  for (const g of governing) {
    if (g.way === "in" && (tokens[g.at] as TxnToken).word.way === "send") neutral.push([tokens[g.at]!.start, tokens[g.at]!.end])
  }

  const direction: Direction | undefined = movement.kind === "in" ? "in" : movement.kind === "out" ? "out" : undefined
  const amount = direction === undefined ? undefined : amountOf(tokens, governing, direction, arrow, balanceValues)
  const read = direction === undefined || amount === undefined ? {} : counterpartOf(text, tokens, direction, amount, governing, arrow, balanceValues)
  if (read.counterpart !== undefined) neutral.push([read.counterpart.start, read.counterpart.end])

  // The balance, account, bank and time printed.
  const balance = [...balances.values()][0]
  const account = tokens.find((t) => t.kind === "account" && !t.text.startsWith("(")) ?? tokens.find((t) => t.kind === "account")
  // The bank's tag: bracketed, else a bank's name that starts a line (`농협 입금…`, `우리 07/20 …`).
  const bank = tokens.find((t): t is Of<"bank"> => t.kind === "bank" && t.bracketed) ??
    tokens.find((t, i): t is Of<"bank"> => t.kind === "bank" && (i === 0 || tokens[i - 1]!.line !== t.line || tokens[i - 1]!.kind === "header"))
  return {
    text,
    tokens,
    movement,
    amount: amount?.value,
    balance: balance?.value,
    account: account?.text.replace(/^[[(]|[\])]$/gu, ""),
    bank: bank?.bank,
    timeText: timeTextOf(text, tokens),
    counterpart: read.counterpart,
    counterpartDoubt: read.doubt,
    neutral
  }
}

// ---------------------------------------------------------------------------------------------
// Facts of a transaction message
// ---------------------------------------------------------------------------------------------

/** What a transaction message says, deposits and outgoing money alike (for balance continuity). */
export interface TransactionFacts {
  readonly direction: Direction
  readonly amount?: string
  readonly balance?: string
  readonly account?: string
  readonly bank?: string
  readonly time_text?: string
  readonly counterpart?: string
}

/** The facts of a reading whose direction is known. */
export const factsOf = (reading: Reading, direction: Direction): TransactionFacts => ({
  direction,
  ...(reading.amount === undefined ? {} : { amount: reading.amount }),
  ...(reading.balance === undefined ? {} : { balance: reading.balance }),
  ...(reading.account === undefined ? {} : { account: reading.account }),
  ...(reading.bank === undefined ? {} : { bank: reading.bank }),
  ...(reading.timeText === undefined ? {} : { time_text: reading.timeText }),
  ...(reading.counterpart === undefined ? {} : { counterpart: reading.counterpart.text })
})
