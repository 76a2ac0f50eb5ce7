// The ranking of suggestions (pure): generated near-misses of each kind are suggested with their
// reason; unrelated deposits and the exact match never are; the search keys the store uses.
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { compactForComparison } from "../../src/domain/SmsText.ts"
import {
  amountDistance,
  looseNameKey,
  type PendingDeposit,
  searchKeys,
  suggest,
  type SuggestionSubject
} from "../../src/domain/Suggestions.ts"

let nextId = 1
const deposit = (owner: string, amount: string): PendingDeposit => ({
  deposit_id: nextId++,
  player_id: 100 + nextId,
  from_bank_owner: owner,
  amount,
  owner_key: compactForComparison(owner),
  owner_loose_key: looseNameKey(owner)
})
const sms = (payer: string, amount: string, siblings: SuggestionSubject["siblings"] = []): SuggestionSubject => ({
  smsId: 1,
  payerName: payer,
  payerKey: compactForComparison(payer),
  amount,
  siblings
})

const surnames = ["김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "남궁", "황보"]
const syllables = ["민", "서", "준", "지", "현", "우", "예", "도", "하", "윤", "수", "영", "철", "희", "석", "호"]
const koreanName = fc.tuple(fc.constantFrom(...surnames), fc.array(fc.constantFrom(...syllables), { minLength: 2, maxLength: 2 }))
  .map(([s, rest]) => s + rest.join(""))
const amount = fc.integer({ min: 10, max: 5000 }).map((n) => String(n * 1000))

describe("each kind of near miss is suggested with its reason", () => {
  it("name_separators: a dot, underscore, middle dot or hyphen inside the name", () =>
    fc.assert(fc.property(koreanName, amount, fc.constantFrom(".", "_", "·", "-", "ㆍ"), fc.nat(), (name, a, sep, at) => {
      const cut = 1 + (at % (name.length - 1))
      const found = suggest(sms(name.slice(0, cut) + sep + name.slice(cut), a), [deposit(name, a)])
      assert.strictEqual(found.length, 1)
      assert.deepStrictEqual(found[0]!.reasons, ["name_separators"])
    })))

  it("name_prefix: a bank or a code glued before the name, or a code after it", () => {
    for (const [payer, owner] of [["coin1147 박석호", "박석호"], ["국민김철수", "김철수"], ["KB김철수", "김철수"], ["088-조휘서(", "조휘서"],
      ["국민은행 이영희", "이영희"], ["김철수1234", "김철수"], ["ＫＢ국민홍길동", "홍길동"]] as const) {
      const found = suggest(sms(payer, "50000"), [deposit(owner, "50000")])
      assert.deepStrictEqual(found.map((s) => s.reasons), [["name_prefix"]], payer)
    }
    fc.assert(fc.property(koreanName, amount, fc.stringMatching(/^[a-z]{2,6}[0-9]{1,5}$/), (name, a, code) => {
      assert.deepStrictEqual(suggest(sms(`${code} ${name}`, a), [deposit(name, a)]).map((s) => s.reasons), [["name_prefix"]])
    }))
  })

  it("name_truncated: the bank cut the name short", () => {
    const found = suggest(sms("(주)패러블엔터", "1000000"), [deposit("(주)패러블엔터테인먼트", "1000000")])
    assert.deepStrictEqual(found.map((s) => s.reasons), [["name_truncated"]])
    fc.assert(fc.property(koreanName, fc.array(fc.constantFrom(...syllables), { minLength: 1, maxLength: 6 }), amount, (name, more, a) => {
      const owner = name + more.join("")
      assert.deepStrictEqual(suggest(sms(name, a), [deposit(owner, a)]).map((s) => s.reasons), [["name_truncated"]])
    }))
  })

  it("masked_name: the bank masked characters of the name", () =>
    fc.assert(fc.property(koreanName, amount, fc.nat(), (name, a, at) => {
      const chars = [...name]
      const i = 1 + (at % (chars.length - 1))
      const masked = chars.map((c, j) => j === i ? "*" : c).join("")
      assert.deepStrictEqual(suggest(sms(masked, a), [deposit(name, a)]).map((s) => s.reasons), [["masked_name"]])
    })))

  it("amount_differs: the same name, an amount within 1 % (at least 1,000 won) of the deposit's", () => {
    assert.deepStrictEqual(suggest(sms("홍길동", "50500"), [deposit("홍길동", "50000")]).map((s) => s.reasons), [["amount_differs"]])
    assert.deepStrictEqual(suggest(sms("홍길동", "1009000"), [deposit("홍길동", "1000000")]).map((s) => s.reasons), [["amount_differs"]])
    assert.deepStrictEqual(suggest(sms("홍.길동", "49000"), [deposit("홍길동", "50000")]).map((s) => s.reasons), [["name_separators", "amount_differs"]])
    // Too far: another order of the same person.
    assert.deepStrictEqual(suggest(sms("홍길동", "30000"), [deposit("홍길동", "50000")]), [])
    assert.deepStrictEqual(suggest(sms("홍길동", "1011000"), [deposit("홍길동", "1000000")]), [])
    assert.strictEqual(amountDistance("50000", "50000"), 0)
    assert.strictEqual(amountDistance("51000", "50000"), 1)
    assert.isUndefined(amountDistance("51001", "50000"))
  })

  it("sum_of_sms: several SMS of one payer add up to the deposit; the SMS are named", () => {
    const found = suggest(sms("김민준", "30000", [{ smsId: 7, amount: "25000" }, { smsId: 8, amount: "20000" }]), [deposit("김민준", "50000")])
    assert.deepStrictEqual(found.map((s) => [s.reasons, s.sms_ids]), [[["sum_of_sms"], [1, 8]]])
    const three = suggest(sms("김민준", "10000", [{ smsId: 7, amount: "10000" }, { smsId: 8, amount: "10000" }, { smsId: 9, amount: "5000" }]),
      [deposit("김민준", "30000")])
    assert.deepStrictEqual(three.map((s) => s.sms_ids), [[1, 7, 8]])
    assert.deepStrictEqual(suggest(sms("김민준", "30000", [{ smsId: 7, amount: "25000" }]), [deposit("김민준", "50000")]), [])
  })
})

describe("what is never suggested", () => {
  it("the exact match (same name, same amount): that is match.candidates", () => {
    assert.deepStrictEqual(suggest(sms("김 민준", "50000"), [deposit("김민준", "50000")]), [])
  })

  it("deposits of unrelated names, whatever their amount", () =>
    fc.assert(fc.property(koreanName, koreanName, amount, (a, b, x) => {
      fc.pre(a !== b && !a.startsWith(b) && !b.startsWith(a))
      assert.deepStrictEqual(suggest(sms(a, x), [deposit(b, x), deposit(b, String(Number(x) + 500))]), [])
    })))

  it("a glued prefix that is neither a bank nor a code, a name too short to be cut, a mask that does not fit", () => {
    assert.deepStrictEqual(suggest(sms("엄마김철수", "50000"), [deposit("김철수", "50000")]), [])
    assert.deepStrictEqual(suggest(sms("김철", "50000"), [deposit("김철수", "50000")]), [])
    assert.deepStrictEqual(suggest(sms("김*수", "50000"), [deposit("김철민", "50000"), deposit("김철수영", "50000")]), [])
  })

  it("an SMS without a payer or an amount", () => {
    assert.deepStrictEqual(suggest({ ...sms("김민준", "50000"), payerName: null, payerKey: null }, [deposit("김.민준", "50000")]), [])
    assert.deepStrictEqual(suggest({ ...sms("김민준", "50000"), amount: null }, [deposit("김.민준", "50000")]), [])
  })
})

describe("ranking", () => {
  it("at most 5, the likeliest first, each deposit once", () => {
    const deposits = [
      deposit("홍길동", "50900"), // amount_differs
      deposit("홍.길동", "50000"), // name_separators
      deposit("홍길동님", "50000"), // name_truncated
      deposit("홍길동", "50100"),
      deposit("KB홍길동", "50000"),
      deposit("홍길동", "50500"),
      deposit("홍길동", "50700")
    ]
    const found = suggest(sms("홍길동", "50000"), [...deposits, deposits[1]!])
    assert.strictEqual(found.length, 5)
    assert.deepStrictEqual(found[0]!.reasons, ["name_separators"])
    assert.isTrue(found.every((s, i) => i === 0 || s.score <= found[i - 1]!.score))
    assert.strictEqual(new Set(found.map((s) => s.deposit_id)).size, 5)
    // Among equal names the nearer amount ranks higher.
    const differs = found.filter((s) => s.reasons.includes("amount_differs")).map((s) => s.amount)
    assert.deepStrictEqual(differs, [...differs].sort((a, b) => Number(a) - Number(b)))
  })
})

describe("search keys (what the store asks the indexes for)", () => {
  it("the name, and the name without a glued bank or code", () => {
    assert.includeMembers([...searchKeys("coin1147 박석호").keys], ["coin1147박석호", "박석호"])
    assert.includeMembers([...searchKeys("김철수1234").keys], ["김철수1234", "김철수"])
    assert.notInclude([...searchKeys("엄마김철수").keys], "김철수")
    assert.strictEqual(searchKeys("(주)패러블엔터").truncated, "주패러블엔터")
    assert.isNull(searchKeys("김철").truncated)
  })

  it("a masked name: a LIKE pattern and the unmasked side to search by", () => {
    assert.deepStrictEqual(searchKeys("김*수").masked, { pattern: "김_수", prefix: "김", reversedSuffix: null })
    assert.deepStrictEqual(searchKeys("*철수").masked, { pattern: "_철수", prefix: null, reversedSuffix: "수철" })
    assert.deepStrictEqual(searchKeys("김*객12").masked, { pattern: "김_객12", prefix: null, reversedSuffix: "21객" })
    assert.isNull(searchKeys("***").masked)
  })
})
