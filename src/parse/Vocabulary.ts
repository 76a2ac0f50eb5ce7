// The reader's vocabulary (issue 35): the words banks print, as data apart from the mechanics that
// read them. The tokenizer (SmsTokens.ts) builds its classifiers from the first part, the guard
// (DepositGuard.ts) judges with the second. Adding a bank's layout usually means adding words here
// (docs/PARSING.md, "Adding a bank layout"), not code: a bank's names to `bankAliases`, a kind of
// 입금 to `typePrefix`, a label to `labels`, a notice word to `noticeChunk`.
//
// A word is a keyword only when a whole chunk (white space to white space, or between structural
// pieces) is one: `송금희`, `서예정`, `공지영` stay names.
import type { LabelSlot, TxnWord } from "./SmsTokens.ts"

// ---------------------------------------------------------------------------------------------
// Words of the tokens (SmsTokens.ts)
// ---------------------------------------------------------------------------------------------

/** The banks and the ways they name themselves in their messages (the bank name is the built-in templates'). */
export const bankAliases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["KB국민", ["KB", "KB국민", "KB국민은행", "국민", "국민은행", "KB스타뱅킹", "KB스타", "스타뱅킹"]],
  ["NH농협", ["농협", "NH", "NH농협", "NH농협은행", "농협은행", "NH스마트뱅킹", "NH올원뱅크", "지역농협"]],
  ["신한", ["신한", "신한은행", "신한SOL", "SOL", "쏠"]],
  ["우리", ["우리", "우리은행", "우리WON", "우리WON뱅킹", "WON뱅킹"]],
  ["하나", ["하나", "하나은행", "하나원큐", "KEB하나", "KEB하나은행", "하나1Q"]],
  ["IBK기업", ["IBK", "IBK기업", "IBK기업은행", "기업", "기업은행", "i-ONE"]],
  ["카카오뱅크", ["카카오뱅크", "kakaobank"]],
  ["토스뱅크", ["토스뱅크", "토스"]],
  ["케이뱅크", ["케이뱅크", "K뱅크", "Kbank"]],
  ["신협", ["신협", "신용협동조합"]],
  ["새마을금고", ["새마을금고", "MG새마을금고", "MG", "새마을"]],
  ["우체국", ["우체국", "우체국예금", "우정사업본부"]],
  ["iM뱅크", ["iM뱅크", "아이엠뱅크", "대구은행", "대구", "DGB", "DGB대구은행"]],
  ["KDB산업", ["KDB", "KDB산업", "KDB산업은행", "산업은행", "산업"]],
  ["전북", ["전북", "전북은행", "JB"]],
  ["부산", ["부산", "부산은행", "BNK부산", "BNK부산은행"]],
  ["경남", ["경남", "경남은행", "BNK경남", "BNK경남은행"]],
  ["광주", ["광주", "광주은행", "KJB"]],
  ["제주", ["제주", "제주은행"]],
  ["SC제일", ["SC제일", "SC제일은행", "SC", "SC은행", "제일은행"]],
  ["수협", ["수협", "수협은행", "Sh수협", "Sh수협은행", "Sh"]],
  ["씨티", ["씨티", "씨티은행", "한국씨티", "한국씨티은행", "Citi"]],
  ["한국투자증권", ["한국투자", "한국투자증권"]]
]
// Kinds of 입금/출금 banks print before the word, as many as they like (KB above all): `전자금융입금`, `체크카드출금`…
export const typePrefixes: ReadonlyArray<string> = [
  "전자금융", "스마트폰", "스마트", "인터넷", "모바일", "CMS", "무통장", "FBS", "타행", "당행",
  "ATM", "창구", "이체", "대체", "텔레뱅킹", "폰뱅킹", "급여", "펌뱅킹", "오픈뱅킹", "자동",
  "체크카드", "체크", "신용카드", "지로", "현금", "해외", "계좌", "타발", "당발", "간편",
  "카드", "PG", "CD", "ARS", "직불", "예약", "즉시", "일괄", "해외결제"
]
// What follows a transaction word in the same chunk, as many as come (then `.` or `!`): endings, particles, nouns (`입금됐어요`, `출금액`, `이체완료`).
export const txnEndings: ReadonlyArray<string> = [
  "완료", "됨", "됐어요", "됐습니다", "되었어요", "되었습니다", "되었음", "되셨습니다", "했어요", "했습니다",
  "하였습니다", "하셨습니다", "하였음", "함", "처리", "내역", "금액", "액", "건", "을",
  "를", "이", "가", "에", "로", "으로", "한", "된", "해요", "했음",
  "하였어요", "성공", "하고", "하면", "하여", "해서", "하신", "하셨어요"
]

