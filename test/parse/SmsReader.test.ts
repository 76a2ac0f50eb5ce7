// The built-in reader and the guard on its reading: deposits in the layouts banks write (labels,
// the name before or after the amount, after the balance, alone on its line, headers, account
// names, push titles) are read exactly, with any Korean name, names made of the guard's own words
// included; the same messages with the transaction word made outgoing are never deposits. Then
// the balance facts of outgoing messages, and the reader's doubts.
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { classifyTransaction, describeVerdict, readTransaction } from "../../src/parse/DepositGuard.ts"
import { parseSms } from "../../src/parse/SmsParse.ts"
import { templateSet } from "../../src/parse/Templates.ts"
import { readSms } from "../../src/parse/SmsReader.ts"
import { bankOf } from "../../src/parse/SmsTokens.ts"
import { normalizeSmsText } from "../../src/domain/SmsText.ts"
import { builtinTemplates, type DepositNumbers, depositNumbers, money, two } from "../support/parse.ts"

const receivedAt = new Date("2026-11-23T12:00:00+09:00")
const readerOnly = templateSet([])
const withBuiltins = templateSet(builtinTemplates)

interface Deposit extends DepositNumbers {
  readonly name: string
}

/** The parts a layout is written with; `t` is the transaction word (`입금` or what replaces it). */
interface Parts {
  readonly n: string
  readonly a: string
  readonly b: string
  readonly md: string
  readonly hm: string
  readonly t: string
}

interface Layout {
  readonly name: string
  readonly lines: (p: Parts) => ReadonlyArray<string>
  /** The outgoing twin when replacing `t` is not how this layout says money left (sentences, arrows). */
  readonly outgoing?: (p: Parts) => ReadonlyArray<string>
}

