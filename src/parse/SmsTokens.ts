// A bank message as typed tokens (DESIGN section 6, the built-in reader): amounts, balances,
// dates, times, masked accounts, bank tags, transaction words, masked holders, labels, account
// names, headers and the free words between them (name candidates). Pure and fast; the reader
// (SmsReader.ts) reads the transaction from these tokens and the guard (DepositGuard.ts) judges it.
//
// The one rule that matters most: a word is a keyword only when the whole chunk is one (`송금`,
// `입금예정`, `체크카드출금`, `출금780,500원`); a keyword inside a longer word (`송금희`, `서예정`,
// `공지영`, `이승인`) leaves it a word, so a payer's name is never read as a transaction.

import {
  accountNameChunk,
  askedTxnChunk,
  bankAliases,
  cores,
  fillerChunk,
  headerBracket,
  headerChunk,
  labels,
  noticeChunk,
  sentenceEnd,
  txnEndings,
  typePrefixes
} from "./Vocabulary.ts"

/** How money moves for the account holder. */
export type Direction = "in" | "out"

/** A transaction word: which way, and what it means (said after the word when it is not a deposit). */
export interface TxnWord {
  /**
   * `in`: 입금 (out when it went to someone: `홍길동님께 입금했어요`); `receive`: 받았어요 (in, from
   * whomever); `out`: 출금 and the like; `send`: 보냈어요/송금 (in when someone sent it: `님이`);
   * `neutral`: 이체 alone.
   */
  readonly way: "in" | "receive" | "out" | "send" | "neutral"
  /** `is money out of the account (a withdrawal)`: the rest of a sentence that starts with the word. */
  readonly meaning: string
}

/** A label before its value (`보낸분 홍길동`, `적요: 홍길동`, `일시 …`). */
export type LabelSlot = "payer" | "recipient" | "amount" | "fee" | "time" | "account" | "kind"

/** The particle after a name: `홍길동님이` (subject: who sent), `홍길동님께` (to), `홍길동님에게서` (from). */
export type Role = "subject" | "to" | "from"

interface Span {
  readonly text: string
  /** Offsets in the text given to {@link tokenize}. */
  readonly start: number
  readonly end: number
  readonly line: number
}

export type Token =
  | Span & { readonly kind: "bank"; readonly bank: string; readonly bracketed: boolean }
  | Span & { readonly kind: "header" }
  | Span & { readonly kind: "date" | "time" | "account" | "holder" | "tag" | "mark" }
  /** `→` points from the payer to the payee; `←` from the payee back to the payer. */
  | Span & { readonly kind: "arrow"; readonly left: boolean }
  | Span & { readonly kind: "amount"; readonly value: string | undefined; readonly won: boolean }
  | Span & { readonly kind: "number"; readonly value: string }
  | Span & { readonly kind: "balanceLabel" }
  | Span & { readonly kind: "txn"; readonly word: TxnWord; readonly bracketed: boolean }
  | Span & { readonly kind: "label"; readonly slot: LabelSlot }
  | Span & { readonly kind: "accountName" }
  | Span & { readonly kind: "notice" }
  | Span & { readonly kind: "word"; readonly role: Role | undefined }

// ---------------------------------------------------------------------------------------------
// The vocabulary (Vocabulary.ts) as lookups and patterns
// ---------------------------------------------------------------------------------------------

const typePrefix = `(?:${typePrefixes.join("|")})`
const txnEnding = `(?:${txnEndings.join("|")})*[.!]?`

const bankByAlias = new Map<string, string>(
  bankAliases.flatMap(([bank, aliases]) => aliases.map((alias) => [alias.toLowerCase(), bank] as const))
)
/**
 * A reference such as `coinpos365`, `an-coinup-11` or `otp8887`: Latin letters with digits, as an
 * aggregator prints before the payer. Before a name on its line it is no part of the name; alone,
 * it may be the payer (the reader scores it lower than a name).
 */
export const isReference = (text: string): boolean => /^[A-Za-z][A-Za-z0-9_-]*\d[A-Za-z0-9_-]*$/u.test(text)

/** The bank a chunk names (`[KB]`, `농협`, `KB국민은행`), if any. */
export const bankOf = (text: string): string | undefined => bankByAlias.get(text.replace(/\s+/gu, "").toLowerCase())

