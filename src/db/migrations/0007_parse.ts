// Parsing (DESIGN section 6): where the parse loop writes what it read besides the record's own
// columns (the transaction time and the balance printed in the text), the stable key of each
// built-in template, and the built-in templates themselves.
//
// Built-in rows are keyed by `builtin_key` (unique among rule_source 'builtin'): a later release
// improves them with a new migration that upserts the same keys (`builtinUpsert` below, with its
// own frozen list), so their ids stay and operator rows (manual, ai) are never touched. A key
// that a later list drops is deleted by that migration, not left behind.
//
// The rules read the text as the parse loop gives it to every template (`normalizeSmsText`): no
// `[Web발신]`, no `보낸사람 : …` line, lines trimmed, runs of spaces made one, full-width digits
// folded; line breaks kept where the phone kept them. Every separator between two fields is
// `\s*` when the fields sit on separate lines (forwarders that strip line breaks run them
// together) and a space where the bank prints both on one line. A payer name never starts with
// a digit or a mark (`*`, `-`, `,`, `:`…), so it cannot be cut out of an account number, an
// amount or a masked holder; what a rule reads as the name is checked again by the loop (a
// masked `김*늘님`, an account number, an amount or the 잔액 line is no payer).

export interface BuiltinTemplate {
  readonly key: string
  readonly bank: string
  readonly sender: string | null
  readonly sample: string
  readonly rule: string
}

/** One statement that inserts or updates the built-in rows of `templates` by key. */
export const builtinUpsert = (templates: ReadonlyArray<BuiltinTemplate>): ReadonlyArray<string> => {
  const json = JSON.stringify(templates.map((t, i) => ({ ...t, ord: i })))
  if (json.includes("$builtin$")) throw new Error("a built-in template contains the quoting tag")
  return [
    `DELETE FROM recon.shooter_template_recharge WHERE rule_source = 'builtin'
      AND builtin_key NOT IN (SELECT x.key FROM jsonb_to_recordset($builtin$${json}$builtin$::jsonb) AS x(key text))`,
    `INSERT INTO recon.shooter_template_recharge (bank, sender, sample, rule, rule_source, builtin_key)
      SELECT x.bank, x.sender, x.sample, x.rule, 'builtin', x.key
      FROM jsonb_to_recordset($builtin$${json}$builtin$::jsonb) AS x(key text, bank text, sender text, sample text, rule text, ord int)
      ORDER BY x.ord
      ON CONFLICT (builtin_key) WHERE rule_source = 'builtin'
      DO UPDATE SET bank = excluded.bank, sender = excluded.sender, sample = excluded.sample, rule = excluded.rule`
  ]
}

// Building blocks (RE2 syntax).
const amount = String.raw`(?P<amount>\d{1,3}(?:,\d{3})+|\d+)`
/** The amount of a bank that prints `원` right after it (`50,000원`); a `원` on the next line is a name's. */
const amountWon = String.raw`${amount}(?: ?원)?`
const balance = String.raw`잔액 ?:? ?(?P<balance>\d{1,3}(?:,\d{3})+|\d+)`
const balanceWon = String.raw`${balance}(?: ?원)?`
const monthDay = String.raw`\d{1,2}/\d{1,2}`
const hourMinute = String.raw`\d{1,2}:\d{2}(?::\d{2})?`
const account = String.raw`[\d*#-]{6,}`
/** The first character of a payer name: no digit, no white space, no mark of an account, amount or masking. */
const nameStart = String.raw`[^\s\d,.*#:\[\]<>/-]`
const name = String.raw`(?P<name>${nameStart}[^\n]*?)`
/** After a name at the end of its line. */
const lineEnd = String.raw`\s*(?:\n|$)`
/** After a name that may be followed by the balance on the same line or the next. */
const thenBalanceOrEnd = (won: boolean) => String.raw`(?:\s*${won ? balanceWon : balance}|${lineEnd})`
/** KB's transaction types before 입금 (and before 출금 in the outgoing twins, which the guard stops). */
const depositType = String.raw`(?:전자금융|스마트폰|인터넷|모바일|CMS|무통장|FBS|타행|당행|ATM|창구|이체|대체|텔레뱅킹|폰뱅킹|급여|펌뱅킹|오픈뱅킹)?입금`
/** A masked account holder (`이*름님`, `심*민(8205)`): shown before the real payer, never the payer. */
const maskedHolder = String.raw`[^\s\d]*\*[^\s\d]*(?:님|\(\d{2,4}\))?`

