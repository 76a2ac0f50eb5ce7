// Template rules through recon_service: long rules keep being accepted however many were compiled
// before (re2-wasm refused every rule after a few thousand, with 422 and its WASM flags in the
// text), built-ins are listed with their rules and senders, a sample that is no deposit and a rule
// too large to compile are 422 with the reason.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { createMigratedDatabase } from "../support/database.ts"
import { recon, type Running, startRecon } from "../support/recon.ts"

let server: Running
let call: ReturnType<typeof recon>

beforeAll(async () => {
  server = await startRecon(await createMigratedDatabase("rules"))
  call = recon(server.url)
})
afterAll(() => server.close())

const hangul = (seed: number, length: number) =>
  Array.from({ length }, (_, i) => String.fromCharCode(0xAC00 + ((seed * 7919 + i * 104729) % 11172))).join("")

describe("template rules", () => {
  it("accepts 60 distinct rules of about 1,900 characters, one after the other", async () => {
    const sample = "[한빛상호] 입금 확정\n송금인:김하나\n금액:7,700원"
    for (let i = 0; i < 60; i++) {
      const rule = `송금인:(?P<name>[^\\n]+)\\n금액:(?P<amount>[\\d,]+)원(?:${hangul(i, 1_850)})?`
      const added = await call("/shooter/template/recharge/add", { bank: `상호${i}`, sample, rule })
      assert.strictEqual(added.http, 200, `rule ${i}: ${JSON.stringify(added.body)}`)
    }
  }, 120_000)

  it("lists the built-in templates with their rules and senders", async () => {
    const listed = await call("/shooter/template/recharge/list", { bank: "NH농협", page_size: 200 })
    const builtins = listed.body.data.items.filter((t: { rule_source: string }) => t.rule_source === "builtin")
    assert.isAtLeast(builtins.length, 2)
    for (const t of builtins) {
      assert.strictEqual(t.sender, "15882100")
      assert.include(t.rule, "(?P<name>")
      assert.include(t.rule, "(?P<amount>")
    }
  })

  it("refuses a sample that is no deposit, and a rule too large to compile, with the reason", async () => {
    const withdrawal = await call("/shooter/template/recharge/add", {
      bank: "KB국민",
      sample: "[KB]04/12 15:30 123**456 홍길동 출금 10,000 잔액 1,224,567",
      rule: "(?P<name>[가-힣]+) 출금 (?P<amount>[\\d,]+)"
    })
    assert.strictEqual(withdrawal.http, 422)
    assert.strictEqual(withdrawal.body.data.detail, "the sample is not a deposit: outgoing money: \"출금\" is money out of the account (a withdrawal)")
    const large = await call("/shooter/template/recharge/add", {
      bank: "KB국민",
      sample: "입금 홍길동 5,000",
      rule: `(?P<name>\\S+) (?P<amount>[\\d,]+)${"\\S{1,1000}".repeat(5)}`
    })
    assert.strictEqual(large.http, 422)
    assert.match(large.body.data.detail, /^rule is too large: it would compile to about [\d,]+ instructions/)
  })
})
