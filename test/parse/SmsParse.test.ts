// Reading SMS with the built-in templates (the rules the latest migration installs) and the
// built-in reader after them: generated deposits in every layout a built-in template was written
// for (random names, amounts, dates, with and without `[Web발신]`, line breaks kept or stripped)
// give back the exact name and amount, whichever reads them; the same texts with the deposit word
// made outgoing are never deposits. Then the pieces: payer names, the year rule, template order, a
// rule that throws.
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { payerName } from "../../src/parse/PayerName.ts"
import { type ParseReport, parseSms, slowRuleMillis } from "../../src/parse/SmsParse.ts"
import { type LoadedTemplate, templateSet } from "../../src/parse/Templates.ts"
import { readTransactionTime, seoulIso } from "../../src/parse/TransactionTime.ts"
import { normalizeSmsText } from "../../src/domain/SmsText.ts"
import { tokenize } from "../../src/parse/SmsTokens.ts"
import { compileRule } from "../../src/parse/TemplateRule.ts"
import { builtins as builtinList, builtinTemplates, type DepositNumbers, depositNumbers, money, two } from "../support/parse.ts"

const builtins = templateSet(builtinTemplates)
const receivedAt = new Date("2026-11-23T12:00:00+09:00")
const parse = (body: string, sender = "01012345678") => parseSms({ body, sender, receivedAt }, builtins)

