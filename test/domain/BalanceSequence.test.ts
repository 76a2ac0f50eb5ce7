// The balance sequence logic (pure): which account a message belongs to, when two messages are one
// transaction, and the gaps of a run of entries (placement itself: BalanceChain.test.ts).
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { accountOf, type Entry, gapsOf, sameTransaction } from "../../src/domain/BalanceSequence.ts"

const MIN = 60_000
const entry = (smsId: number, minute: number, direction: "in" | "out", amount: number, balance: number | null, extra: Partial<Entry> = {}): Entry => ({
  smsId,
  receivedAt: minute * MIN,
  txnAt: null,
  deviceId: "phone-a",
  direction,
  amount: String(amount),
  balance: balance === null ? null : String(balance),
  duplicateOf: null,
  ...extra
})

/** A consistent run of `n` transactions from `opening`, one a minute. */
const run = fc.tuple(fc.integer({ min: 0, max: 5_000_000 }), fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 900_000 })), { minLength: 3, maxLength: 30 }))
  .map(([opening, steps]) => {
    let balance = opening + 10_000_000
    return steps.map(([incoming, amount], i) => {
      balance += incoming ? amount : -amount
      return entry(i + 1, i, incoming ? "in" : "out", amount, balance)
    })
  })

describe("which account", () => {
  it("the bank and the account digits shown, whatever the phone; else the device and the sender", () => {
    const base = { smsId: 1, receivedAt: new Date(0), direction: "in" as const, amount: "1", balance: "1" }
    const a = accountOf({ ...base, deviceId: "a", sender: "15882100", bank: "NH농협", account: "352-****-7417-43" })
    const b = accountOf({ ...base, deviceId: "b", sender: "1588-2100", bank: "NH농협", account: "352 ****  7417 43" })
    assert.strictEqual(a.key, b.key)
    assert.strictEqual(a.account, "352-****-7417-43")
    const c = accountOf({ ...base, deviceId: "a", sender: "15778000", bank: "신한" })
    const d = accountOf({ ...base, deviceId: "b", sender: "15778000", bank: "신한" })
    assert.notStrictEqual(c.key, d.key)
    assert.deepStrictEqual([c.deviceId, c.sender, c.account], ["a", "15778000", null])
    // Too few digits to be an account (a masked holder, a branch code): the device and sender.
    assert.strictEqual(accountOf({ ...base, deviceId: "a", sender: "15778000", bank: "신한", account: "**12" }).key, c.key)
  })
})

describe("one transaction seen twice", () => {
  it("same direction, amount and balance, and the same printed time, or received within 10 minutes", () => {
    const a = entry(1, 0, "in", 50_000, 1_000_000)
    assert.isTrue(sameTransaction(a, entry(2, 3, "in", 50_000, 1_000_000, { deviceId: "phone-b" })))
    assert.isFalse(sameTransaction(a, entry(2, 11, "in", 50_000, 1_000_000)))
    assert.isFalse(sameTransaction(a, entry(2, 1, "out", 50_000, 1_000_000)))
    assert.isFalse(sameTransaction(a, entry(2, 1, "in", 50_000, 1_000_001)))
    // Re-sent hours later with its printed time: the same transaction.
    const printed = { txnAt: 5 * MIN }
    assert.isTrue(sameTransaction(entry(1, 5, "in", 1, 2, printed), entry(2, 300, "in", 1, 2, printed)))
    assert.isFalse(sameTransaction(entry(1, 5, "in", 1, 2, printed), entry(2, 6, "in", 1, 2, { txnAt: 6 * MIN })))
  })
})

describe("gaps", () => {
  it("none in a consistent run, in any order received", () =>
    fc.assert(fc.property(run, (entries) => assert.deepStrictEqual(gapsOf(entries), []))))

  it("one where a message is missing, of exactly its signed amount", () =>
    fc.assert(fc.property(run, fc.nat(), (entries, k) => {
      const i = 1 + (k % (entries.length - 2))
      const missing = entries[i]!
      const gaps = gapsOf(entries.filter((_, j) => j !== i))
      const signed = missing.direction === "in" ? Number(missing.amount) : -Number(missing.amount)
      assert.deepStrictEqual(gaps, [{ afterSmsId: entries[i - 1]!.smsId, beforeSmsId: entries[i + 1]!.smsId, unexplained: String(signed) }])
    })))

  it("a message without a balance cannot be placed, but its amount explains the step around it", () => {
    const entries = [entry(1, 0, "in", 100, 1000), entry(2, 1, "out", 30, null), entry(3, 2, "in", 50, 1020)]
    assert.deepStrictEqual(gapsOf(entries), [])
    assert.deepStrictEqual(gapsOf([entries[0]!, entries[2]!]), [{ afterSmsId: 1, beforeSmsId: 3, unexplained: "-30" }])
  })

  it("duplicates are left out", () => {
    const entries = [entry(1, 0, "in", 100, 1000), entry(2, 1, "in", 100, 1000, { duplicateOf: 1 }), entry(3, 2, "in", 50, 1050)]
    assert.deepStrictEqual(gapsOf(entries), [])
  })

  it("decimal amounts are exact", () => {
    assert.deepStrictEqual(gapsOf([entry(1, 0, "in", 0, 0.1), { ...entry(2, 1, "in", 0, null), amount: "0.2" }, { ...entry(3, 2, "in", 0, null), amount: "0.10", balance: "0.40" }]), [])
  })
})
