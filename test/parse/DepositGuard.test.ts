// The never-a-deposit guard: every known non-deposit (the corpora's withdrawals and notices and the
// formats modelled on them) is refused, every corpus deposit passes, names that merely contain a
// word of a marker stay names, and what it says is a sentence a person can act on.
import { assert, describe, it } from "@effect/vitest"
import { classifyTransaction, describeVerdict } from "../../src/parse/DepositGuard.ts"
import { knownNonDeposits } from "../../src/parse/NonDeposits.ts"
import { normalizeSmsText } from "../../src/domain/SmsText.ts"
import { bankCorpus, devCorpus } from "../support/corpus.ts"

const verdict = (text: string) => classifyTransaction(normalizeSmsText(text))

describe("the never-a-deposit guard", () => {
  it("refuses every known non-deposit, withdrawals as outgoing money", () => {
    for (const message of knownNonDeposits) {
      const v = verdict(message.text)
      assert.notStrictEqual(v.kind, "deposit", `${message.bank}: ${message.text}`)
      if (message.kind === "wd") assert.strictEqual(v.kind, "outgoing", `${message.bank}: ${message.text} (${describeVerdict(v)})`)
    }
  })

  it("lets every deposit of the corpora through, and refuses every other row", () => {
    for (const row of [...devCorpus, ...bankCorpus]) {
      const v = verdict(row.text)
      if (row.kind === "dep") assert.strictEqual(v.kind, "deposit", `${row.bank}: ${row.text} (${describeVerdict(v)})`)
      else assert.notStrictEqual(v.kind, "deposit", `${row.bank}: ${row.text}`)
    }
  })

  it("says why, in a sentence a person can act on", () => {
    const why = (text: string) => verdict(text)
    assert.deepStrictEqual(why("[KB]04/12 15:30 출금 10,000 잔액 1,224,567"), { kind: "outgoing", reason: "\"출금\" is money out of the account (a withdrawal)" })
    assert.deepStrictEqual(why("[KB]11/18 14:58 279801**027 과일놀이터 체크카드출금 18,000 잔액238,281"), {
      kind: "outgoing",
      reason: "\"체크카드출금\" is money out of the account (a withdrawal)"
    })
    assert.deepStrictEqual(why("[농협] 입금 예정 안내 10,000원"), { kind: "no_transaction", reason: "\"예정\" announces a transaction that has not been made" })
    assert.deepStrictEqual(why("입금 10,000원 입금 20,000원 홍길동"), { kind: "no_transaction", reason: "several transactions in one message (10000 and 20000 won)" })
    assert.deepStrictEqual(why("안녕하세요 반갑습니다"), { kind: "no_transaction", reason: "no deposit word (입금) in the message" })
    assert.deepStrictEqual(why("[한빛몰] 35,000원을 입금하세요"), { kind: "no_transaction", reason: "\"입금하세요\" asks for a payment" })
    assert.deepStrictEqual(why("카카오페이\n김철수님이 30,000원을 보냈어요"), {
      kind: "no_transaction",
      reason: "\"카카오페이\" is a pay app's notice of money sent to the holder, held in the app (not a deposit into the account)"
    })
    assert.deepStrictEqual(why("[토스] 돈 받기 김철수님이 30,000원을 보냈어요"), {
      kind: "no_transaction",
      reason: "\"토스\" is a pay app's notice of money sent to the holder, held in the app (not a deposit into the account)"
    })
    assert.deepStrictEqual(why("[KB] 잔액 1,000"), { kind: "no_transaction", reason: "no deposit word (입금) in the message" })
    assert.deepStrictEqual(why("[하나] ${name}님 ${amount}원 입금"), { kind: "no_transaction", reason: "an unfilled message template (\"${name}\")" })
    assert.strictEqual(describeVerdict(why("내 토스뱅크 통장 → 홍길동 5,000원")), "outgoing money: an arrow points from the account to someone")
    assert.strictEqual(describeVerdict(why("홍길동님께 50,000원을 보냈어요")), "outgoing money: \"보냈어요\" is money sent from the account")
  })

  // Issue 19: real deposits the guard that read words anywhere refused (the verdict it gave then).
  it("reads the deposits that words anywhere in the text used to refuse", () => {
    for (
      const [text, before] of [
        ["[카카오뱅크] 입출금통장(1234) 입금 50,000원 박진환 잔액 100,000원", "출금 (withdrawal)"],
        ["입출금 알림\n농협 입금10,000원\n07/15 18:38 356-****-0576-13 정효진\n잔액10,000원", "출금 (withdrawal)"],
        ["입금 1,000원 김*늘님 08/28 10:54 110000-**-***000 김하늘 전자금융입금 1,000 잔액1,000", "several transactions in one message"],
        ["송금\n홍길동님이 보낸 50,000원이 입금됐어요", "송금 (money sent)"],
        ["입금 50,000원\n홍길동 → 모임통장(7710)", "an arrow from the account to someone"],
        ["[Web발신]\n<새마을금고>900318**2\n서예정\n입금100\n잔액100원\n04/10 13:33", "an announced, not a made, transaction (예정)"],
        ["[KB]11/23 14:05\n123456**789\n공지영\n입금\n50,000\n잔액1,000,000", "a notice"],
        ["농협 입금10,000원\n07/15 18:38 356-****-0576-13 송금희 잔액10,000원", "송금 (money sent)"],
        ["신한 10/11 21:55 100-***-159993 입금 2,500,000 잔액 3,700,000 안내원", "a notice"],
        ["KB스타뱅킹\n입금 10,000원\n정*진님 07/15 18:39 582102-**-***852\n정효진 FBS입금 10,000 잔액10,000", "several transactions in one message"]
      ] as const
    ) assert.strictEqual(verdict(text).kind, "deposit", `${text} (was: ${before}; now: ${describeVerdict(verdict(text))})`)
  })

  it("keeps names that only contain part of a marker, and labels around the payer", () => {
    for (
      const text of [
        "[KB]11/02 14:05 123456**789 이승인 입금 50,000", // 승인 inside a name
        "[한빛상호] 입금 확정\n송금인:김하나\n금액:7,700원", // 송금인 is the payer's label
        "[IBK] 입금 50,000원 입금자:홍길동", // 입금자 is no second transaction
        "홍길동 → 내 토스뱅크 통장 5,112원", // an arrow into the own account
        "김철수님께서 50,000원을 입금했어요", // 님께서: the payer's honorific
        "홍길동님에게 50,000원을 받았어요" // received from someone
      ]
    ) assert.strictEqual(verdict(text).kind, "deposit", text)
  })
})