describe("the built-in templates", () => {
  it("each reads its own sample, and every sample is read as a deposit with all the built-ins", () => {
    for (const [i, t] of builtinList.entries()) {
      const own = builtinTemplates[i]!.rule
      assert.isDefined("extract" in own && own.extract(normalizeSmsText(t.sample)), t.key)
      const outcome = parse(t.sample, t.sender ?? undefined)
      assert.strictEqual(outcome.status, "parsed", `${t.key}: ${JSON.stringify(outcome.detail)}`)
      // The sender's own templates come first: a bank's sample is read by that bank's template.
      if (outcome.status === "parsed" && t.sender !== null) assert.strictEqual(builtinList[outcome.templateId! - 1]!.bank, t.bank, t.key)
    }
  })

  it("have stable unique keys, a sender where the bank's number is known, and every bank DESIGN names", () => {
    assert.strictEqual(new Set(builtinList.map((t) => t.key)).size, builtinList.length)
    const banks = new Set(builtinList.map((t) => t.bank))
    for (
      const bank of ["KB국민", "NH농협", "신한", "우리", "하나", "IBK기업", "카카오뱅크", "토스뱅크", "케이뱅크", "신협", "새마을금고", "우체국", "iM뱅크", "KDB산업", "전북"]
    ) assert.isTrue(banks.has(bank), bank)
    assert.strictEqual(builtinList.find((t) => t.key === "kb")?.sender, "16449999")
    assert.strictEqual(builtinList.find((t) => t.key === "nh")?.sender, "15882100")
  })

  it("read the formats real forwarders deliver", () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      // Line breaks stripped: fields run together.
      ["[KB]09/04 00:03834702**736송선한전자금융입금100잔액11,892", "송선한", "100"],
      // A name whose first syllable is 원 right after an amount.
      ["[IBK]06/12 14:23\n입금 11,000원\n원병철\n잔액 984,567원", "원병철", "11000"],
      ["iM뱅크 09/27 13:52\n50813*03093\n입금 11,000\n잔액 1,189,248\n원병철", "원병철", "11000"],
      // Masked holder names before the real payer.
      ["[카카오뱅크] 김*늘님 08/23 14:20 입금 500,000원 박진환 잔액 9,851,574원", "박진환", "500000"],
      ["[Web발신] [카카오뱅크] 장영*(0276) 08/23 14:20 입금 500,000원 박진환 잔액 9,851,574원", "박진환", "500000"],
      ["이*름님 04/01 14:48 941602-**-***318 이푸름 FBS입금 1,000 잔액225,023", "이푸름", "1000"],
      // KB type words and a trailing bank line.
      ["[Web발신]\n[KB]09/04 00:03\n834702**736\n송선한\n스마트폰입금\n100\n잔액11,892\n(국민은행)", "송선한", "100"],
      ["[KB]09/04 00:03\n834702**736\n(주) 한국 상사\nCMS입금\n1,000\n잔액11,892", "(주) 한국 상사", "1000"],
      ["[KB]09/04 00:03\n834702**736\n홍길동\n무통장입금\n1,000", "홍길동", "1000"],
      // Payers that are codes.
      ["농협 입금50,000원\n11/20 10:00 352-****-4273-63 CMS 00012 잔액1,000원", "CMS 00012", "50000"],
      // Amount-first and arrow pushes.
      ["5,112원 입금 홍길동", "홍길동", "5112"],
      ["토스뱅크\n5,112원 입금\n홍길동 → 내 토스뱅크 통장", "홍길동", "5112"],
      ["홍길동 → 내 토스뱅크 통장 5,112원", "홍길동", "5112"],
      ["홍길동님에게 50,000원을 받았어요", "홍길동", "50000"],
      ["[입금] 50,000원 김철수", "김철수", "50000"],
      // Fields where some banks put them: time after the amount or the name, balance before the name.
      ["[Sh수협은행] 입금 50,000원 11/23 14:05 홍길동", "홍길동", "50000"],
      ["[광주은행]입금 50,000원 홍길동 11/23 14:05 잔액 100,000원", "홍길동", "50000"],
      ["[부산은행] 11/23 14:05 101-2***-5678-09 입금 50,000원 잔액 1,000,000원 홍길동", "홍길동", "50000"],
      ["[신한은행] 11/23 14:05 입금 50,000원 홍길동 잔액 1,234,567원", "홍길동", "50000"],
      // A purchase refunded into the account is a deposit (it simply matches no order).
      ["[KB]11/20 10:00\n279801**027\n쿠팡\n입금\n18,000\n잔액238,281", "쿠팡", "18000"],
      // Full-width digits and commas.
      ["입금 １０，０００원\n04/12   15:30  홍길동", "홍길동", "10000"]
    ]
    for (const [text, name, amount] of cases) {
      const outcome = parse(text)
      assert.strictEqual(outcome.status, "parsed", `${text}: ${JSON.stringify(outcome.detail)}`)
      if (outcome.status === "parsed") {
        assert.strictEqual(outcome.payerName, name, text)
        assert.strictEqual(outcome.amount, amount, text)
      }
    }
  })

  it("never credit a masked holder, the balance or an account number: a deposit without a payer line fails with the reason", () => {
    for (
      const text of [
        "[KB]04/12 15:30 123**456 입금 10,000 잔액 1,234,567",
        "[Web발신]\n[KB]04/12 15:30\n123**456\n입금\n10,000\n잔액 1,234,567",
        "[KB]08/18 10:00\n821337**680\n이*름님\n입금\n1,000,000",
        "[카카오뱅크] 김*늘님 08/23 14:20 입금 500,000원 잔액 9,851,574원"
      ]
    ) {
      const outcome = parse(text)
      assert.strictEqual(outcome.status, "parse_failed", `${text}: ${JSON.stringify(outcome)}`)
      assert.match(outcome.detail.reason!, /^a deposit (without a payer name|that no template reads)/)
    }
  })
})

// ---------------------------------------------------------------------------------------------
// Generated deposits in every layout
// ---------------------------------------------------------------------------------------------

interface Deposit extends DepositNumbers {
  readonly name: string
  readonly holder: string
}

interface Layout {
  readonly key: string
  /** The SMS as lines (one line for single-line layouts). */
  readonly lines: (d: Deposit, amount: string, balance: string, md: string, hm: string) => ReadonlyArray<string>
  /** False where stripping the line breaks leaves fields that nothing can separate. */
  readonly strippable?: boolean
  /** The name may not contain spaces (sentence pushes) or must be one the layout can delimit. */
  readonly names?: "words" | "oneWord"
}

const common = (prefix: string): Layout["lines"] => (d, a, b, md, hm) => [`${prefix} ${md} ${hm} 101-2***-5678-09 입금 ${a}원 ${d.name} 잔액 ${b}원`]

