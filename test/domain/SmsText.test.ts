import { assert, describe, it } from "@effect/vitest"
import { normalizePhone } from "../../src/domain/Phone.ts"
import {
  compactForComparison,
  formatForwarderContent,
  normalizeForDuplicates,
  parseForwarderContent,
  readChatText,
  stripForwarderWrapper,
  stripSenderPrefix,
  stripWebSenderMarker
} from "../../src/domain/SmsText.ts"

// Real bank SMS from test/corpus/sms-dev.tsv (`\n` as line breaks).
const corpus = {
  nhDeposit: "[Web발신]\n농협 입금300,000원\n06/12 11:02 301-****-2640-41 이사랑 잔액1,305,428원",
  nhPrefixed: "보낸사람 : 15882100()\n[Web발신]\n농협 입금1,000,000원\n07/09 14:24 352-****-7417-43 088-조휘서( 잔액1,961,657원\n<아미>",
  kbDeposit: "[Web발신]\n[KB]09/04 00:03\n834702**717\n남궁현\n입금\n1\n잔액11,892",
  kbPrefixed: "보낸사람 : 16449999\n[KB]07/04 15:24\n942902**347\n김양곤\n입금\n600,000\n잔액1,320,000",
  shinhan: "보낸사람 : 15778000()\n[Web발신]\n신한07/04 15:28\n110-496-922482\n입금     100,000\n잔액    870,045\n 박현옥",
  ibkOneLine: "[Web발신] 2024/11/15 12:57 출금 354,594원 잔액 50,622원 현대카드 469***03801011 기업",
  hana: "[Web발신]\n하나,08/07, 15:33\n255******31304\n입금5,115,000원\n(주)클리어윈코\n잔액239,612,486원",
  kakao: "[Web발신] [카카오뱅크] 심*민(8205) 08/23 14:20 입금 500,000원 박진환 잔액 9,851,574원",
  kdb: "[Web발신]\n(KDB)020****3636709\n입금\n4,835,000원\n(주)이노라인\n잔액33,347,963원 16:07:35"
}

describe("stripForwarderWrapper (SmsForwarder default template)", () => {
  it("removes sender, SIM, SubId, receive time and device name lines around a multi-line SMS", () => {
    const content = "15882100\n" + corpus.nhDeposit + "\nSIM1_KT_01012345678\nSubId：1\n2026-06-12 11:02:41\n아미폰"
    const parsed = parseForwarderContent(content, "15882100")
    assert.strictEqual(parsed.text, corpus.nhDeposit)
    assert.isTrue(parsed.wrapped)
    assert.strictEqual(parsed.simSlot, 1)
    assert.strictEqual(parsed.receiveTime, "2026-06-12 11:02:41")
    assert.strictEqual(parsed.deviceName, "아미폰")
    assert.strictEqual(stripForwarderWrapper(content, "15882100"), corpus.nhDeposit)
  })

  it("handles an empty device name (trimmed away), an unknown SIM slot (empty line) and SIM2", () => {
    const noDevice = "16449999\n" + corpus.kbDeposit + "\nSIM2_SKT\nSubId：3\n2026-09-04 00:03:10"
    const p1 = parseForwarderContent(noDevice, "16449999")
    assert.strictEqual(p1.text, corpus.kbDeposit)
    assert.strictEqual(p1.simSlot, 2)
    assert.strictEqual(p1.deviceName, undefined)

    const unknownSlot = "16449999\n" + corpus.kbDeposit + "\n\nSubId：-1\n2026-09-04 00:03:10\nphone-b"
    const p2 = parseForwarderContent(unknownSlot, "16449999")
    assert.strictEqual(p2.text, corpus.kbDeposit)
    assert.strictEqual(p2.simSlot, undefined)
    assert.strictEqual(p2.deviceName, "phone-b")
  })

  it("handles the v2 template (no SubId line) and CRLF line breaks", () => {
    const v2 = ["15778000", corpus.hana, "SIM1_LGU+", "2026-08-07 15:33:02", "office"].join("\r\n")
    assert.strictEqual(stripForwarderWrapper(v2, "15778000"), corpus.hana)
  })

  it("recognises the sender line by its digits (+82 / dashes) and, without `from`, by the SIM/SubId lines", () => {
    const content = "+82 10-1234-5678\n" + corpus.kakao + "\nSIM1_\nSubId：1\n2026-08-23 14:20:05"
    assert.strictEqual(stripForwarderWrapper(content, "010-1234-5678"), corpus.kakao)
    assert.strictEqual(stripForwarderWrapper(content), corpus.kakao)
  })

  it("round-trips every kind of real body through the default template", () => {
    for (const text of Object.values(corpus)) {
      const content = formatForwarderContent({
        from: "15881234",
        text,
        simInfo: "SIM1_KT_01099998888",
        subId: 2,
        receiveTime: "2026-07-04 15:24:00",
        deviceName: "카운터폰"
      })
      assert.strictEqual(stripForwarderWrapper(content, "15881234"), text.trim())
    }
  })

  it("leaves content from a custom template alone", () => {
    // No sender line and no SIM/SubId lines: nothing is known to be a wrapper.
    const custom = corpus.kdb + "\n2026-08-01 16:07:35\nphone"
    const parsed = parseForwarderContent(custom, "15880000")
    assert.isFalse(parsed.wrapped)
    assert.strictEqual(parsed.text, custom)
    // The operators' Korean template keeps its `보낸사람` line (normalisation removes it later).
    assert.strictEqual(stripForwarderWrapper(corpus.nhPrefixed, "15882100"), corpus.nhPrefixed)
  })
})

