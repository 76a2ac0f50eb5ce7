// The built-in reader's release (issue 19; DESIGN section 6, the order of readers). The built-in
// templates are tried before the reader, so a template written for a layout no real message has
// is worse than none: it can read the wrong name where the reader would read the right one.
// - 새마을금고 and 토스뱅크: the guessed layouts give way to the real ones (`<새마을금고>` with the
//   name before 입금; the 토스뱅크 push `5,112원 입금 토스 포인트 → 내 토스뱅크 통장`).
// - Dropped, the built-in reader reading their layouts as well (test/parse/SmsReader.test.ts,
//   the corpus test): the generic and app-push rules, and the regional banks' (부산, 경남, 광주,
//   제주, SC제일, 수협, 씨티) and 케이뱅크's own, written for layouts no real message was seen in.
// Upserted by key (`builtinUpsert`): ids stay, operator templates are untouched, dropped keys go.
import { builtins0007, builtinUpsert, type BuiltinTemplate } from "./0007_parse.ts"

// Building blocks (RE2 syntax), as in 0007.
const amount = String.raw`(?P<amount>\d{1,3}(?:,\d{3})+|\d+)`
const balance = String.raw`잔액 ?:? ?(?P<balance>\d{1,3}(?:,\d{3})+|\d+)`
const nameStart = String.raw`[^\s\d,.*#:\[\]<>/-]`

const replaced: ReadonlyArray<BuiltinTemplate> = [
  // 새마을금고: `<새마을금고>900318**2 장영관 입금100 잔액100원 04/10 13:33`, the same on lines, or
  // `<새마을금고>1234**5\n당근거래 입금70,000` (the amount without 원, the name before 입금).
  {
    key: "mg",
    bank: "새마을금고",
    sender: "15999000",
    sample: "[Web발신]\n<새마을금고>900318**2 장영관 입금100 잔액100원 04/10 13:33",
    rule: String.raw`<(?:MG)?새마을금고>\s*(?P<account>[\d*#-]{4,})\s*(?P<name>${nameStart}[^\n]*?)\s*입금\s*${amount}(?: ?원)?(?:\s*${balance}(?: ?원)?)?(?:\s*(?P<time>\d{1,2}/\d{1,2} ?\d{1,2}:\d{2}))?\s*(?:\n|$)`
  },
  // 토스뱅크 push: `5,112원 입금 토스 포인트 → 내 토스뱅크 통장`.
  {
    key: "tossbank",
    bank: "토스뱅크",
    sender: null,
    sample: "5,112원 입금 토스 포인트 → 내 토스뱅크 통장",
    rule: String.raw`(?:^|\n)${amount} ?원 ?입금\s*(?P<name>${nameStart}[^\n→]*?)\s*(?:→|->)\s*내 토스뱅크 통장`
  }
]

const dropped = new Set([
  "kbank", "busan", "kyongnam", "kwangju", "jeju", "sc", "suhyup", "citi",
  "app_push", "app_sentence", "app_amount_first", "app_arrow",
  "generic_time_account", "generic_amount_time_name", "generic_amount_name"
])

export const builtins0012: ReadonlyArray<BuiltinTemplate> = builtins0007
  .filter((t) => !dropped.has(t.key))
  .map((t) => replaced.find((r) => r.key === t.key) ?? t)

export default builtinUpsert(builtins0012)