// Each modelled on messages of the bank named (see test/corpus/README.md for the real ones).
const layouts: ReadonlyArray<Layout> = [
  { name: "one line (카카오뱅크)", lines: (p) => [`[카카오뱅크] 김*늘님 ${p.md} ${p.hm} ${p.t} ${p.a}원 ${p.n} 잔액 ${p.b}원`] },
  { name: "one line, holder with account tail (카카오뱅크)", lines: (p) => [`[카카오뱅크] 장영*(0276) ${p.md} ${p.hm} ${p.t} ${p.a}원 ${p.n} 잔액 ${p.b}원`] },
  { name: "KB lines", lines: (p) => [`[KB]${p.md} ${p.hm}`, "834702**736", p.n, p.t, p.a, `잔액${p.b}`] },
  { name: "KB one line with the holder", lines: (p) => [`이*름님 ${p.md} ${p.hm} 941602-**-***318 ${p.n} FBS${p.t} ${p.a} 잔액${p.b}`] },
  { name: "KB push: title and body both say it", lines: (p) => [`${p.t} ${p.a}원`, `정*진님 ${p.md} ${p.hm} 582102-**-***852`, `${p.n} 전자금융${p.t} ${p.a} 잔액${p.b}`] },
  { name: "[국제발신] KB", lines: (p) => ["[국제발신]", `[KB]${p.md} ${p.hm}`, "123456**789", p.n, p.t, p.a, `잔액${p.b}`] },
  { name: "NH push with 입출금 알림", lines: (p) => ["입출금 알림", `농협 ${p.t}${p.a}원`, `${p.md} ${p.hm} 356-****-0576-13 ${p.n}`, `잔액${p.b}원`] },
  { name: "NH one line per field group", lines: (p) => [`농협 ${p.t}${p.a}원`, `${p.md} ${p.hm} 352-****-4273-63 ${p.n} 잔액${p.b}원`] },
  { name: "신한: the name after the balance", lines: (p) => [`신한 ${p.md} ${p.hm} 100-***-159993 ${p.t} ${p.a} 잔액 ${p.b} ${p.n}`] },
  { name: "신한 lines", lines: (p) => [`신한${p.md} ${p.hm}`, "110-496-922482", `${p.t} ${p.a}`, `잔액 ${p.b}`, p.n] },
  { name: "우체국: the name alone after the balance", lines: (p) => [`우체국,${p.md} ${p.hm}`, "110******246", `${p.t} ${p.a}원`, `잔액 ${p.b}원`, p.n] },
  { name: "IBK: name, account, bank", lines: (p) => [`2026/${p.md} ${p.hm}`, `${p.t} ${p.a}원`, `잔액 ${p.b}원`, p.n, "469***03801011", "기업"] },
  { name: "새마을금고 one line", lines: (p) => [`<새마을금고>900318**2 ${p.n} ${p.t}${p.a} 잔액${p.b}원 ${p.md} ${p.hm}`] },
  { name: "새마을금고 lines", lines: (p) => ["<새마을금고>1234**5", p.n, `${p.t}${p.a}`, `잔액${p.b}원`, `${p.md} ${p.hm}`] },
  { name: "하나: the name before the amount", lines: (p) => [`하나, ${p.md} ${p.hm}`, "123****456", p.n, `${p.t} ${p.a}원`, `잔액 ${p.b}원`] },
  { name: "하나 app labels", lines: (p) => ["하나은행", `일시 2026.${p.md.replace("/", ".")} ${p.hm}`, `${p.t} ${p.a}원`, "계좌번호 123-******-12345", `적요 ${p.n}`, `잔액 ${p.b}원`] },
  { name: "labelled fields, the amount without separators", lines: (p) => [`[신협] ${p.md} ${p.hm}`, `거래구분: ${p.t}`, `적요: ${p.n}`, `거래금액: ${p.a.replace(/,/g, "")}`, `잔고: ${p.b.replace(/,/g, "")}`] },
  { name: "보낸분 label", lines: (p) => [`[우리은행] ${p.t} ${p.a}원`, `보낸분: ${p.n}`, `${p.md} ${p.hm}`] },
  { name: "우리 WON: [입금] name amount", lines: (p) => [`[${p.t}] ${p.n} ${p.a}원 ${p.md} ${p.hm} 1002-***-123456 잔액 ${p.b}원`] },
  { name: "우리 lines", lines: (p) => [`우리 ${p.md} ${p.hm}`, "*420576", `${p.t} ${p.a}원`, p.n, `잔액 ${p.b}원`] },
  { name: "케이뱅크 one line, the name after 잔액 ****원", lines: (p) => [`[케이뱅크] 홍*동(1234) ${p.t} ${p.a}원 잔액 ****원 ${p.n}`] },
  { name: "카카오뱅크 입출금통장", lines: (p) => [`[카카오뱅크] 입출금통장(1234) ${p.t} ${p.a}원 ${p.n} 잔액 ${p.b}원`] },
  { name: "app push: amount line, then the name", lines: (p) => ["토스뱅크", `${p.t} ${p.a}원`, p.n, `잔액 ${p.b}원`] },
  {
    name: "arrow into a 모임통장",
    lines: (p) => [`${p.t} ${p.a}원`, `${p.n} → 모임통장(7710)`],
    outgoing: (p) => [`${p.t} ${p.a}원`, `모임통장(7710) → ${p.n}`]
  },
  {
    name: "arrow from the payer into the 입출금통장 (←)",
    lines: (p) => [`${p.t} ${p.a}원`, `${p.md} ${p.hm}`, `입출금통장(7897) ← ${p.n}`, `잔액 ${p.b}원`],
    outgoing: (p) => [`${p.t} ${p.a}원`, `${p.md} ${p.hm}`, `${p.n} ← 입출금통장(7897)`, `잔액 ${p.b}원`]
  },
  { name: "bank and 입금 on the first line, the amount after the time", lines: (p) => [`KB국민은행 ${p.t}`, `${p.md} ${p.hm}`, `${p.a}원`, `잔액 ${p.b}원`, p.n] },
  { name: "the payer's account beside the name", lines: (p) => [`카카오뱅크 홍*동`, `${p.md} ${p.hm}`, `${p.t} ${p.a}원`, `${p.n} (출금계좌 1234)`, `잔액 ${p.b}원`] },
  {
    name: "Toss push titled 송금",
    lines: (p) => ["송금", `${p.n}님이 보낸 ${p.a}원이 ${p.t}됐어요`],
    outgoing: (p) => ["송금", `${p.n}님에게 ${p.a}원을 보냈어요`]
  },
  {
    name: "sentence: 님이 보냈어요",
    lines: (p) => [`${p.n}님이 ${p.a}원을 보냈어요`],
    outgoing: (p) => [`${p.n}님께 ${p.a}원을 보냈어요`]
  }
]

const render = (layout: Layout, d: Deposit, t: string, outgoing: boolean, form: { web: boolean }) => {
  const parts: Parts = {
    n: d.name,
    a: money(d.amount, d.commas),
    b: money(d.balance, d.commas),
    md: `${two(d.month)}/${two(d.day)}`,
    hm: `${two(d.hour)}:${two(d.minute)}`,
    t
  }
  const lines = outgoing && layout.outgoing !== undefined ? layout.outgoing(parts) : layout.lines(parts)
  return `${form.web ? "[Web발신]\n" : ""}${lines.join("\n")}`
}