/** `[Bank] MM/DD HH:mm [account] 입금 amount[원] name [잔액 balance]`: the common single-line layout. */
/** A balance printed before the name (not captured: the rule captures the one after the name). */
const balanceBefore = String.raw`(?:잔액 ?:? ?[\d,]+(?: ?원)?\s*)?`
/** A time printed after the amount or after the name, where some banks put it. */
const laterTime = String.raw`(?:(?:${monthDay} ?)?${hourMinute})`

/**
 * `[Bank] [masked holder] [MM/DD HH:mm] [account] 입금 amount[원] [time] [잔액…] name [time] [잔액 balance]`:
 * the common layout, the optional fields in every place a bank puts them.
 */
const timeAccountDepositAmountName = (prefix: string, won: boolean) =>
  String.raw`${prefix}\s*(?:${maskedHolder}\s*)?(?:(?P<time>(?:\d{4}[./])?${monthDay},? ?${hourMinute})\s*)?(?:${account}\s*)?${depositType}\s*${
    won ? amountWon : amount
  }\s*(?:${laterTime}\s*)?${balanceBefore}${name}(?:\s*${laterTime})?${thenBalanceOrEnd(won)}`

const bracketed = (names: string) => String.raw`[\[(]?(?:${names})[\])]?`

export const builtins0007: ReadonlyArray<BuiltinTemplate> = [
  // KB국민: `[KB]MM/DD HH:mm`, account, name, type+입금, amount (no 원), 잔액; one line or several.
  {
    key: "kb",
    bank: "KB국민",
    sender: "16449999",
    sample: "[Web발신]\n[KB]01/20 10:13\n971372**874\n박희자\n입금\n141,000\n잔액1,033,072",
    rule: String.raw`(?:\[KB(?:국민)?\]|${maskedHolder})\s*(?P<time>${monthDay} ?${hourMinute})\s*(?P<account>${account})\s*${name}\s*${depositType}\s*${amount}(?:\s*${balance})?`
  },
  // KB국민, the amount before the name: `[KB국민] 06/18 15:30 444401-01-499150 입금 50,000원 홍길동`,
  // `KB국민은행 입금 1,200,000원 08/05 09:10 김철수`, `[국민] 입금 10,000원 국민영 15:30`.
  {
    key: "kb_amount_first",
    bank: "KB국민",
    sender: "16449999",
    sample: "[KB국민] 06/18 15:30 444401-01-499150 입금 50,000원 홍길동",
    rule: String.raw`(?:\[KB(?:국민)?\]|\[국민\]|KB국민은행|국민은행)\s*(?:(?P<time>${monthDay} ?${hourMinute})\s*)?(?:${account}\s*)?${depositType}\s*${amountWon}\s*(?:${monthDay} ${hourMinute} )?${name}(?: ${hourMinute})?${thenBalanceOrEnd(false)}`
  },
  // NH농협: `농협 입금10,000원` / `MM/DD HH:mm account name 잔액…원`.
  {
    key: "nh",
    bank: "NH농협",
    sender: "15882100",
    sample: "농협 입금10,000원\n07/04 15:18 352-****-4273-63 신동수 잔액3,710,000원",
    rule: String.raw`(?:\[?(?:NH)?농협(?:은행)?\]?)\s*${depositType}\s*${amountWon}\s*(?P<time>${monthDay} ?${hourMinute})\s*(?P<account>${account}) (?P<name>[^\s*][^\n]*?)${thenBalanceOrEnd(true)}`
  },
  // NH농협, the old layout: `농협 2010/02/17 302-0080-1997-** 1,000원(성시원)입금.잔액1,000원`.
  {
    key: "nh_legacy",
    bank: "NH농협",
    sender: "15882100",
    sample: "농협 2010/02/17 302-0080-1997-** 1,000원(성시원)입금.잔액1,000원",
    rule: String.raw`농협\s*(?P<time>\d{4}/\d{1,2}/\d{1,2}(?: ${hourMinute})?)\s*${account}\s*${amount}원\((?P<name>[^\n]+?)\)입금`
  },
  // 신한: `신한MM/DD HH:mm`, account, `입금 amount` (no 원), `잔액 balance`, name.
  {
    key: "shinhan",
    bank: "신한",
    sender: "15778000",
    sample: "[Web발신]\n신한07/04 15:28\n110-496-922482\n입금 100,000\n잔액 870,045\n박현옥",
    rule: String.raw`\[?신한(?:은행)?\]?\s*(?P<time>${monthDay} ?${hourMinute})\s*\[?(?:(?P<account>${account})\]?\s*)?${depositType}\s*${amount}원?(?:\s*잔액 ?:? ?[\d,]+원?)?\s*${name}(?:\s*${balance}원?|${lineEnd})`
  },
  // 우리: `[우리]MM/DD HH:mm account 입금 amount원 name 잔액…`.
  {
    key: "woori",
    bank: "우리",
    sender: "15885000",
    sample: "[Web발신]\n우리 06/12 14:23\n1002***123456\n입금 100,000원\n김영희\n잔액 2,000,000원",
    rule: String.raw`${bracketed("우리|우리은행")}\s*(?P<time>${monthDay} ?${hourMinute})\s*(?P<account>[\d*#-]{4,})\s*${depositType}\s*${amountWon}\s*${balanceBefore}${name}${thenBalanceOrEnd(true)}`
  },
  // 하나: `하나,MM/DD, HH:mm`, account, `입금amount원`, name, 잔액; `[하나은행] 2026.12.11 22:05 입금 10,000원 name 잔액…`.
  {
    key: "hana",
    bank: "하나",
    sender: "15991111",
    sample: "[Web발신]\n하나,08/07, 15:33\n255******31304\n입금5,115,000원\n(주)클리어윈코\n잔액239,612,486원",
    rule: String.raw`(?:\[하나(?:은행)?\]|하나(?:은행)?,?)\s*(?P<time>(?:\d{4}[./])?\d{1,2}[./]\d{1,2},? ?${hourMinute})\s*(?:(?P<account>${account})\s*)?${depositType}\s*${amountWon}\s*${name}${thenBalanceOrEnd(true)}`
  },
  // IBK기업: `YYYY/MM/DD HH:mm`, `입금 amount원`, `잔액 balance원`, name, account, `기업`.
  {
    key: "ibk",
    bank: "IBK기업",
    sender: "15662566",
    sample: "[Web발신]\n2026/06/12 09:05\n입금 100,000원\n잔액 1,150,622원\n홍길동\n469***03801011\n기업",
    rule: String.raw`(?:\[IBK\]\s*)?(?P<time>\d{4}/\d{1,2}/\d{1,2} ?${hourMinute})\s*${depositType}\s*${amountWon}\s*${balanceWon}\s*${name}\s*(?P<account>\d[\d*-]{6,})`
  },
  // IBK기업: `[IBK]MM/DD HH:mm`, `입금 amount원`, name, `잔액 balance원`, account.
  {
    key: "ibk_short",
    bank: "IBK기업",
    sender: "15662566",
    sample: "[Web발신]\n[IBK]06/12 14:23\n입금 50,000원\n김믿음\n잔액 984,567원\n123-******-01-012",
    rule: String.raw`\[IBK(?:기업)?\]\s*(?P<time>${monthDay} ?${hourMinute})\s*${depositType}\s*${amountWon}\s*${name}${thenBalanceOrEnd(true)}`
  },
  // 카카오뱅크: `[카카오뱅크] 심*민(8205) MM/DD HH:mm 입금 amount원 name 잔액 balance원`.
  {
    key: "kakaobank",
    bank: "카카오뱅크",
    sender: "15993333",
    sample: "[Web발신] [카카오뱅크] 심*민(8205) 08/23 14:20 입금 500,000원 박진환 잔액 9,851,574원",
    rule: timeAccountDepositAmountName(bracketed("카카오뱅크"), true)
  },
  // 토스뱅크 and 케이뱅크 in the same layout.
  {
    key: "tossbank",
    bank: "토스뱅크",
    sender: "16617654",
    sample: "[토스뱅크] 홍*동(1234) 06/12 14:23 입금 50,000원 최믿음 잔액 1,234,567원",
    rule: timeAccountDepositAmountName(bracketed("토스뱅크"), true)
  },
  {
    key: "kbank",
    bank: "케이뱅크",
    sender: "15221000",
    sample: "[케이뱅크] 홍*동(1234) 06/12 14:23 입금 50,000원 최믿음 잔액 1,234,567원",
    rule: timeAccountDepositAmountName(bracketed("케이뱅크|K뱅크"), true)
  },
  // 케이뱅크 through an aggregator: time, `입금 amount원`, a memo line, the name, the account, `케이뱅크`.
  {
    key: "kbank_aggregator",
    bank: "케이뱅크",
    sender: null,
    sample: "[Web발신]\n2025/06/30 00:56:46\n입금 50000원\ncoinpos365\n지현주\n100157160105\n케이뱅크\n20250629",
    rule: String.raw`(?P<time>\d{4}/\d{1,2}/\d{1,2} ?${hourMinute})\s*입금\s*${amountWon}\s*(?:[^\n]*\n)?${name}\s*(?P<account>\d{6,})\s*케이뱅크`
  },
  // 신협: `신협132*****2222 MM/DD HH:mm 입금 amount원 name 잔액balance원`.
  {
    key: "cu",
    bank: "신협",
    sender: "15666000",
    sample: "신협132*****2222 07/04 16:15 입금 300,000원 김규성 잔액312,533원",
    rule: String.raw`${bracketed("신협")}\s*(?P<account>${account})?\s*(?P<time>${monthDay} ?${hourMinute})\s*(?:${account}\s*)?${depositType}\s*${amountWon}\s*${balanceBefore}${name}${thenBalanceOrEnd(true)}`
  },
  // 새마을금고: `[MG새마을금고]`, time, account, `입금 amount원`, name, 잔액.
  {
    key: "mg",
    bank: "새마을금고",
    sender: "15999000",
    sample: "[MG새마을금고]\n11/28 12:00\n9002-****-1234\n입금 200,000원\n이영희\n잔액 800,000원",
    rule: timeAccountDepositAmountName(bracketed("MG새마을금고|새마을금고|MG"), true)
  },
  // 우체국: `우체국,HH:mm`, account, `입금amount원`, `잔액balance원`, name.
  {
    key: "epost",
    bank: "우체국",
    sender: "15881900",
    sample: "우체국,23:47\n610********249\n입금39,000원\n잔액74,495,645원\n고정복",
    rule: String.raw`${bracketed("우체국")},?\s*(?P<time>(?:${monthDay} ?)?${hourMinute})\s*(?P<account>${account})\s*${depositType}\s*${amountWon}\s*${balanceBefore}${name}(?:\s*${balanceWon}|${lineEnd})`
  },
  // iM뱅크 (대구): `iM뱅크 MM/DD HH:mm`, account, `입금 amount` (no 원), `잔액 balance`, name.
  {
    key: "im",
    bank: "iM뱅크",
    sender: "15885050",
    sample: "iM뱅크 09/27 13:52\n50813*03093\n입금 1,000,000\n잔액 1,189,248\n토스박선영",
    rule: String.raw`${bracketed("iM뱅크|대구은행|대구|DGB")}\s*(?P<time>${monthDay} ?${hourMinute})\s*(?P<account>${account})\s*${depositType}\s*${amount}\s*(?:${balance}\s*)?${name}${lineEnd}`
  },
  // KDB산업: `(KDB)account`, `입금`, `amount원`, name, `잔액balance원 HH:mm:ss`.
  {
    key: "kdb",
    bank: "KDB산업",
    sender: "15881500",
    sample: "[Web발신]\n(KDB)020****3636709\n입금\n4,835,000원\n(주)이노라인\n잔액33,347,963원 16:07:35",
    rule: String.raw`${bracketed("KDB|산업|KDB산업")}\s*(?P<account>${account})\s*${depositType}\s*${amountWon}\s*${name}\s*${balanceWon}(?: ?(?P<time>(?:${monthDay} )?${hourMinute}))?`
  },
  // 전북: `[전북]####946`, `입금amount원`, `잔액balance원`, `MM/DD HH:mm`, name.
  {
    key: "jb",
    bank: "전북",
    sender: "15884477",
    sample: "[Web발신]\n[전북]####946\n입금200,000원\n잔액1,147,346원\n01/02 19:37\n산업김두선",
    rule: String.raw`${bracketed("전북|전북은행")}\s*(?P<account>[\d*#-]{3,})\s*${depositType}\s*${amountWon}\s*${balanceWon}\s*(?P<time>${monthDay} ?${hourMinute})\s*${name}${lineEnd}`
  },
  // 한국투자증권 (an account funded from a bank): `[한국투자]HH:mm`, account, `이체입금`, amount원, `(잔액…)`, name.
  {
    key: "kis",
    bank: "한국투자증권",
    sender: "15445000",
    sample: "[한국투자]05:31\n43****82-01\n이체입금\n400,000원\n(잔액419,500)\n새마을금 시명길\n아미",
    rule: String.raw`\[한국투자(?:증권)?\]\s*(?P<time>(?:${monthDay} ?)?${hourMinute})\s*(?P<account>${account})\s*${depositType}\s*${amountWon}\s*\(?${balanceWon}\)?\s*${name}${lineEnd}`
  },
  // The regional and other banks in the common layout (`[Bank] MM/DD HH:mm account 입금 amount원 name 잔액…`).
  { key: "busan", bank: "부산", sender: "15886200", sample: "[부산은행] 06/12 14:23 101-2***-5678-09 입금 50,000원 홍길동 잔액 1,000,000원", rule: timeAccountDepositAmountName(bracketed("BNK부산은행|부산은행|부산|BNK부산"), true) },
  { key: "kyongnam", bank: "경남", sender: "16008585", sample: "[경남은행] 06/12 14:23 207-****-1234-5 입금 50,000원 홍길동 잔액 1,000,000원", rule: timeAccountDepositAmountName(bracketed("BNK경남은행|경남은행|경남|BNK경남"), true) },
  { key: "kwangju", bank: "광주", sender: "15883388", sample: "[광주은행] 06/12 14:23 1107-***-123456 입금 50,000원 홍길동 잔액 1,000,000원", rule: timeAccountDepositAmountName(bracketed("광주은행|광주"), true) },
  { key: "jeju", bank: "제주", sender: "15880079", sample: "[제주은행] 06/12 14:23 700-**-12345 입금 50,000원 홍길동 잔액 1,000,000원", rule: timeAccountDepositAmountName(bracketed("제주은행|제주"), true) },
  { key: "sc", bank: "SC제일", sender: "15881599", sample: "[SC제일은행] 06/12 14:23 123-**-456789 입금 50,000원 홍길동 잔액 1,000,000원", rule: timeAccountDepositAmountName(bracketed("SC제일은행|SC제일|SC은행|제일은행|SC"), true) },
  { key: "suhyup", bank: "수협", sender: "15881515", sample: "[수협] 06/12 14:23 1010-****-1234 입금 50,000원 홍길동 잔액 1,000,000원", rule: timeAccountDepositAmountName(bracketed("Sh수협은행|수협은행|수협"), true) },
  { key: "citi", bank: "씨티", sender: "15887000", sample: "[씨티은행] 06/12 14:23 123-*****-123 입금 50,000원 홍길동 잔액 1,000,000원", rule: timeAccountDepositAmountName(bracketed("한국씨티은행|씨티은행|씨티|Citi"), true) },
  // App pushes with the bank on the first line: `카카오뱅크\nMM/DD HH:mm\n입금 amount원\nname님\n잔액 …원`,
  // `신한은행\n입금 50,000원\nMM/DD HH:mm\n김철수님\n잔액: …원`.
  {
    key: "app_push",
    bank: "앱 알림",
    sender: null,
    sample: "카카오뱅크\n07/07 16:45\n입금 100,000원\n이민수님\n잔액 2,100,000원",
    rule: String.raw`(?:카카오뱅크|토스뱅크|토스|케이뱅크|신한은행|신한 SOL|KB국민은행|KB스타뱅킹|하나은행|우리은행|NH농협|농협은행|IBK기업은행|iM뱅크)\s*(?:(?P<time>${monthDay} ?${hourMinute})\s*)?입금\s*${amountWon}\s*(?:${monthDay} ?${hourMinute}\s*)?${name}${thenBalanceOrEnd(true)}`
  },
  // App pushes as a sentence: `홍길동님이 50,000원을 보냈어요`, `홍길동님에게 50,000원을 받았어요`, `[카카오뱅크] 홍길동님이 3333-**-1234567 계좌로 10,000원을 입금했어요.`
  {
    key: "app_sentence",
    bank: "앱 알림",
    sender: null,
    sample: "[카카오뱅크] 홍길동님이 3333-**-1234567 계좌로 10,000원을 입금했어요.",
    rule: String.raw`(?:^|[\s\]])(?P<name>${nameStart}\S*?)님(?:이|께서|에게서|에게|으로부터)\s*(?:${account}\s*계좌로\s*)?${amount}원을?\s*(?:입금했어요|입금했습니다|입금하였습니다|보냈어요|보냈습니다|받았어요|받았습니다)`
  },
  // App pushes with the amount first: `5,112원 입금 홍길동`, `50,000원 입금\n홍길동 → 내 토스뱅크 통장`.
  {
    key: "app_amount_first",
    bank: "앱 알림",
    sender: null,
    sample: "5,112원 입금\n홍길동 → 내 토스뱅크 통장",
    rule: String.raw`^(?:(?:토스뱅크|토스|카카오뱅크|케이뱅크)\s*)?${amount} ?원 ?입금\s*(?:[|·:] ?)?(?P<name>${nameStart}[^\n|→]*?)\s*(?:(?:→|->)[^\n]*)?(?:\n|$)`
  },
  // App pushes with an arrow into the own account: `홍길동 → 내 토스뱅크 통장 50,000원` (the guard
  // stops the arrows that go from the account to someone).
  {
    key: "app_arrow",
    bank: "앱 알림",
    sender: null,
    sample: "홍길동 → 내 토스뱅크 통장 5,112원",
    rule: String.raw`(?:^|\n)(?:(?:입금|토스뱅크|토스)\s*)?(?P<name>${nameStart}[^\n→]*?)\s*(?:→|->)\s*내 [^\n]*?(?:통장|계좌)\s*(?:입금\s*)?${amount} ?원`
  },
  // No bank named: `07/18 16:50 *420576 입금 8원 떼껄룩스` (우리 as some forwarders deliver it).
  {
    key: "generic_time_account",
    bank: "기타",
    sender: null,
    sample: "07/18 16:50 *420576 입금 8원 떼껄룩스",
    rule: String.raw`(?:^|\n)(?P<time>${monthDay} ?${hourMinute})\s*(?P<account>[\d*#-]{4,})\s*${depositType}\s*${amountWon}\s*${balanceBefore}${name}${thenBalanceOrEnd(true)}`
  },
  // No bank named: `입금 10,000원\nMM/DD HH:mm 홍길동`.
  {
    key: "generic_amount_time_name",
    bank: "기타",
    sender: null,
    sample: "입금 10,000원\n04/12 15:30 홍길동",
    rule: String.raw`(?:^|\n)${depositType}\s*${amountWon}\s*(?P<time>${monthDay} ?${hourMinute})\s*${name}${thenBalanceOrEnd(true)}`
  },
  // No bank named, the amount and the name first: `입금 50,000원 홍길동 잔액 …`, `[입금] 50,000원 홍길동`.
  {
    key: "generic_amount_name",
    bank: "기타",
    sender: null,
    sample: "[입금] 50,000원 홍길동",
    rule: String.raw`(?:^|\n)(?:\[입금\]|입금)\s*${amountWon}\s*${name}(?:\s*${laterTime})?${thenBalanceOrEnd(true)}`
  }
]