describe("normalizeForDuplicates", () => {
  it("makes [Web발신] variants equal", () => {
    const plain = "농협 입금300,000원\n06/12 11:02 301-****-2640-41 이사랑 잔액1,305,428원"
    const expected = normalizeForDuplicates(plain)
    for (
      const variant of [
        corpus.nhDeposit,
        "[web발신] " + plain,
        "[WEB발신]" + plain,
        "(Web발신)\n" + plain,
        "［Web발신］\n" + plain,
        "[ Web 발신 ]\n" + plain
      ]
    ) assert.strictEqual(normalizeForDuplicates(variant), expected, variant)
    assert.strictEqual(expected, "농협입금300,000원06/1211:02301-****-2640-41이사랑잔액1,305,428원")
  })

  it("makes white-space variants equal (line breaks, runs of spaces, tabs, NBSP, zero-width, CRLF)", () => {
    const a = corpus.shinhan
    const variants = [
      a.replace(/\n/g, " "),
      a.replace(/\n/g, "\r\n"),
      a.replace(/ +/g, " "),
      a.replace(/ /g, "\t"),
      a.replace(/\n/g, "\u00A0"),
      a.replace("입금", "입\u200B금"),
      "  " + a + "\n\n"
    ]
    for (const v of variants) assert.strictEqual(normalizeForDuplicates(v), normalizeForDuplicates(a))
  })

  it("removes the `보낸사람 : …` prefix, before or after [Web발신]", () => {
    const withPrefix = corpus.nhPrefixed
    const withoutPrefix = withPrefix.replace("보낸사람 : 15882100()\n", "")
    const markerFirst = "[Web발신]\n보낸사람 : 15882100()\n" + withoutPrefix.replace("[Web발신]\n", "")
    assert.strictEqual(normalizeForDuplicates(withPrefix), normalizeForDuplicates(withoutPrefix))
    assert.strictEqual(normalizeForDuplicates(markerFirst), normalizeForDuplicates(withoutPrefix))
    assert.strictEqual(
      normalizeForDuplicates(corpus.kbPrefixed),
      normalizeForDuplicates("[Web발신]\n[KB]07/04 15:24\n942902**347\n김양곤\n입금\n600,000\n잔액1,320,000")
    )
    assert.strictEqual(stripSenderPrefix("보낸사람 : 15882100()\n농협 입금10,000원"), "농협 입금10,000원")
  })

  it("on a one-line message removes only the label and the number, never the body", () => {
    assert.strictEqual(
      normalizeForDuplicates("보낸사람 : 1588-2100 농협 입금10,000원 잔액3,710,000원"),
      normalizeForDuplicates("농협 입금10,000원 잔액3,710,000원")
    )
    assert.notStrictEqual(
      normalizeForDuplicates("보낸사람 : 15882100 농협 입금10,000원 잔액3,710,000원"),
      normalizeForDuplicates("보낸사람 : 15882100 농협 입금10,000원 잔액3,720,000원")
    )
  })

  it("a first line holding the prefix and the body keeps the body (the line goes only when the prefix is all it holds)", () => {
    // Two deposits that differ only on the first line were one duplicate when the whole line went.
    assert.strictEqual(stripSenderPrefix("보낸사람 : 15882100 농협 입금10,000원 잔액3,710,000원\n아미").trimStart(), "농협 입금10,000원 잔액3,710,000원\n아미")
    assert.notStrictEqual(
      normalizeForDuplicates("보낸사람 : 15882100 농협 입금10,000원 잔액3,710,000원\n아미"),
      normalizeForDuplicates("보낸사람 : 15882100 농협 입금20,000원 잔액3,720,000원\n아미")
    )
    assert.strictEqual(stripSenderPrefix("보낸사람 : 15882100(농협)\n농협 입금10,000원"), "농협 입금10,000원")
  })

  it("keeps bodies with different balances (잔액) different", () => {
    const first = "[Web발신]\n농협 입금10,000원\n07/04 15:18 352-****-4273-63 신동수 잔액3,710,000원"
    const second = "[Web발신]\n농협 입금10,000원\n07/04 15:18 352-****-4273-63 신동수 잔액3,720,000원"
    assert.notStrictEqual(normalizeForDuplicates(first), normalizeForDuplicates(second))
    // The same deposit seen by two phones, one of them with the marker and the prefix: equal.
    assert.strictEqual(
      normalizeForDuplicates("보낸사람 : 15882100\n" + first),
      normalizeForDuplicates(first.replace("[Web발신]\n", ""))
    )
  })

  it("keeps distinct corpus messages distinct", () => {
    const normalised = new Set(Object.values(corpus).map(normalizeForDuplicates))
    assert.strictEqual(normalised.size, Object.values(corpus).length)
  })

  it("compares in NFC (decomposed Hangul equals composed)", () => {
    const decomposed = corpus.kakao.normalize("NFD")
    assert.notStrictEqual(decomposed, corpus.kakao)
    assert.strictEqual(normalizeForDuplicates(decomposed), normalizeForDuplicates(corpus.kakao))
    assert.strictEqual(compactForComparison("홍 길동".normalize("NFD")), "홍길동")
  })

  it("stripWebSenderMarker removes every occurrence and nothing else", () => {
    assert.strictEqual(stripWebSenderMarker("[Web발신] a [web발신]b"), " a b")
    assert.strictEqual(stripWebSenderMarker("[국외발신] a"), "[국외발신] a")
  })
})