const coreAlternation = cores.map((c) => c.pattern).join("|")
const txnChunk = new RegExp(String.raw`^${typePrefix}*(?:${coreAlternation})(?:(?:${coreAlternation})|${txnEnding})*$`, "iu")
/** A chunk whose letters end in a transaction word glued to digits (`송선한전자금융입금100`, `한국전력지로출금18,000`). */
const txnTail = new RegExp(String.raw`${typePrefix}*(?:입금|출금|지급)$`, "u")
/** A chunk ending in a transaction word with a known kind before it (`과일놀이터체크카드출금`). */
const typedTxnTail = new RegExp(String.raw`${typePrefix}+(?:입금|출금|지급)$`, "u")

// One group per core, so a match says which core it was (`이체` before `완료` is not `이체` alone).
const coreSearch = new RegExp(cores.map((c) => `(${c.pattern})`).join("|"), "gu")

/** The transaction word a whole chunk is, if it is one: its last core with a direction decides. */
const wordOf = (chunk: string): TxnWord | undefined => {
  if (!txnChunk.test(chunk)) return undefined
  let last: TxnWord | undefined
  for (const m of chunk.matchAll(coreSearch)) {
    const core = cores[m.slice(1).findIndex((group) => group !== undefined)]!
    // `입금취소`: a cancellation whatever came before; `입금이체`: 이체 says no way of its own.
    if (last?.meaning === cancellation.meaning) continue
    if (core.word.way === "neutral" && last !== undefined) continue
    last = core.word
  }
  return last
}
const cancellation = cores.find((c) => c.pattern === "취소")!.word

const labelOf = (chunk: string): LabelSlot | undefined => labels.find(([pattern]) => pattern.test(chunk))?.[1]

/** What a chunk of letters is, read whole. */
type LettersRead =
  | { readonly kind: "txn"; readonly word: TxnWord }
  | { readonly kind: "label"; readonly slot: LabelSlot }
  | { readonly kind: "bank"; readonly bank: string }
  | { readonly kind: "word" | "notice" | "accountName" | "header" | "holder" | "mark" }

const classifyLetters = (chunk: string): LettersRead => {
  if (/\*/u.test(chunk) && /[가-힣A-Za-z]/u.test(chunk)) return { kind: "holder" }
  const bank = bankOf(chunk)
  if (bank !== undefined) return { kind: "bank", bank }
  if (askedTxnChunk.test(chunk)) return { kind: "notice" }
  const word = wordOf(chunk)
  if (word !== undefined) return { kind: "txn", word }
  const slot = labelOf(chunk.replace(/^\(|[:：)]$/gu, ""))
  if (slot !== undefined) return { kind: "label", slot }
  if (headerChunk.test(chunk)) return { kind: "header" }
  // `완료`, `도착했어요`, `확인하세요`: words of a sentence, no name ends so.
  if (fillerChunk.test(chunk) || sentenceEnd.test(chunk)) return { kind: "mark" }
  if (noticeChunk.test(chunk)) return { kind: "notice" }
  if (accountNameChunk.test(chunk)) return { kind: "accountName" }
  return { kind: "word" }
}

// `홍길동님이`, `김철수님께`, `홍길동님에게서`, and without 님 the particles no name ends in
// (`홍길동에게`, `홍길동으로부터`); `고객님` is nobody in particular.
const honorific = /^(.+?)(?:님(이|께서|께|에게|에게서|한테|한테서|으로부터|의)?|(께서|에게|에게서|한테|한테서|으로부터|로부터))$/u
/** `님께` standing alone after a name (`홍길동 님께`); `앞` (addressed to: `홍길동님 앞`). */
const loneHonorific = /^(?:님(이|께서|께|에게|에게서|한테|한테서|으로부터)?|(앞|앞으로))$/u
const roleOf = (particle: string | undefined): Role | undefined =>
  particle === undefined || particle === "의" ? undefined
    : particle === "이" || particle === "께서" ? "subject"
    : particle === "께" || particle === "에게" || particle === "한테" ? "to"
    : "from"

// ---------------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------------