// Common surnames, given-name syllables, and every outgoing and notice word of the guard as a
// syllable pair (서예정, 공지영, 송금희, 이승인, 안내원 are people).
const surnames = [..."김이박최정강조윤장임한오서신권황안송류홍전고문양손배백허유남심노하곽성차주우구민진나지엄채원천방공현함변염여추도소석선설마길연위표명기반왕금옥육인맹제모탁국어은편용예경봉사부가복태목형계피두감음빈동온호범좌팽승간상갈시수견당화창"]
const given = [..."민서준지현우윤도하예은수영진성재희연호정아훈경태주혜동나란미선유숙자순옥철석광용기남규환승원상"]
const guardWords = [
  "출금", "지급", "송금", "이체", "결제", "승인", "취소", "사용", "할부", "누적", "입금", "예정", "예약", "안내", "공지", "알림", "점검", "중단",
  "휴면", "해지", "전환", "변경", "요청", "부탁", "기한", "마감", "대기", "납부", "고지", "청구", "세금", "주문", "배송", "상품", "확인", "광고", "인증"
]
const onlyGuardWords = new RegExp(`^(?:${guardWords.join("|")})+(?:이|가|은|는|의|도)?$`, "u")
const unit = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...given) }, { weight: 2, arbitrary: fc.constantFrom(...guardWords) })
const koreanName = fc.tuple(fc.constantFrom(...surnames), fc.array(unit, { minLength: 1, maxLength: 2 }))
  .map(([surname, rest]) => surname + rest.join(""))
  // Korean names are two to four syllables. Doubt, by design: a name made only of the guard's
  // words, a particle at most after them (`송금`, `전환확인`, `예정은` reads as 예정 + 은); a name that
  // is a bank's short name (경남, 하나), which where a bank's tag stands (`경남 전자금융입금 1`) is
  // read as the bank.
  .filter((name) => name.length <= 4 && !onlyGuardWords.test(name) && bankOf(name) === undefined)

const deposits = fc.tuple(koreanName, depositNumbers).map(([name, numbers]): Deposit => ({ ...numbers, name }))

const outgoingWords = [
  "출금", "이체출금", "체크카드출금", "체크카드 승인", "자동이체", "송금", "지급", "CMS출금", "FBS출금", "인터넷출금", "스마트폰출금",
  "ATM출금", "인출", "결제", "카드결제", "승인", "입금취소", "송금완료", "이체완료"
]
const runs = Number(process.env["PARSE_RUNS"] ?? 150)

describe("the built-in reader, on every layout it accepts", () => {
  for (const layout of layouts) {
    it(`${layout.name}: any Korean name read exactly, never ignored; made outgoing, never a deposit`, () => {
      fc.assert(
        fc.property(deposits, fc.constantFrom(...outgoingWords), fc.record({ web: fc.boolean() }), (d, out, form) => {
          const text = render(layout, d, "입금", false, form)
          for (const templates of [readerOnly, withBuiltins]) {
            const outcome = parseSms({ body: text, sender: "01012345678", receivedAt }, templates)
            if (outcome.status !== "parsed") throw new Error(`${JSON.stringify(text)}: ${JSON.stringify(outcome.detail)}`)
            assert.strictEqual(outcome.payerName, d.name, text)
            assert.strictEqual(outcome.amount, String(d.amount), text)
          }
          const outgoing = render(layout, d, out, true, form)
          const verdict = classifyTransaction(normalizeSmsText(outgoing))
          assert.notStrictEqual(verdict.kind, "deposit", `${JSON.stringify(outgoing)} was a deposit`)
          assert.strictEqual(parseSms({ body: outgoing, sender: "01012345678", receivedAt }, withBuiltins).status, "ignored", outgoing)
        }),
        { numRuns: runs }
      )
    })
  }
})

