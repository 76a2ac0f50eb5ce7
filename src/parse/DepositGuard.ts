// The never-a-deposit guard (DESIGN section 6): decides, before any template is tried (built-in,
// operator or AI), whether a message can be a deposit at all. It judges the transaction, not words
// anywhere: the reader (SmsReader.ts) finds the transaction words and the amount each governs, and
// sets aside what is no transaction's word — notification headers (`입출금 알림`), the account's
// own name (`입출금통장`, `모임통장(7710)`), a title the body repeats, and the counterpart's name
// (서예정, 공지영, 송금희 are people). Then outgoing money (출금, 지급, 이체출금, 체크카드출금,
// 자동이체, card approvals, transfers and arrows to someone) and messages that are no transaction
// (OTPs, notices, advertisements, 입금 예정, unfilled templates, several transactions at once) are
// never deposits, whatever a template would read from them: a withdrawal read as a deposit would
// credit money that never arrived. When in doubt it says "not a deposit": a real deposit refused
// here waits for an operator (the console lists it with this reason), a withdrawal let through
// could pay out.
//
// This is the only classifier: the parse loop asks it first, and template validation asks it
// about the sample. `NonDeposits.ts` holds the messages it is tested against.
import { cardUse, type Marker, noTransaction, outgoing, payApp, payAppSent, unfilled } from "./Vocabulary.ts"
import { factsOf, type Reading, readSms, type TransactionFacts } from "./SmsReader.ts"

/** What the guard made of a message (read in the form of `normalizeSmsText`). */
export type Verdict =
  | { readonly kind: "deposit" }
  | { readonly kind: "outgoing"; readonly reason: string }
  | { readonly kind: "no_transaction"; readonly reason: string }

/** The text with the reading's neutral spans (headers, account names, the counterpart…) blanked out. */
const residualOf = (reading: Reading): string => {
  let residual = reading.text
  for (const [start, end] of reading.neutral) residual = `${residual.slice(0, start)}${"¦".repeat(end - start)}${residual.slice(end)}`
  return residual
}

/** The first marker found, as a sentence: `"출금" is money out of the account (a withdrawal)`. */
const found = (markers: ReadonlyArray<Marker>, text: string): string | undefined => {
  for (const marker of markers) {
    const m = marker.pattern.exec(text)
    if (m !== null) return `"${m[0].replace(/^[^가-힣A-Za-z]+/u, "")}" ${marker.meaning}`
  }
  return undefined
}

/** The verdict on a message already read. */
export const judge = (reading: Reading): Verdict => {
  const placeholder = unfilled.exec(reading.text)
  if (placeholder !== null) return { kind: "no_transaction", reason: `an unfilled message template ("${placeholder[0]}")` }
  if (reading.movement.kind === "out") return { kind: "outgoing", reason: reading.movement.reason }
  const residual = residualOf(reading)
  const compact = residual.replace(/\s+/gu, "")
  const app = payApp.exec(residual)
  if (app !== null && payAppSent.test(reading.text) && !/입금(?!요청|예정|대기)/u.test(compact)) {
    return { kind: "no_transaction", reason: `"${app[0]}" is a pay app's notice of money sent to the holder, held in the app (not a deposit into the account)` }
  }
  const out = found(outgoing, compact) ?? found([cardUse], residual)
  if (out !== undefined) return { kind: "outgoing", reason: out }
  const none = found(noTransaction, compact)
  if (none !== undefined) return { kind: "no_transaction", reason: none }
  if (reading.movement.kind === "none") return { kind: "no_transaction", reason: "no deposit word (입금) in the message" }
  if (reading.movement.kind === "several") {
    return { kind: "no_transaction", reason: `several transactions in one message (${reading.movement.amounts.join(" and ")} won)` }
  }
  return { kind: "deposit" }
}

/** Whether a message (in the form of `normalizeSmsText`) can be a deposit; templates are tried only when it says `deposit`. */
export const classifyTransaction = (text: string): Verdict => judge(readSms(text))

/** The verdict for people: `outgoing money: "출금" is money out of the account (a withdrawal)`. */
export const describeVerdict = (verdict: Verdict): string =>
  verdict.kind === "deposit" ? "a deposit" : `${verdict.kind === "outgoing" ? "outgoing money" : "not a transaction"}: ${verdict.reason}`

/**
 * What a transaction message says, deposits and outgoing money alike (direction, amount, balance,
 * account as shown, bank, time): `undefined` when the message is no transaction (a notice, an OTP).
 */
export const readTransaction = (text: string): TransactionFacts | undefined => {
  const reading = readSms(text)
  const verdict = judge(reading)
  return verdict.kind === "no_transaction" ? undefined : factsOf(reading, verdict.kind === "deposit" ? "in" : "out")
}
