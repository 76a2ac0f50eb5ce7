// The never-a-deposit guard: every known non-deposit (the corpus's withdrawals and notices and the
// formats modelled on them) is refused, every corpus deposit passes, and names that merely contain
// a word of a marker stay names.
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { classifyTransaction, describeVerdict } from "../../src/domain/DepositGuard.ts"
import { knownNonDeposits } from "../../src/domain/NonDeposits.ts"
import { normalizeSmsText } from "../../src/domain/SmsText.ts"

const verdict = (text: string) => classifyTransaction(normalizeSmsText(text))

const corpus = readFileSync(new URL("../../../shared/corpus/sms-dev.tsv", import.meta.url), "utf8")
  .trim().split("\n").slice(1).map((line) => {
    const [bank, kind, , text] = line.split("\t")
    return { bank: bank!, kind: kind!, text: text!.replaceAll("\\n", "\n") }
  })

describe("the never-a-deposit guard", () => {
  it("refuses every known non-deposit, withdrawals as outgoing money", () => {
    for (const message of knownNonDeposits) {
      const v = verdict(message.text)
      assert.notStrictEqual(v.kind, "deposit", `${message.bank}: ${message.text}`)
      if (message.kind === "wd") assert.strictEqual(v.kind, "outgoing", `${message.bank}: ${message.text} (${describeVerdict(v)})`)
    }
  })

  it("lets every deposit of the corpus through, and refuses every other row", () => {
    for (const row of corpus) {
      const v = verdict(row.text)
      if (row.kind === "dep") assert.strictEqual(v.kind, "deposit", `${row.bank}: ${row.text} (${describeVerdict(v)})`)
      else assert.notStrictEqual(v.kind, "deposit", `${row.bank}: ${row.text}`)
    }
  })

  it("says why", () => {
    assert.deepStrictEqual(verdict("[KB]04/12 15:30 출금 10,000 잔액 1,224,567"), { kind: "outgoing", reason: "출금 (withdrawal)" })
    assert.deepStrictEqual(verdict("[농협] 입금 예정 안내 10,000원"), { kind: "no_transaction", reason: "an announced, not a made, transaction (예정)" })
    assert.deepStrictEqual(verdict("입금 10,000원 입금 20,000원 홍길동"), { kind: "no_transaction", reason: "several transactions in one message" })
    assert.deepStrictEqual(verdict("안녕하세요 반갑습니다"), { kind: "no_transaction", reason: "no deposit word (입금)" })
    assert.deepStrictEqual(verdict("[한빛몰] 35,000원을 입금하세요"), { kind: "no_transaction", reason: "a request to pay" })
    assert.deepStrictEqual(verdict("[KB] 잔액 1,000"), { kind: "no_transaction", reason: "no deposit word (입금)" })
    assert.strictEqual(describeVerdict(verdict("내 토스뱅크 통장 → 홍길동 5,000원")), "outgoing money: an arrow from the account to someone")
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