describe("normalizePhone", () => {
  const cases: ReadonlyArray<readonly [string, string | undefined]> = [
    ["+82 10-1234-5678", "01012345678"],
    ["+821012345678", "01012345678"],
    ["82-10-1234-5678", "01012345678"],
    ["0082 10 1234 5678", "01012345678"],
    ["+82 (0)10-1234-5678", "01012345678"],
    ["82-2-123-4567", "021234567"],
    ["+82 2 1234 5678", "0212345678"],
    ["010-1234-5678", "01012345678"],
    ["(02) 123-4567", "021234567"],
    ["1588-9999", "15889999"],
    ["+82 1588-9999", "15889999"],
    ["+82 11-234-5678", "0112345678"],
    ["#1588 9999", "15889999"],
    ["15882100()", "15882100"],
    ["１５８８－９９９９", "15889999"],
    ["tel:+82-10-1234-5678", "01012345678"],
    ["+1 650 555 1212", "16505551212"],
    ["114", "114"],
    ["", undefined],
    ["   ", undefined],
    ["---", undefined],
    ["KB국민", undefined],
    ["Toss1234", undefined],
    ["123456789012345678901", undefined],
    ["12345678901234567890", "12345678901234567890"]
  ]
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${expected ?? "undefined"}`, () => {
      assert.strictEqual(normalizePhone(input), expected)
    })
  }
})

describe("readChatText", () => {
  const base = { chatId: "4242", username: undefined }
  it("takes the sender from SmsForwarder's default wrapper and removes the wrapper", () => {
    const text = formatForwarderContent({ from: "+82 10-1234-5678", text: "입금 5,000원\n홍길동", subId: 2, simInfo: "SIM2_SKT", receiveTime: "2025-03-01 10:00:00" })
    assert.deepStrictEqual(readChatText({ ...base, text }), { sender: "+82 10-1234-5678", senderNormalized: "01012345678", text: "입금 5,000원\n홍길동" })
  })
  it("takes the sender from a 보낸사람 prefix, inline or on its own line, keeping the text", () => {
    assert.deepStrictEqual(readChatText({ ...base, text: "보낸사람 : 15882100(국민은행)\n입금 1원" }), {
      sender: "15882100",
      senderNormalized: "15882100",
      text: "보낸사람 : 15882100(국민은행)\n입금 1원"
    })
    assert.strictEqual(readChatText({ ...base, text: "보낸사람: 1588-2100 [KB]입금 1원" }).sender, "1588-2100")
  })
  it("falls back to @username, then the chat id, never treating them as phone numbers", () => {
    assert.deepStrictEqual(readChatText({ chatId: "4242", username: "kim", text: "입금 1원" }), { sender: "@kim", senderNormalized: undefined, text: "입금 1원" })
    assert.deepStrictEqual(readChatText({ ...base, text: " 입금 1원 " }), { sender: "4242", senderNormalized: undefined, text: "입금 1원" })
  })
})