export interface Core {
  readonly pattern: string
  readonly word: TxnWord
}

// The last core of a chunk decides (`이체입금` is in, `입금취소` a cancellation, `자동이체` out).
export const cores: ReadonlyArray<Core> = [
  { pattern: "입금", word: { way: "in", meaning: "is money into the account (a deposit)" } },
  { pattern: "들어왔(?:어요|습니다)", word: { way: "receive", meaning: "is money received" } },
  { pattern: "받(?:았어요|았습니다|음|은)", word: { way: "receive", meaning: "is money received" } },
  { pattern: "출금", word: { way: "out", meaning: "is money out of the account (a withdrawal)" } },
  { pattern: "인출", word: { way: "out", meaning: "is money out of the account (a withdrawal)" } },
  { pattern: "지급", word: { way: "out", meaning: "is money paid out of the account" } },
  { pattern: "자동이체", word: { way: "out", meaning: "is a standing order paid out of the account" } },
  { pattern: "이체(?=완료|됨|됐|되었|했|하였|함)", word: { way: "out", meaning: "is a transfer made from the account" } },
  { pattern: "이체", word: { way: "neutral", meaning: "is a transfer that does not say which way" } },
  { pattern: "송금", word: { way: "send", meaning: "is money sent from the account" } },
  { pattern: "보(?:냈어요|냈습니다|냄|낸|내셨어요|내셨습니다|내드렸어요)", word: { way: "send", meaning: "is money sent from the account" } },
  { pattern: "결제", word: { way: "out", meaning: "is a payment" } },
  { pattern: "승인", word: { way: "out", meaning: "is a card approval" } },
  { pattern: "일시불|할부", word: { way: "out", meaning: "belongs to a card approval" } },
  { pattern: "사용", word: { way: "out", meaning: "is a card used at a merchant" } },
  { pattern: "취소", word: { way: "out", meaning: "is a cancellation (of a card payment or of a deposit)" } }
]
// Notice words as whole chunks (with their endings and particles: `요청이`, `예정입니다`): never a
// name, whatever slot they stand in. A keyword inside a longer word (`서예정`, `공지영`) stays a word.
export const noticeChunk = new RegExp(
  String.raw`^(?:입금|출금|이체|송금|납부|결제)?(?:예정|예약|안내|공지|알림|점검|중단|휴면|해지|변경|전환|요청|부탁|바랍니다|기한|마감|대기|미입금|확인|납부|고지|청구|광고|인증|인증번호|비밀번호|주문|배송|상품|구매확정|수신거부|무료거부|서비스|실패|오류|거절|불능)+(?:입니다|합니다|됩니다|되었습니다|됐습니다|드립니다|드려요|해요|했어요|하세요|해주세요|하십시오|을|를|이|가|은|는|의|도|에|으로|서비스|금액|액|일|번호|내역|사항|중|완료|요청)*[.!]?$`,
  "u"
)
/** `입금하세요`, `입금해`, `입금할`, `입금될`: 입금 asked for or announced, not made. */
export const askedTxnChunk =
  /^(?:입금|출금|이체|송금)(?:하세요|해주세요|해|할|하실|하시기|하십시오|될|예정|대기|요청|바랍니다|기한)(?:입니다|합니다|됩니다|이|을|를|은|는|의|에|금액|액|일|내역|중|안내|서비스)*[.!]?$/u

