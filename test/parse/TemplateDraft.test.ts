// Drafting a template rule from one SMS a person read: the marked name and amount become the
// groups, the layout stays (escaped), what varies between messages (digits, masks, white space) is
// generalised; the rule reads other messages of the layout and nothing it should not.
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { draftRule, draftTemplate } from "../../src/parse/TemplateDraft.ts"
import { normalizeSmsText } from "../../src/domain/SmsText.ts"

const drafted = (body: string, name: string, amount: string) => {
  const result = draftTemplate(body, name, amount)
  if (Result.isFailure(result)) throw new Error(result.failure)
  return result.success
}
const reads = (rule: ReturnType<typeof drafted>, body: string) => rule.extract(normalizeSmsText(body))

describe("draftTemplate", () => {
  it("KB's lines: the name before the amount; another deposit of the layout is read with its own name, amount and digits", () => {
    const rule = drafted("[Web발신]\n[KB]11/23 16:02\n834702**717\n김민준\n입금\n50,000\n잔액1,250,000", "김민준", "50000")
    assert.strictEqual(rule.rule.startsWith("\\[KB\\]"), true)
    assert.deepInclude(reads(rule, "[Web발신]\n[KB]01/02 09:15\n834702**717\n최지우\n입금\n1,200,000\n잔액9,999,999"), { name: "최지우", amount: "1200000" })
    // Line breaks stripped by a forwarder: the same layout on one line.
    assert.deepInclude(reads(rule, "[KB]01/02 09:15 834702**717 이영희 입금 7,000 잔액10,000"), { name: "이영희", amount: "7000" })
    assert.isUndefined(reads(rule, "[Web발신]\n[KB]01/02 09:15\n834702**717\n쿠팡\n출금\n8,110\n잔액9,999"))
  })

  it("NH's one line: the amount before the name, masks and account digits generalised", () => {
    const rule = drafted("[Web발신]\n농협 입금30,000원\n11/23 16:03 352-****-4273-63 이도윤 잔액3,710,000원", "이도윤", "30000")
    assert.include(rule.rule, "\\*+")
    assert.deepInclude(reads(rule, "[Web발신]\n농협 입금1,000원\n12/31 23:59 351-****-1111-22 Kim Bo 잔액1,000원"), { name: "Kim Bo", amount: "1000" })
  })

  it("a name last in the message is read to the end of its line; decimals and brackets in the layout", () => {
    const rule = drafted("[Web발신]\n신한11/23 16:04\n110-496-922482\n입금     70,000.50\n잔액    870,045\n 박서연", "박서연", "70000.50")
    assert.deepInclude(reads(rule, "[Web발신]\n신한01/05 10:00\n110-496-922482\n입금 5,000\n잔액 875,045\n 남궁 민수"), { name: "남궁 민수", amount: "5000" })
    const paren = drafted("[Web발신]\n[새마을] 12/03 14:22 입금\n의뢰인:홍길동 금액:50,000원 (잔고 1,000,000)", "홍길동", "50000")
    assert.include(paren.rule, "\\(잔고")
    assert.deepInclude(reads(paren, "[새마을] 01/03 08:00 입금\n의뢰인:서예정 금액:10원 (잔고 10)"), { name: "서예정", amount: "10" })
  })

  it("says why no rule can be made: the name or the amount not in the text, or the amount only inside the name", () => {
    const body = "[Web발신]\n[KB]11/23 16:02\n834702**717\n김민준\n입금\n50,000\n잔액1,250,000"
    assert.deepStrictEqual(draftRule(body, "김민수", "50000"), Result.fail("the payer name \"김민수\" is not written in the message as it is"))
    assert.deepStrictEqual(draftRule(body, "김민준", "60000"), Result.fail("the amount 60000 is not written in the message"))
    assert.deepStrictEqual(draftRule("입금 홍길동50000", "홍길동50000", "50000"), Result.fail("the amount 50000 is not written in the message"))
    assert.isTrue(Result.isFailure(draftTemplate("[Web발신]\n[KB]11/23 16:02\n834702**717\n쿠팡\n출금\n8,110\n잔액1,250,000", "쿠팡", "8110")))
  })
})
