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
import { factsOf, type Reading, readSms, type TransactionFacts } from "./SmsReader.ts"

/** What the guard made of a message (read in the form of `normalizeSmsText`). */
export type Verdict =
  | { readonly kind: "deposit" }
  | { readonly kind: "outgoing"; readonly reason: string }
  | { readonly kind: "no_transaction"; readonly reason: string }

interface Marker {
  readonly pattern: RegExp
  readonly meaning: string
}

// Placeholders left by a notification template that was never filled in.
const unfilled = /\{\{[^}]*\}\}|\$\{[^}]*\}|%[sd]\b|#\{[^}]*\}/u

// Read on the text without white space, so `출 금` or `입금 예정` count as well as `출금`, `입금예정`.
// Each meaning completes a sentence that starts with the words found.
const outgoing: ReadonlyArray<Marker> = [
  // 출금 and every type of it: 이체출금, 체크카드출금, 스마트폰출금, 인터넷출금, 지로출금, FBS출금, CMS출금…
  { pattern: /출금/u, meaning: "is money out of the account (a withdrawal)" },
  { pattern: /지급/u, meaning: "is money paid out of the account" },
  { pattern: /자동이체/u, meaning: "is a standing order paid out of the account" },
  { pattern: /송금(?!받|인)/u, meaning: "is money sent from the account" },
  { pattern: /이체(?:했|하였|완료|되었|됐)/u, meaning: "is a transfer made from the account" },
  { pattern: /결제/u, meaning: "is a payment" },
  { pattern: /일시불|할부|누적\d|누적금액|누적액/u, meaning: "belongs to a card approval" },
  // 승인 after a card word or after anything but a Hangul syllable (`신한카드(1234)승인`,
  // `삼성1337승인`); a name such as 이승인 stays a name.
  { pattern: /(?:카드|체크|결제|해외|^|[^가-힣])승인/u, meaning: "is a card approval or its cancellation" },
  { pattern: /취소/u, meaning: "is a cancellation (of a card payment or of a deposit)" },
  // `홍길동님께 50,000원을 보냈어요`, `홍길동님에게 이체`: to someone (님께서 is the payer's honorific).
  // (`홍길동님에게 50,000원을 받았어요` is received, not sent.)
  { pattern: /님(?:께(?!서)|에게(?!서))(?![^\n]*받)/u, meaning: "sends money to someone" }
]

// Read on the normalised text (spaces kept).
const cardUse: Marker = { pattern: /(?:^|[\s)])사용(?:$|[\s.(,]|금액|액|하신|했|완료)/u, meaning: "is a card used at a merchant" }

const noTransaction: ReadonlyArray<Marker> = [
  { pattern: /\(광고\)|\[광고\]|수신거부|무료거부/u, meaning: "marks an advertisement" },
  { pattern: /인증번호|인증코드|OTP(?:번호|인증|비밀)|verification|보안코드|비밀번호/iu, meaning: "marks an authentication code" },
  { pattern: /예정|예약/u, meaning: "announces a transaction that has not been made" },
  { pattern: /안내|공지|알림서비스|점검|중단|휴면|해지|변경되었|전환/u, meaning: "marks a notice" },
  {
    pattern: /요청|부탁|바랍니다|해주세요|해주십시오|하십시오|입금하세요|입금하시기|입금하실|입금할|입금해|기한|마감|까지입금|입금대기|미입금/u,
    meaning: "asks for a payment"
  },
  { pattern: /입금일|입금계좌|가상계좌|입금자명|납부|고지|청구|등록금|수업료|세금|과태료/u, meaning: "marks a bill, tax or tuition notice" },
  { pattern: /주문|배송|상품|구매확정|확인되었|확인됐|확인완료/u, meaning: "marks an order confirmation" },
  { pattern: /실패|거절|불능|오류/u, meaning: "says the transaction did not go through" },
  // A pay app's notice of money sent to the holder that waits in the app until accepted
  // (`[카카오페이] 송금 받기 / 홍길동님이 30,000원을 보냈어요`): the money is not in the account.
  {
    pattern: /받기|받아주세요|받아\s*주세요|받으세요|받으시|받지않|수락|보류|대기중|반환|돌려드|거절하/u,
    meaning: "is money waiting in a pay app to be accepted, not in the account"
  }
]

// Pay apps as the sender or title of a message (as the counterpart the reader blanks them out: a
// bank's `입금 30,000원 카카오페이` stays a deposit).
const payApp = /카카오페이|카카오송금|토스(?!뱅크)|네이버페이|NPay|N페이|페이코|PAYCO|삼성페이|페이북|SSGPAY|쓱페이|스마일페이|L\.?PAY|엘페이|제로페이|머니송금/iu
// `…님이 30,000원을 보냈어요`, `…님이 송금했어요`, `…님이 …원을 요청했어요`: a pay app telling of money
// sent, requested or waiting (a bank's deposit says 입금); the sentence may run over lines.
const payAppSent = /님이[\s\S]*?(?:보냈|송금했|송금하였|요청했|요청하였|선물했)/u

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
