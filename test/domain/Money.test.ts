import { assert, describe, it } from "@effect/vitest"
import { parseAmount } from "../../src/domain/Money.ts"

describe("parseAmount", () => {
  it("reads digits with or without thousands commas and 원", () => {
    assert.strictEqual(parseAmount("50,000"), "50000")
    assert.strictEqual(parseAmount("50,000원"), "50000")
    assert.strictEqual(parseAmount("50000원"), "50000")
    assert.strictEqual(parseAmount(" 1,000,002 원 "), "1000002")
    assert.strictEqual(parseAmount("1"), "1")
    assert.strictEqual(parseAmount("123,456,789"), "123456789")
    assert.strictEqual(parseAmount("₩50,000"), "50000")
    assert.strictEqual(parseAmount("0"), "0")
    assert.strictEqual(parseAmount("007"), "7")
  })

  it("reads full-width digits, comma and full stop", () => {
    assert.strictEqual(parseAmount("５０，０００원"), "50000")
    assert.strictEqual(parseAmount("１０，０００"), "10000")
    assert.strictEqual(parseAmount("１２．５０"), "12.50")
  })

  it("keeps decimals exactly as printed", () => {
    assert.strictEqual(parseAmount("12.50"), "12.50")
    assert.strictEqual(parseAmount("1,234.5"), "1234.5")
    assert.strictEqual(parseAmount("0.01"), "0.01")
  })

  it("answers undefined for anything that is not an amount", () => {
    for (
      const text of [
        "",
        "   ",
        "원",
        "-5,000",
        "+5,000",
        "abc",
        "12a",
        "{{amount}}",
        "5,0000",
        "50,00",
        ",500",
        "500,",
        "1.",
        ".5",
        "12.500",
        "1 000",
        "10,000원 입금",
        "①",
        "12345678901234567", // 17 integer digits
        "12,345,678,901,234,567"
      ]
    ) {
      assert.isUndefined(parseAmount(text), JSON.stringify(text))
    }
  })

  it("accepts up to 16 integer digits", () => {
    assert.strictEqual(parseAmount("1234567890123456"), "1234567890123456")
    assert.strictEqual(parseAmount("1,234,567,890,123,456.78"), "1234567890123456.78")
  })
})
