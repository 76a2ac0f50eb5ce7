// Placement by the balances themselves (domain/BalanceChain.ts, issue 34), pure: whatever the
// arrival order, a run of transactions ends as one chain in balance order; a withheld message
// leaves exactly one gap of its amount; ties in printed time are ordered by the chain.
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { Chain, emptyView, placeInChain } from "../../src/domain/BalanceChain.ts"
import type { Entry } from "../../src/domain/BalanceSequence.ts"

const MIN = 60_000

/** A consistent run of transactions from `opening`; `minuteOf(i)` is each one's printed minute. */
const runOf = (opening: number, steps: ReadonlyArray<readonly [boolean, number]>, minuteOf: (i: number) => number): Array<Entry> => {
  let balance = opening + 10_000_000
  return steps.map(([incoming, amount], i) => {
    balance += incoming ? amount : -amount
    return {
      smsId: i + 1,
      receivedAt: minuteOf(i) * MIN + i * 100,
      txnAt: minuteOf(i) * MIN,
      deviceId: "phone-a",
      direction: incoming ? "in" : "out",
      amount: String(amount),
      balance: String(balance),
      duplicateOf: null
    }
  })
}
const steps = fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 900_000 })), { minLength: 3, maxLength: 25 })

/** Each fact placed on its own, as arrivals one by one: the chain kept in memory between them. */
const oneByOne = (arrivals: ReadonlyArray<Entry>, now = 0) => {
  const chain = new Chain(emptyView, now)
  for (const e of arrivals) chain.add(e)
  return chain.changes()
}

describe("placed by the balances", () => {
  it("all in one printed minute, any arrival order: no gap, the chain in balance order, the last balance the chain's end", () =>
    fc.assert(fc.property(steps, fc.nat(), (s, seed) => {
      const run = runOf(0, s, () => 5)
      // Known limitation (closing note of issue 34's merge): a run whose balance comes back to one
      // it had within the same printed minute (out 1, out 1, in 2) is a cycle, and which of its
      // messages ends the chain is not decided by the balances; such runs are left out here.
      fc.pre(new Set([String(10_000_000), ...run.map((e) => e.balance)]).size === run.length + 1)
      const order = fc.sample(fc.shuffledSubarray(run, { minLength: run.length, maxLength: run.length }), { numRuns: 1, seed })[0]!
      const placed = oneByOne(order)
      assert.deepStrictEqual(placed.opened, [])
      assert.strictEqual(placed.end.lastBalance?.smsId, run.length)
      const chain = [...placed.inserted].sort((a, b) => Number(a.pos) - Number(b.pos)).map((e) => e.smsId)
      assert.deepStrictEqual(chain, run.map((e) => e.smsId))
    })))

  it("one message withheld and another delivered late (one a minute): exactly one gap, of the withheld one's amount", () =>
    fc.assert(fc.property(steps.filter((s) => s.length >= 5), fc.nat(), fc.nat(), (s, w, l) => {
      const run = runOf(0, s, (i) => i)
      const withheld = 1 + (w % (run.length - 2))
      const late = l % run.length
      fc.pre(late !== withheld)
      const arrivals = [...run.filter((e) => e.smsId !== run[withheld]!.smsId && e.smsId !== run[late]!.smsId), run[late]!]
      const placed = oneByOne(arrivals)
      const missing = run[withheld]!
      assert.deepStrictEqual(placed.opened.map((g) => [g.unexplained]), [[missing.direction === "in" ? missing.amount : `-${missing.amount}`]])
      assert.strictEqual(placed.end.lastBalance?.smsId, run[run.length - 1]!.smsId === missing.smsId ? run[run.length - 2]!.smsId : run.length)
    })))

  it("the issue's case: six in one minute, the fifth after the sixth: the gap closes, none opens, the last balance is the sixth's", () => {
    const run = runOf(1_000_000, [[true, 50_000], [false, 12_000], [true, 300_000], [false, 2_500], [true, 10_000], [true, 1]], () => 7)
    const placed = oneByOne([run[0]!, run[1]!, run[2]!, run[3]!, run[5]!, { ...run[4]!, receivedAt: run[5]!.receivedAt + 1000 }])
    assert.deepStrictEqual([placed.opened, placed.closed], [[], []])
    assert.strictEqual(placed.end.lastBalance?.smsId, 6)
  })

  it("a copy from a second phone is a duplicate; a gap a copy fills is closed by it", () => {
    const run = runOf(0, [[true, 100], [true, 200], [false, 50]], (i) => i)
    const copy = { ...run[1]!, smsId: 20, deviceId: "phone-b", receivedAt: run[1]!.receivedAt + 2000 }
    const placed = placeInChain(emptyView, [run[0]!, run[2]!, copy, { ...run[0]!, smsId: 21, deviceId: "phone-b" }], 0)
    assert.deepStrictEqual(placed.inserted.map((e) => [e.smsId, e.duplicateOf]), [[1, null], [21, 1], [20, null], [3, null]])
    assert.deepStrictEqual(placed.opened, [])
  })

  it("a message without a balance explains the step it sits in, and fills a gap of exactly its amount", () => {
    const run = runOf(0, [[true, 100], [false, 30], [true, 50]], (i) => i)
    const noBalance = { ...run[1]!, balance: null }
    assert.deepStrictEqual(oneByOne([run[0]!, noBalance, run[2]!]).opened, [])
    assert.deepStrictEqual(oneByOne([run[0]!, run[2]!, noBalance]).opened, [])
    assert.deepStrictEqual(oneByOne([run[0]!, run[2]!]).opened.map((g) => g.unexplained), ["-30"])
  })
})
