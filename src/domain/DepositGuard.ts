// The never-a-deposit guard (DESIGN section 6): decides, before any template is tried (built-in,
// operator or AI), whether a message can be a deposit at all. Outgoing money (출금, 지급, 이체출금,
// 체크카드출금, 자동이체, card approvals, transfers to someone, arrow pushes from the account to
// someone) and messages that are no transaction (OTPs, notices, advertisements, 입금 예정,
// unfilled templates, several transactions at once) are never deposits, whatever a template
// would read from them: a withdrawal read as a deposit would credit money that never arrived.
// When in doubt it says "not a deposit": a real deposit refused here waits for an operator,
// a withdrawal let through could pay out.
//
// This is the only classifier: the parse loop asks it first, and template validation asks it
// about the sample. `NonDeposits.ts` holds the messages it is tested against.

/** What the guard made of a message (read in the form of `normalizeSmsText`). */
export type Verdict =
  | { readonly kind: "deposit" }
  | { readonly kind: "outgoing"; readonly reason: string }
  | { readonly kind: "no_transaction"; readonly reason: string }

interface Marker {
  readonly pattern: RegExp
  readonly reason: string
}

// Placeholders left by a notification template that was never filled in.
const unfilled: Marker = { pattern: /\{\{[^}]*\}\}|\$\{[^}]*\}|%[sd]\b|#\{[^}]*\}/u, reason: "an unfilled message template" }

// Read on the text without white space, so `출 금` or `입금 예정` count as well as `출금`, `입금예정`.
const outgoing: ReadonlyArray<Marker> = [
  // 출금 and every type of it: 이체출금, 체크카드출금, 스마트폰출금, 인터넷출금, 지로출금, FBS출금, CMS출금…
  { pattern: /출금/u, reason: "출금 (withdrawal)" },
  { pattern: /지급/u, reason: "지급 (payment out)" },
  { pattern: /자동이체/u, reason: "자동이체 (standing order)" },
  { pattern: /송금(?!받|인)/u, reason: "송금 (money sent)" },
  { pattern: /이체(?:했|하였|완료|되었|됐)/u, reason: "a transfer made from the account" },
  { pattern: /결제/u, reason: "결제 (a payment)" },
  { pattern: /일시불|할부|누적\d|누적금액|누적액/u, reason: "a card approval" },
  // 승인 after a card word or after anything but a Hangul syllable (`신한카드(1234)승인`,
  // `삼성1337승인`); a name such as 이승인 stays a name.
  { pattern: /(?:카드|체크|결제|해외|^|[^가-힣])승인/u, reason: "a card approval or its cancellation" },
  { pattern: /취소/u, reason: "a cancellation (of a card payment or of a deposit)" },
  // `홍길동님께 50,000원을 보냈어요`, `홍길동님에게 이체`: to someone (님께서 is the payer's honorific).
  // (`홍길동님에게 50,000원을 받았어요` is received, not sent.)
  { pattern: /님(?:께(?!서)|에게(?!서))(?![^\n]*받)/u, reason: "money sent to someone" }
]

// Read on the normalised text (spaces kept).
const cardUse: Marker = { pattern: /(?:^|[\s)])사용(?:$|[\s.(,]|금액|액|하신|했|완료)/u, reason: "a card used at a merchant" }

const noTransaction: ReadonlyArray<Marker> = [
  { pattern: /\(광고\)|\[광고\]|수신거부|무료거부/u, reason: "an advertisement" },
  { pattern: /인증번호|인증코드|OTP(?:번호|인증|비밀)|verification|보안코드|비밀번호/iu, reason: "an authentication code" },
  { pattern: /예정|예약/u, reason: "an announced, not a made, transaction (예정)" },
  { pattern: /안내|공지|알림서비스|점검|중단|휴면|해지|변경되었|전환/u, reason: "a notice" },
  {
    pattern: /요청|부탁|바랍니다|해주세요|해주십시오|하십시오|입금하세요|입금하시기|입금하실|입금할|입금해|기한|마감|까지입금|입금대기|미입금/u,
    reason: "a request to pay"
  },
  { pattern: /입금일|입금계좌|가상계좌|입금자명|납부|고지|청구|등록금|수업료|세금|과태료/u, reason: "a bill, tax or tuition notice" },
  { pattern: /주문|배송|상품|구매확정|확인되었|확인됐|확인완료/u, reason: "an order confirmation" }
]

// The deposit words: 입금 and its types (전자금융입금, 스마트폰입금, CMS입금, 무통장입금, FBS입금,
// 이체입금, 타행입금…), the app pushes' `님이 … 보냈어요` and `받았어요`, and `→ 내 통장`.
const depositWord = /입금|보냈어요|받았어요|받았습니다|들어왔/gu

const arrow = /→|->|➡|⇒|▶/u
// After the arrow: the account holder's own account (`→ 내 토스뱅크 통장`).
const toOwnAccount = /^\s*(?:(?:내|나의|본인|my)(?:\s|$)|\S*(?:통장|계좌)(?:\s|$))/iu

const find = (markers: ReadonlyArray<Marker>, text: string): Marker | undefined => markers.find((m) => m.pattern.test(text))

/** Whether a message can be a deposit; templates are tried only when it says `deposit`. */
export const classifyTransaction = (text: string): Verdict => {
  if (unfilled.pattern.test(text)) return { kind: "no_transaction", reason: unfilled.reason }
  const compact = text.replace(/\s+/gu, "")
  const out = find(outgoing, compact) ?? (cardUse.pattern.test(text) ? cardUse : undefined)
  if (out !== undefined) return { kind: "outgoing", reason: out.reason }
  const arrowAt = text.search(arrow)
  if (arrowAt >= 0 && !toOwnAccount.test(text.slice(arrowAt).replace(arrow, ""))) {
    return { kind: "outgoing", reason: "an arrow from the account to someone" }
  }
  const none = find(noTransaction, compact)
  if (none !== undefined) return { kind: "no_transaction", reason: none.reason }
  // 입금 inside 입금자 (the payer's label) is no second transaction.
  const words = [...compact.matchAll(depositWord)].filter((m) => !(m[0] === "입금" && compact[m.index + 2] === "자"))
  if (words.length === 0 && arrowAt < 0) return { kind: "no_transaction", reason: "no deposit word (입금)" }
  if (words.length > 1) return { kind: "no_transaction", reason: "several transactions in one message" }
  return { kind: "deposit" }
}

export const describeVerdict = (verdict: Verdict): string =>
  verdict.kind === "deposit" ? "a deposit" : `${verdict.kind === "outgoing" ? "outgoing money" : "no transaction"}: ${verdict.reason}`