const layouts: ReadonlyArray<Layout> = [
  { key: "kb", lines: (d, a, b, md, hm) => [`[KB]${md} ${hm}`, "123456**789", d.name, "입금", a, `잔액${b}`] },
  { key: "kb", lines: (d, a, b, md, hm) => [`${d.holder} ${md} ${hm} 941602-**-***318 ${d.name} FBS입금 ${a} 잔액${b}`] },
  { key: "kb", lines: (d, a, b, md, hm) => [`[KB]${md} ${hm}`, "834702**736", d.name, "전자금융입금", a, `잔액${b}`, "(국민은행)"] },
  { key: "kb_amount_first", lines: (d, a, _b, md, hm) => [`[KB국민] ${md} ${hm} 444401-01-499150 입금 ${a}원 ${d.name}`] },
  { key: "nh", lines: (d, a, b, md, hm) => [`농협 입금${a}원`, `${md} ${hm} 352-****-4273-63 ${d.name} 잔액${b}원`] },
  { key: "nh_legacy", lines: (d, a, b) => [`농협 2010/02/17 302-0080-1997-** ${a}원(${d.name})입금.잔액${b}원`] },
  { key: "shinhan", lines: (d, a, b, md, hm) => [`신한${md} ${hm}`, "110-496-922482", `입금     ${a}`, `잔액    ${b}`, ` ${d.name}`] },
  { key: "shinhan", lines: (d, a, b, md, hm) => [`신한 ${md} ${hm} 110-***-123456 입금 ${a} 잔액 ${b} ${d.name}`] },
  { key: "woori", lines: (d, a, b, md, hm) => [`우리 ${md} ${hm}`, "1002***123456", `입금 ${a}원`, d.name, `잔액 ${b}원`] },
  { key: "hana", lines: (d, a, b, md, hm) => [`하나,${md}, ${hm}`, "255******31304", `입금${a}원`, d.name, `잔액${b}원`] },
  { key: "hana", lines: (d, a, b, md, hm) => [`[하나은행] 2026.${md.replace("/", ".")} ${hm} 입금 ${a}원 ${d.name} 잔액 ${b}원`] },
  { key: "ibk", lines: (d, a, b, md, hm) => [`2026/${md} ${hm}`, `입금 ${a}원`, `잔액 ${b}원`, d.name, "469***03801011", "기업"] },
  { key: "ibk_short", lines: (d, a, b, md, hm) => [`[IBK]${md} ${hm}`, `입금 ${a}원`, d.name, `잔액 ${b}원`, "123-******-01-012"] },
  { key: "kakaobank", lines: (d, a, b, md, hm) => [`[카카오뱅크] ${d.holder} ${md} ${hm} 입금 ${a}원 ${d.name} 잔액 ${b}원`] },
  { key: "kakaobank", lines: (d, a, b, md, hm) => ["[카카오뱅크]", d.holder, `${md} ${hm}`, `입금 ${a}원`, d.name, `잔액 ${b}원`] },
  { key: "tossbank", lines: (d, a, b, md, hm) => [`[토스뱅크] ${d.holder} ${md} ${hm} 입금 ${a}원 ${d.name} 잔액 ${b}원`] },
  { key: "kbank", lines: (d, a, b, md, hm) => [`[케이뱅크] ${d.holder} ${md} ${hm} 입금 ${a}원 ${d.name} 잔액 ${b}원`] },
  {
    key: "kbank_aggregator",
    lines: (d, a, _b, md, hm) => [`2025/${md} ${hm}:46`, `입금 ${a}원`, "coinpos365", d.name, "100157160105", "케이뱅크", "20250629"],
    strippable: false
  },
  { key: "cu", lines: (d, a, b, md, hm) => [`신협132*****2222 ${md} ${hm} 입금 ${a}원 ${d.name} 잔액${b}원`] },
  { key: "mg", lines: (d, a, b, md, hm) => ["[MG새마을금고]", `${md} ${hm}`, "9002-****-1234", `입금 ${a}원`, d.name, `잔액 ${b}원`] },
  { key: "epost", lines: (d, a, b, _md, hm) => [`우체국,${hm}`, "610********249", `입금${a}원`, `잔액${b}원`, d.name] },
  { key: "im", lines: (d, a, b, md, hm) => [`iM뱅크 ${md} ${hm}`, "50813*03093", `입금 ${a}`, `잔액 ${b}`, d.name] },
  { key: "kdb", lines: (d, a, b, _md, hm) => ["(KDB)020****3636709", "입금", `${a}원`, d.name, `잔액${b}원 ${hm}:35`] },
  { key: "jb", lines: (d, a, b, md, hm) => ["[전북]####946", `입금${a}원`, `잔액${b}원`, `${md} ${hm}`, d.name] },
  { key: "kis", lines: (d, a, b, _md, hm) => [`[한국투자]${hm}`, "43****82-01", "이체입금", `${a}원`, `(잔액${b})`, d.name] },
  { key: "busan", lines: common("[부산은행]") },
  { key: "kyongnam", lines: common("[경남은행]") },
  { key: "kwangju", lines: common("[광주은행]") },
  { key: "jeju", lines: common("[제주은행]") },
  { key: "sc", lines: common("[SC제일은행]") },
  { key: "suhyup", lines: common("[수협]") },
  { key: "citi", lines: common("[씨티은행]") },
  { key: "app_push", lines: (d, a, b, md, hm) => ["카카오뱅크", `${md} ${hm}`, `입금 ${a}원`, `${d.name}님`, `잔액 ${b}원`] },
  { key: "app_push", lines: (d, a, b, md, hm) => ["신한은행", `입금 ${a}원`, `${md} ${hm}`, `${d.name}님`, `잔액: ${b}원`] },
  { key: "app_sentence", lines: (d, a) => [`[카카오뱅크] ${d.name}님이 3333-**-1234567 계좌로 ${a}원을 입금했어요.`], names: "oneWord" },
  { key: "app_sentence", lines: (d, a) => [`${d.name}님이 ${a}원을 보냈어요`], names: "oneWord" },
  { key: "app_amount_first", lines: (d, a) => [`${a}원 입금`, `${d.name} → 내 토스뱅크 통장`] },
  { key: "app_arrow", lines: (d, a) => [`${d.name} → 내 토스뱅크 통장 ${a}원`] },
  { key: "generic_amount_time_name", lines: (d, a, _b, md, hm) => [`입금 ${a}원`, `${md} ${hm} ${d.name}`] }
]