const numberPatterns: ReadonlyArray<readonly [RegExp, "date" | "time" | "account" | "amount" | "masked"]> = [
  [/\d{4}[./-]\d{1,2}[./-]\d{1,2}\.?/y, "date"],
  [/\d{1,2}:\d{2}(?::\d{2})?(?:\.\d{1,3})?/y, "time"],
  // A 2-digit year (`26/08/10`), month and day checked, no digit after.
  [/\d{2}[./](?:0?[1-9]|1[0-2])[./](?:0?[1-9]|[12]\d|3[01])(?![\d*#])/y, "date"],
  [/(?:0?[1-9]|1[0-2])[/.](?:0?[1-9]|[12]\d|3[01])(?![\d*#]|\.\d|,\d{3})/y, "date"],
  [/\d{1,2}월\d{1,2}일/y, "date"],
  // Masked (`352-****-4273-63`, `942902**347`, `*120000`, `####946`) or grouped by dashes (`110-496-922482`).
  [/(?=[\d*#-]*\d[\d*#-]*\d)[\d*#]*[*#][\d*#]*(?:-[\d*#]+)*|\d+(?:-[\d*#]+){2,}|\d{3,}-[\d*#]{4,}/y, "account"],
  // `50,000원이 입금됐어요`: a particle after 원, but not the first syllable of a name run into it (`1원은김김`).
  [/(?:\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+)(?: ?원(?:(?:이|을|은|의|에)(?![가-힣]))?)?/y, "amount"],
  [/\*{2,}(?:,\*{3})*(?: ?원)|\*,\*{3}(?:,\*{3})*(?: ?원)/y, "masked"]
]

const digitsOf = (text: string): string => text.replace(/[^\d.]/gu, "").replace(/^0+(?=\d)/u, "")

// ---------------------------------------------------------------------------------------------
// The tokenizer
// ---------------------------------------------------------------------------------------------

const marks = /[:：|·•,，/~]/u
const arrows = /→|->|➡|⇒|▶|=>|←|<-|⬅|⇐|◀|<=/y
const balanceWord = /(?:거래\s?후\s?)?(?:잔액|잔고)(?:\s?[:：])?/y
// A bracketed group on a line (`[KB]`, `<새마을금고>`, `(KDB)`, `[Web발신]`, `[우리은행 알림]`).
const bracketGroup = /[[<【［]([^\]>】］\n]{1,24})[\]>】］]|\(([^()\n]{1,24})\)/gu

/**
 * The tokens of a text as `normalizeSmsText` gives it (lines trimmed, runs of spaces made one).
 * Every character belongs to at most one token; white space to none.
 */
export const tokenize = (text: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let lineStart = 0
  // Lines are counted without the blank ones: an empty line puts no distance between two fields
  // (`입금 급여  2,500,000` with its spaces as line breaks reads as it does on one line).
  let line = 0
  for (const content of text.split("\n")) {
    if (content.trim() !== "") {
      tokenizeLine(content, lineStart, line, tokens)
      line++
    }
    lineStart += content.length + 1
  }
  return tokens
}

const tokenizeLine = (content: string, offset: number, line: number, out: Array<Token>): void => {
  // Bracketed groups first: they may hold spaces, and they bound what is around them.
  let at = 0
  for (const m of content.matchAll(bracketGroup)) {
    const inner = (m[1] ?? m[2] ?? "").trim()
    const bracketed = classifyBracket(inner, m[2] !== undefined, m[0], offset + m.index, line)
    if (bracketed === undefined) continue
    tokenizeChunks(content.slice(at, m.index), offset + at, line, out)
    if (bracketed === "inner") tokenizeChunks(m[0].slice(1, -1), offset + m.index + 1, line, out)
    else out.push(bracketed)
    at = m.index + m[0].length
  }
  tokenizeChunks(content.slice(at), offset + at, line, out)
}

/** A bracketed group as one token, its content read as chunks (`(잔액419,500)`), or no group at all (`(주)`). */
const classifyBracket = (inner: string, round: boolean, text: string, start: number, line: number): Token | "inner" | undefined => {
  const span = { text, start, end: start + text.length, line }
  if (headerBracket.test(inner)) return { ...span, kind: "header" }
  const bank = bankOf(inner)
  if (bank !== undefined) return { ...span, kind: "bank", bank, bracketed: true }
  if (/^\d{2,6}$/u.test(inner) || /^[\d*#-]+$/u.test(inner) && /\d.*[*#-].*\d|[*#]/u.test(inner)) return { ...span, kind: "account" }
  const word = wordOf(inner)
  if (word !== undefined) return { ...span, kind: "txn", word, bracketed: true }
  if (/^(?:잔액|잔고)/u.test(inner)) return "inner"
  if (/^(?:광고|알림|공지|안내)$/u.test(inner)) return { ...span, kind: "notice" }
  // `[우리은행 알림]`, `[KB국민 안내]`: a header naming the bank.
  const titled = /^(.+?)\s*(?:알림|안내|입출금알림|거래알림)$/u.exec(inner)
  const titledBank = titled === null ? undefined : bankOf(titled[1]!)
  if (titledBank !== undefined) return { ...span, kind: "bank", bank: titledBank, bracketed: true }
  if (!round) return { ...span, kind: "tag" }
  // `(성시원)`: a name in brackets; `(주)`, `(유)`: part of the name they start.
  if (/^[주유사재합]$/u.test(inner) || !/^[가-힣A-Za-z][가-힣A-Za-z .&·]*$/u.test(inner)) return undefined
  return { ...span, kind: "word", role: undefined }
}

const tokenizeChunks = (part: string, offset: number, line: number, out: Array<Token>): void => {
  for (const m of part.matchAll(/\S+/gu)) {
    const previous = out.at(-1)
    // `50,000 원`: the currency as a chunk of its own belongs to the amount before it.
    if (m[0] === "원" && previous !== undefined && previous.line === line && (previous.kind === "amount" || previous.kind === "number")) {
      out[out.length - 1] = { ...previous, kind: "amount", value: previous.value, won: true, text: `${previous.text} ${m[0]}`, end: offset + m.index + m[0].length }
      continue
    }
    tokenizeChunk(m[0], offset + m.index, line, out)
  }
}

/** One white-space-free chunk: its structural pieces, and the letters between them read whole. */
const tokenizeChunk = (chunk: string, offset: number, line: number, out: Array<Token>): void => {
  let wordStart = -1
  let i = 0
  const span = (from: number, to: number) => ({ text: chunk.slice(from, to), start: offset + from, end: offset + to, line })
  const flush = (end: number, gluedDigits: boolean) => {
    if (wordStart < 0) return
    pushLetters(chunk.slice(wordStart, end), offset + wordStart, line, gluedDigits, out)
    wordStart = -1
  }
  while (i < chunk.length) {
    const c = chunk[i]!
    // Digits: structural after a keyword or a bank, or when they read as a date, time, account or
    // an amount; glued to a name they are the name's (`홍길동1234`, `otp8887`, `AZIZ4821`).
    if (/[\d*#]/u.test(c)) {
      const pending = wordStart >= 0 ? chunk.slice(wordStart, i) : undefined
      const numeric = readNumber(chunk, i)
      // `088-조휘서(`: a bank code glued to a name is the name's.
      const codeOfName = numeric?.kind === "amount" && /^-[가-힣A-Za-z]/u.test(chunk.slice(i + numeric.text.length))
      if (numeric !== undefined && !codeOfName && (pending === undefined || structuralAfter(pending, numeric))) {
        flush(i, true)
        out.push(numericToken(numeric, span(i, i + numeric.text.length)))
        i += numeric.text.length
        continue
      }
    }
    // Arrows and 잔액 end whatever runs into them: 잔액 is never part of a name (`입금.잔액1,000원`).
    if (wordStart < 0 || /[잔>→=<←-]/u.test(c)) {
      arrows.lastIndex = i
      const arrow = arrows.exec(chunk)
      if (arrow !== null) {
        flush(i, false)
        out.push({ ...span(i, i + arrow[0].length), kind: "arrow", left: /[←⬅⇐◀<]/u.test(arrow[0]) })
        i += arrow[0].length
        continue
      }
      balanceWord.lastIndex = i
      const balance = balanceWord.exec(chunk)
      if (balance !== null) {
        flush(i, false)
        out.push({ ...span(i, i + balance[0].length), kind: "balanceLabel" })
        i += balance[0].length
        continue
      }
    }
    // Separators between fields (`제주:진경훈`, `하나,08/07,`, `|`).
    if (marks.test(c) && (c !== "," || wordStart < 0 || /\d/u.test(chunk[i + 1] ?? "") || i === chunk.length - 1)) {
      flush(i, false)
      out.push({ ...span(i, i + 1), kind: "mark" })
      i++
      continue
    }
    if (wordStart < 0) wordStart = i
    i++
  }
  flush(chunk.length, false)
}

interface NumberRead {
  readonly kind: "date" | "time" | "account" | "amount" | "masked"
  readonly text: string
}

const readNumber = (chunk: string, at: number): NumberRead | undefined => {
  for (const [pattern, kind] of numberPatterns) {
    pattern.lastIndex = at
    const m = pattern.exec(chunk)
    if (m !== null && m[0] !== "") return { kind, text: m[0] }
  }
  return undefined
}

/** Whether digits right after `letters` (no space) are a field of their own rather than part of a name. */
const structuralAfter = (letters: string, numeric: NumberRead): boolean =>
  classifyLetters(letters).kind !== "word" || txnTail.test(letters) || numeric.kind !== "amount" || /,\d{3}|원/u.test(numeric.text)

const numericToken = (numeric: NumberRead, span: Span): Token => {
  switch (numeric.kind) {
    case "date":
    case "time":
    case "account":
      return { ...span, kind: numeric.kind }
    case "masked":
      return { ...span, kind: "amount", value: undefined, won: true }
    case "amount": {
      const won = /원/u.test(numeric.text)
      const value = digitsOf(numeric.text)
      if (!won && !numeric.text.includes(",")) {
        // Long runs of digits without separators are account numbers or references.
        return value.length >= 11 ? { ...span, kind: "account" } : { ...span, kind: "number", value }
      }
      return { ...span, kind: "amount", value, won }
    }
  }
}

/** Letters between structural pieces: a keyword read whole, a name with its particle, or a word. */
const pushLetters = (letters: string, start: number, line: number, gluedDigits: boolean, out: Array<Token>): void => {
  const span = (from: number, to: number) => ({ text: letters.slice(from, to), start: start + from, end: start + to, line })
  const read = classifyLetters(letters)
  if (read.kind !== "word") {
    out.push(tokenOf(read, span(0, letters.length)))
    return
  }
  // A bank, or a bracketed name, glued to the word after it: `신한은행입금`, `(성시원)입금.`
  for (const cut of cutsOf(letters)) {
    const before = classifyLetters(letters.slice(0, cut))
    const after = classifyLetters(letters.slice(cut))
    if (after.kind !== "word" && after.kind !== "holder" && (before.kind === "bank" || letters[cut - 1] === ")")) {
      pushLetters(letters.slice(0, cut), start, line, false, out)
      out.push(tokenOf(after, span(cut, letters.length)))
      return
    }
  }
  // A name glued to its transaction word: `송선한전자금융입금100` (digits follow), `과일놀이터체크카드출금`.
  const tail = gluedDigits ? txnTail.exec(letters) : typedTxnTail.exec(letters)
  if (tail !== null && tail.index > 0) {
    pushLetters(letters.slice(0, tail.index), start, line, false, out)
    out.push(tokenOf(classifyLetters(tail[0]), span(tail.index, letters.length)))
    return
  }
  const named = honorific.exec(letters)
  if (named !== null && named[1] !== "고객" && !/\*/u.test(named[1]!)) {
    out.push({ ...span(0, named[1]!.length), kind: "word", role: roleOf(named[2] ?? named[3]) })
    out.push({ ...span(named[1]!.length, letters.length), kind: "mark" })
    return
  }
  const lone = loneHonorific.exec(letters)
  // The name it follows: the word before, or the word before its `님` (`홍길동님 앞`).
  const at = out.at(-1)?.kind === "mark" && out.at(-1)!.text.startsWith("님") ? out.length - 2 : out.length - 1
  const name = out[at]
  if (lone !== null && name?.kind === "word" && name.line === line) {
    out[at] = { ...name, role: lone[2] === undefined ? roleOf(lone[1]) : "to" }
    out.push({ ...span(0, letters.length), kind: "mark" })
    return
  }
  out.push({ ...span(0, letters.length), kind: "word", role: undefined })
}

// A bank's full name at the start of a run of letters (`신한은행입금`, `KB입금`); a two-syllable
// name may start a person's name (제주출금), so it never splits one.
const bankPrefix = new RegExp(
  `^(?:${[...bankByAlias.keys()].filter((alias) => !/^[가-힣]{1,2}$/u.test(alias)).sort((a, b) => b.length - a.length).join("|")})`,
  "iu"
)

/** Where a run of letters may split in two: after a bank's name at its start, after its last `)`. */
const cutsOf = (letters: string): ReadonlyArray<number> => {
  const cuts: Array<number> = []
  const bank = bankPrefix.exec(letters)
  if (bank !== null && bank[0].length < letters.length) cuts.push(bank[0].length)
  const bracket = letters.lastIndexOf(")")
  if (bracket > 0 && bracket < letters.length - 1) cuts.push(bracket + 1)
  return cuts
}

const tokenOf = (read: LettersRead, span: Span): Token => {
  switch (read.kind) {
    case "txn":
      return { ...span, kind: "txn", word: read.word, bracketed: false }
    case "label":
      return { ...span, kind: "label", slot: read.slot }
    case "bank":
      return { ...span, kind: "bank", bank: read.bank, bracketed: false }
    case "word":
      return { ...span, kind: "word", role: undefined }
    default:
      return { ...span, kind: read.kind }
  }
}