export default [
  `ALTER TABLE recon.shooter_sms ADD COLUMN txn_at timestamptz`,
  `ALTER TABLE recon.shooter_sms ADD COLUMN balance numeric(18, 2)`,
  `ALTER TABLE recon.shooter_template_recharge ADD COLUMN builtin_key text`,
  `ALTER TABLE recon.shooter_template_recharge ADD CONSTRAINT shooter_template_builtin_key_check
    CHECK ((rule_source = 'builtin') = (builtin_key IS NOT NULL))`,
  `CREATE UNIQUE INDEX shooter_template_builtin_key_idx ON recon.shooter_template_recharge (builtin_key)
    WHERE rule_source = 'builtin'`,
  // One rule per bank, compared by its digest: a btree entry holds at most ~2,700 bytes, and a
  // rule may be 2,000 characters of Hangul (6,000 bytes in UTF-8).
  `ALTER TABLE recon.shooter_template_recharge DROP CONSTRAINT shooter_template_recharge_bank_rule_key`,
  `CREATE UNIQUE INDEX shooter_template_bank_rule_idx ON recon.shooter_template_recharge (bank, md5(rule))`,
  // The parse loop claims the received SMS oldest first.
  `CREATE INDEX shooter_sms_received_idx ON recon.shooter_sms (id) WHERE status = 'received'`,
  ...builtinUpsert(builtins0007)
]