const syllables = [..."김이박최정강조윤장임한오서신권황안송류홍전고문양손배백허유남심노하곽성차주우구민진나지엄채원천방공현함변염여추도소석선설마길연위표명기반왕금옥육인맹제모탁국어은편용예경봉사부가복태목형계피두감음빈동온호범좌팽승간상갈시수견당화창"]
const hangulName = fc.array(fc.constantFrom(...syllables), { minLength: 2, maxLength: 4 }).map((s) => s.join(""))
const latinWord = fc.array(fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"), { minLength: 2, maxLength: 8 }).map((s) => s.join(""))
/**
 * Names whose every word is a word and nothing else (a name word that is itself a keyword or an
 * account's name, 예정, 변경, 계좌, is doubt, by design: test/parse/SmsReader.test.ts generates
 * real names with the guard's words inside them).
 */
const innocent = (name: string) => name.split(" ").every((word) => tokenize(word).every((t) => t.kind === "word" || t.kind === "holder"))
const names = (oneWord: boolean) =>
  fc.oneof(
    hangulName,
    hangulName.map((n) => `(주)${n}`),
    hangulName.map((n) => `원${n.slice(1)}`),
    ...(oneWord ? [] : [fc.tuple(latinWord, latinWord).map(([a, b]) => `${a} ${b}`), fc.tuple(hangulName, hangulName).map(([a, b]) => `${a} ${b}`)])
  ).filter(innocent)
const holders = fc.oneof(
  hangulName.map((n) => `${n[0]}*${n.slice(-1)}님`),
  fc.tuple(hangulName, fc.integer({ min: 0, max: 9999 })).map(([n, k]) => `${n.slice(0, 2)}*(${String(k).padStart(4, "0")})`)
).filter(innocent)
const deposits = (oneWord: boolean) =>
  fc.tuple(names(oneWord), holders, depositNumbers).map(([name, holder, numbers]): Deposit => ({ ...numbers, name, holder }))
const forms = fc.record({ web: fc.boolean(), strip: fc.boolean(), senderLine: fc.boolean() })

const render = (layout: Layout, d: Deposit, form: { web: boolean; strip: boolean; senderLine: boolean }) => {
  const lines = layout.lines(d, money(d.amount, d.commas), money(d.balance, d.commas), `${two(d.month)}/${two(d.day)}`, `${two(d.hour)}:${two(d.minute)}`)
  const body = lines.join(form.strip && layout.strippable !== false ? "" : "\n")
  return `${form.senderLine ? "보낸사람 : 15880000()\n" : ""}${form.web ? "[Web발신]\n" : ""}${body}`
}

/** Where a stripped text can only be read one way: the name must not run into the numbers around it. */
const separable = (layout: Layout, d: Deposit, strip: boolean) =>
  !strip || layout.strippable === false || (!/\d$/.test(d.name) && !d.name.startsWith("원"))

const outgoingWords = ["출금", "지급", "이체출금", "체크카드출금", "스마트폰출금", "인터넷출금", "지로출금", "FBS출금", "자동이체"]

describe("generated deposits in every layout a built-in template was written for", () => {
  for (const [i, layout] of layouts.entries()) {
    it(`${layout.key} (${i}): the exact name and amount; made outgoing, never a deposit`, () => {
      fc.assert(
        fc.property(deposits(layout.names === "oneWord"), forms, fc.constantFrom(...outgoingWords), (d, form, out) => {
          fc.pre(separable(layout, d, form.strip))
          const text = render(layout, d, form)
          const outcome = parse(text)
          if (outcome.status !== "parsed") throw new Error(`${JSON.stringify(text)}: ${JSON.stringify(outcome.detail)}`)
          assert.strictEqual(outcome.payerName, d.name.replace(/\s+/g, " "), text)
          assert.strictEqual(outcome.amount, String(d.amount), text)

          const outgoing = layout.key === "app_sentence"
            ? text.replace("님이", "님께").replace("입금했어요", "보냈어요")
            : layout.key === "app_amount_first" || layout.key === "app_arrow"
            ? text.replace(`${d.name} → 내 토스뱅크 통장`, `내 토스뱅크 통장 → ${d.name}`).replace("원 입금", "원 출금")
            : text.replace(/(?:전자금융|FBS|이체)?입금/, out)
          const refused = parse(outgoing)
          assert.strictEqual(refused.status, "ignored", `${JSON.stringify(outgoing)} was ${refused.status}`)
        }),
        { numRuns: Number(process.env["PARSE_RUNS"] ?? 150) }
      )
    })
  }
})

// ---------------------------------------------------------------------------------------------
// The pieces
// ---------------------------------------------------------------------------------------------

describe("payer names", () => {
  it("are kept as printed, without the honorific 님", () => {
    assert.deepStrictEqual(payerName(" 김철수님 "), { name: "김철수" })
    assert.deepStrictEqual(payerName("088-조휘서("), { name: "088-조휘서(" })
    assert.deepStrictEqual(payerName("새마을금  시명길"), { name: "새마을금 시명길" })
  })
  it("refuse masked holders, numbers, the balance line and bank lines", () => {
    for (const text of ["김*늘님", "장영*(0276)", "123-456-789", "10,000원", "15:30", "잔액 1,234", "(국민은행)", ""]) {
      assert.isTrue("rejected" in payerName(text), text)
    }
  })
})

describe("the transaction time", () => {
  const at = (text: string, received: string) => {
    const read = readTransactionTime(text, new Date(received))
    return read === undefined ? undefined : seoulIso(read)
  }
  it("puts MM/DD in the year that makes it nearest before the time received, in Asia/Seoul", () => {
    assert.strictEqual(at("12/31 23:59", "2027-01-01T00:01:00+09:00"), "2026-12-31T23:59:00+09:00")
    assert.strictEqual(at("01/01 00:00", "2027-01-01T00:01:00+09:00"), "2027-01-01T00:00:00+09:00")
    // Received 2026-12-31 15:30 UTC is already New Year's Day in Seoul.
    assert.strictEqual(at("01/01 00:20", "2026-12-31T15:30:00Z"), "2027-01-01T00:20:00+09:00")
    assert.strictEqual(at("06/12 14:23", "2026-03-01T00:00:00+09:00"), "2025-06-12T14:23:00+09:00")
    // 02/29 only exists in leap years: the nearest one before.
    assert.strictEqual(at("02/29 10:00", "2027-03-01T00:00:00+09:00"), "2024-02-29T10:00:00+09:00")
  })
  it("reads full dates, times alone and seconds", () => {
    assert.strictEqual(at("2026/08/10 14:49", "2026-11-23T00:00:00Z"), "2026-08-10T14:49:00+09:00")
    assert.strictEqual(at("2026.12.11 22:05", "2026-12-12T00:00:00Z"), "2026-12-11T22:05:00+09:00")
    assert.strictEqual(at("08/07, 15:33", "2026-08-07T10:00:00Z"), "2026-08-07T15:33:00+09:00")
    assert.strictEqual(at("16:07:35", "2026-08-07T10:00:00Z"), "2026-08-07T16:07:35+09:00")
    // A time later than the time received is yesterday's.
    assert.strictEqual(at("23:47", "2026-08-07T00:00:00+09:00"), "2026-08-06T23:47:00+09:00")
  })
})

describe("template order and failures", () => {
  const rule = (source: string) => {
    const compiled = compileRule(source)
    if (Result.isFailure(compiled)) throw new Error(compiled.failure.detail)
    return compiled.success
  }
  const text = "[Web발신]\n[KB]11/02 14:05\n123456**789\n홍길동\n입금\n50,000"
  /**
   * Runs `run` with performance.now (the clock parseSms times each rule with) on a clock the test
   * moves: a rule takes the time the test says, however fast or loaded the machine is.
   */
  const onTestClock = <A>(run: (pass: (millis: number) => void) => A): A => {
    const { now } = performance
    let millis = 0
    performance.now = () => millis
    try {
      return run((more) => (millis += more))
    } finally {
      performance.now = now
    }
  }
  const kbBuiltin = builtinTemplates.find((t) => t.sender === "16449999")!

  it("the sender's templates first, then operator templates, then built-ins", () => {
    const operator: LoadedTemplate = { id: 900, bank: "운영자", sender: null, ruleSource: "manual", rule: rule("(?P<name>홍길동)\\n입금\\n(?P<amount>[\\d,]+)") }
    const set = templateSet([...builtinTemplates, operator])
    const fromKb = parseSms({ body: text, sender: "1644-9999", receivedAt }, set)
    assert.strictEqual(fromKb.status === "parsed" && fromKb.templateId, kbBuiltin.id)
    const fromElsewhere = parseSms({ body: text, sender: "01012345678", receivedAt }, set)
    assert.strictEqual(fromElsewhere.status === "parsed" && fromElsewhere.templateId, 900)
  })

  it("a rule that throws fails only its template, and is reported", () => {
    const throwing: LoadedTemplate = {
      id: 901,
      bank: "깨진",
      sender: "16449999",
      ruleSource: "ai",
      rule: {
        source: "x",
        extract: () => {
          throw new Error("engine failure")
        }
      }
    }
    const reports: Array<unknown> = []
    const outcome = onTestClock(() => parseSms({ body: text, sender: "16449999", receivedAt }, templateSet([throwing, ...builtinTemplates]), (r) => reports.push(r)))
    assert.strictEqual(outcome.status, "parsed")
    assert.deepStrictEqual(outcome.detail.broken_templates, [901])
    assert.deepStrictEqual(reports, [{ brokenTemplates: [{ id: 901, error: "engine failure" }], slowTemplates: [] }])
  })

  it("a rule slower than the bound on one SMS is reported (the loop logs it)", () => {
    const reports: Array<ParseReport> = []
    const outcome = onTestClock((pass) => {
      const slow: LoadedTemplate = {
        id: 903,
        bank: "느린",
        sender: "16449999",
        ruleSource: "manual",
        rule: {
          source: "x",
          extract: () => {
            pass(slowRuleMillis + 10) // a rule taking its time
            return undefined
          }
        }
      }
      return parseSms({ body: text, sender: "16449999", receivedAt }, templateSet([slow, ...builtinTemplates]), (r) => reports.push(r))
    })
    assert.strictEqual(outcome.status, "parsed")
    assert.deepStrictEqual(reports.flatMap((r) => r.slowTemplates.map((t) => t.id)), [903])
  })

  it("outgoing money and non-transactions are ignored before any template, whatever an operator rule reads", () => {
    const lax: LoadedTemplate = { id: 902, bank: "느슨한", sender: null, ruleSource: "manual", rule: rule("(?P<name>[가-힣]+)\\n\\S*\\n(?P<amount>[\\d,]+)") }
    const set = templateSet([lax])
    for (const word of ["출금", "체크카드출금", "지급", "입금취소"]) {
      const outcome = parseSms({ body: text.replace("입금", word), sender: "16449999", receivedAt }, set)
      assert.strictEqual(outcome.status, "ignored", word)
      assert.strictEqual(outcome.detail.kind, "outgoing")
    }
  })
})