describe("the guard judges the transaction, not words anywhere", () => {
  const deposit = (text: string) => classifyTransaction(normalizeSmsText(text))
  it("reads past headers, account names, titles the body repeats, and the payer's name", () => {
    for (
      const text of [
        "[카카오뱅크] 입출금통장(1234) 입금 50,000원 박진환 잔액 100,000원", // 입출금통장 holds 출금
        "입출금 알림\n농협 입금10,000원\n07/15 18:38 356-****-0576-13 정효진\n잔액10,000원", // the header holds 출금
        "입금 1,000원 김*늘님 08/28 10:54 110000-**-***000 김하늘 전자금융입금 1,000 잔액1,000", // KB push: title and body
        "송금\n홍길동님이 보낸 50,000원이 입금됐어요", // Toss: titled 송금
        "입금 50,000원\n홍길동 → 모임통장(7710)", // to the holder's own account
        "[Web발신]\n<새마을금고>900318**2\n서예정\n입금100\n잔액100원\n04/10 13:33",
        "[KB]11/23 14:05\n123456**789\n공지영\n입금\n50,000\n잔액1,000,000",
        "농협 입금10,000원\n07/15 18:38 356-****-0576-13 송금희 잔액10,000원",
        "[KB]11/02 14:05 123456**789 이승인 입금 50,000",
        "신한 10/11 21:55 100-***-159993 입금 2,500,000 잔액 3,700,000 안내원"
      ]
    ) assert.strictEqual(deposit(text).kind, "deposit", `${text}: ${describeVerdict(deposit(text))}`)
  })

  it("still refuses on real doubt: several amounts, a title that says otherwise, an arrow to someone", () => {
    assert.strictEqual(deposit("입금 10,000원 입금 20,000원 홍길동").kind, "no_transaction")
    assert.strictEqual(deposit("출금\n[KB]11/23 14:05 123456**789 홍길동 입금 50,000").kind, "outgoing")
    assert.strictEqual(deposit("입금 50,000원\n모임통장(7710) → 홍길동").kind, "outgoing")
    assert.strictEqual(deposit("송금\n홍길동님께 50,000원을 보냈어요").kind, "outgoing")
    assert.strictEqual(deposit("[농협] 입금 예정 안내 10,000원").kind, "no_transaction")
    // 입금 into someone else's account is money out.
    for (const text of ["[토스] 홍길동님에게 50,000원 입금했어요", "홍길동님 계좌로 50,000원 입금 완료", "[우리] 홍길동에게 50,000원 입금", "50,000원이 홍길동님께 입금되었습니다", "홍길동 님께 50,000원 송금"]) {
      assert.strictEqual(deposit(text).kind, "outgoing", text)
    }
    for (const text of ["홍길동님에게서 50,000원이 입금되었습니다", "홍길동으로부터 50,000원이 입금되었습니다", "고객님 계좌로 50,000원이 입금되었습니다. 보낸분 홍길동"]) {
      assert.strictEqual(deposit(text).kind, "deposit", text)
    }
  })
})

describe("balance facts of every transaction message", () => {
  it("are read from outgoing messages as from deposits, the masked account as shown", () => {
    assert.deepStrictEqual(readTransaction(normalizeSmsText("[Web발신]\n농협 출금2,500원\n11/03 17:43 352-****-4273-63 파우PC 잔액5,428원")), {
      direction: "out",
      amount: "2500",
      balance: "5428",
      account: "352-****-4273-63",
      bank: "NH농협",
      time_text: "11/03 17:43",
      counterpart: "파우PC"
    })
    assert.deepStrictEqual(readTransaction(normalizeSmsText("[KB]01/20 10:13\n971372**874\n박희자\n입금\n141,000\n잔액1,033,072")), {
      direction: "in",
      amount: "141000",
      balance: "1033072",
      account: "971372**874",
      bank: "KB국민",
      time_text: "01/20 10:13",
      counterpart: "박희자"
    })
    assert.isUndefined(readTransaction(normalizeSmsText("[신한은행] 인증번호 [482913] 타인에게 알려주지 마세요")))
  })
})

describe("the reader's doubts", () => {
  it("leave a deposit to a person, saying why, rather than guess", () => {
    const failed = (text: string) => {
      const outcome = parseSms({ body: text, sender: "01012345678", receivedAt }, readerOnly)
      assert.strictEqual(outcome.status, "parse_failed", text)
      return outcome.detail.reason!
    }
    assert.match(failed("홍길동 입금 50,000원 김철수"), /two places that could hold the payer's name: "홍길동" and "김철수"/)
    assert.match(failed("[KB]04/12 15:30 123**456 입금 10,000 잔액 1,234,567"), /found no payer name/)
    assert.match(failed("[카카오뱅크] 김*늘님 08/23 14:20 입금 잔액 9,851,574원 박진환"), /found no amount/)
    assert.strictEqual(readSms(normalizeSmsText("홍길동 입금 50,000원 김철수")).counterpart, undefined)
  })
})