export const labels: ReadonlyArray<readonly [RegExp, LabelSlot]> = [
  [/^(?:보낸|보내는|보내신|입금|송금|의뢰|입금의뢰)(?:분|사람|인|자|자명|인명)$/u, "payer"],
  [/^(?:적요|내용|메모|거래내용|입금내용|통장표시|통장메모)$/u, "payer"],
  [/^(?:받는|받으신|받은)(?:분|사람|인)$|^수취인$/u, "recipient"],
  [/^(?:금액|입금액|입금금액|거래금액|출금액|출금금액|이체금액|송금액|송금금액)$/u, "amount"],
  [/^(?:일시|거래일시|입금일시|출금일시|거래시간|시간|일자|거래일자|날짜)$/u, "time"],
  [/^(?:계좌|계좌번호|입금계좌|출금계좌|받는계좌|내계좌)$/u, "account"],
  [/^(?:구분|거래구분|거래종류|거래유형)$/u, "kind"],
  [/^(?:수수료|이체수수료|송금수수료)$/u, "fee"]
]
// The account holder's own account by its product name (`입출금통장`, `모임통장(7710)`, `내 통장`).
export const accountNameChunk = /^(?:[가-힣A-Za-z0-9]+(?:통장|저금통|세이프박스|금고|지갑|계좌)(?:\(\d{2,6}\))?(?:에|으로|로|의)?|(?:통장|계좌)(?:\(\d{2,6}\))?(?:에|으로|로|의)?|내|나의|본인)$/u
// A notification header: no transaction, no name (`입출금 알림`, `입출금알림`, `거래알림`).
export const headerChunk = /^(?:입출금|거래|계좌|입금|출금)?(?:알림|내역알림|알림톡)$|^(?:입출금)$/u

export const headerBracket = /^(?:web|국제|국외|해외)\s*발신$/iu
/** The end of a sentence (`도착했어요`, `확인하십시오`). */
export const sentenceEnd = /(?:요|니다|세요|시오)[.!?]?$/u
/** Words that only say a transaction went through (`입금 완료`): no name, no direction. */
export const fillerChunk = /^(?:완료|처리|처리완료|정상처리|되었습니다|됐습니다|됐어요|되었어요|됨|성공)[.!]?$/u

// ---------------------------------------------------------------------------------------------
// Words of the guard (DepositGuard.ts): read on the text with the reading's neutral spans blanked
// ---------------------------------------------------------------------------------------------

export interface Marker {
  readonly pattern: RegExp
  readonly meaning: string
}

// Placeholders left by a notification template that was never filled in.
export const unfilled = /\{\{[^}]*\}\}|\$\{[^}]*\}|%[sd]\b|#\{[^}]*\}/u

// Read on the text without white space, so `출 금` or `입금 예정` count as well as `출금`, `입금예정`.
// Each meaning completes a sentence that starts with the words found.
export const outgoing: ReadonlyArray<Marker> = [
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
export const cardUse: Marker = { pattern: /(?:^|[\s)])사용(?:$|[\s.(,]|금액|액|하신|했|완료)/u, meaning: "is a card used at a merchant" }

export const noTransaction: ReadonlyArray<Marker> = [
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
export const payApp = /카카오페이|카카오송금|토스(?!뱅크)|네이버페이|NPay|N페이|페이코|PAYCO|삼성페이|페이북|SSGPAY|쓱페이|스마일페이|L\.?PAY|엘페이|제로페이|머니송금/iu
// `…님이 30,000원을 보냈어요`, `…님이 송금했어요`, `…님이 …원을 요청했어요`: a pay app telling of money
// sent, requested or waiting (a bank's deposit says 입금); the sentence may run over lines.
export const payAppSent = /님이[\s\S]*?(?:보냈|송금했|송금하였|요청했|요청하였|선물했)/u
