// The built-in reader's release (issue 19; DESIGN section 6, the order of readers). The built-in
// templates are tried before the reader, so a template written for a layout no real message has
// is worse than none: it can read the wrong name where the reader would read the right one.
// - 새마을금고 and 토스뱅크: the guessed layouts give way to the real ones (`<새마을금고>` with the
//   name before 입금; the 토스뱅크 push `5,112원 입금 토스 포인트 → 내 토스뱅크 통장`).
// - Dropped, the built-in reader reading their layouts as well (test/domain/SmsReader.test.ts,
//   the corpus test): the generic and app-push rules, and the regional banks' (부산, 경남, 광주,
//   제주, SC제일, 수협, 씨티) and 케이뱅크's own, written for layouts no real message was seen in.
// The list is src/db/templates/builtin-v2.json, upserted by key (`builtinUpsert`): ids stay,
// operator templates are untouched, dropped keys go.
import { builtins0012, builtinUpsert } from "../BuiltinTemplates.ts"

export default builtinUpsert(builtins0012)
