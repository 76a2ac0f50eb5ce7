// Balance continuity on a real database, with sequences in real bank layouts (NH농협 deposits and
// withdrawals of one account, 신한's layout without account digits, KB's without a balance, from
// test/corpus/sms-dev.tsv): complete, one message removed, reordered, duplicated across two
// phones, re-sent later; the balance.gap events; and /accounts/list.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BalanceStore } from "../../src/db/BalanceStore.ts"
import type { BalanceFact } from "../../src/domain/BalanceSequence.ts"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { recon, type Running, startRecon } from "../support/recon.ts"

let db: string
let server: Running

const query = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  runSql(db, Effect.gen(function*() {
    return yield* f(yield* SqlClient.SqlClient)
  }).pipe(Effect.orDie))

const record = (facts: ReadonlyArray<BalanceFact>) => runSql(db, Effect.flatMap(BalanceStore.make, (store) => store.record(facts)))
/** The announcer with no grace: every open gap is past it. */
const announce = (graceS = 0) => runSql(db, Effect.flatMap(BalanceStore.make, (store) => store.announce(graceS)))

const won = (n: number) => n.toLocaleString("en-US")
const T0 = Date.parse("2026-07-09T05:00:00Z")

interface Txn {
  readonly direction: "in" | "out"
  readonly amount: number
  readonly name: string
}

/** One account's day: the transactions and the balance after each, one every 7 minutes. */
const day = (opening: number, txns: ReadonlyArray<Txn>) => {
  let balance = opening
  return txns.map((t, i) => {
    balance += t.direction === "in" ? t.amount : -t.amount
    return { ...t, balance, at: new Date(T0 + i * 7 * 60_000) }
  })
}
type Step = ReturnType<typeof day>[number]

const kst = (at: Date) => {
  const d = new Date(at.getTime() + 9 * 3600_000)
  const two = (n: number) => String(n).padStart(2, "0")
  return `${two(d.getUTCMonth() + 1)}/${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`
}

/** NH농협's layout (corpus: `농협 입금10,000원\n07/04 15:18 352-****-4273-63 신동수 잔액3,710,000원`, and 출금 alike). */
const nhText = (account: string, s: Step) =>
  `[Web발신]\n농협 ${s.direction === "in" ? "입금" : "출금"}${won(s.amount)}원\n${kst(s.at)} ${account} ${s.name} 잔액${won(s.balance)}원`

let seq = 0
/** The SMS as ingested (its text, phone and time), then its balance fact as parse_loop will hand it over. */
const arrive = async (device: string, text: string, s: Step, fact: Omit<BalanceFact, "smsId" | "receivedAt" | "deviceId" | "direction" | "amount" | "balance">, options: { readonly receivedAt?: Date; readonly balance?: boolean } = {}) => {
  const receivedAt = options.receivedAt ?? s.at
  const id = await query((sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
      (device_id, sender, body, normalized_body, received_at, status)
    VALUES (${device}, ${fact.sender}, ${text}, ${`${text}#${++seq}`}, ${receivedAt}, ${s.direction === "in" ? "parsed" : "ignored"}) RETURNING id`,
  (rows) => Number(rows[0]!.id)))
  const full: BalanceFact = {
    ...fact,
    smsId: id,
    receivedAt,
    deviceId: device,
    direction: s.direction,
    amount: String(s.amount),
    balance: options.balance === false ? null : String(s.balance),
    txnAt: new Date(Math.floor(s.at.getTime() / 60_000) * 60_000)
  }
  return full
}

const openGaps = (account: string) =>
  query((sql) => sql<{ after_sms_id: bigint; before_sms_id: bigint; unexplained: string; closed_by: bigint | null }>`
    SELECT g.after_sms_id, g.before_sms_id, g.unexplained::text AS unexplained, g.closed_by_sms_id AS closed_by
    FROM recon.balance_gap AS g JOIN recon.balance_account AS a ON a.id = g.account_id
    WHERE a.account = ${account} AND g.closed_at IS NULL ORDER BY g.id`).then((rows) =>
    rows.map((r) => ({ after: Number(r.after_sms_id), before: Number(r.before_sms_id), unexplained: Number(r.unexplained) })))

const gapEvents = (account: string) =>
  query((sql) => sql<{ data: any }>`SELECT data FROM recon.webhook_event WHERE type = 'balance.gap' AND data ->> 'account' = ${account} ORDER BY id`)
    .then((rows) => rows.map((r) => r.data))

const accountRow = (account: string) =>
  query((sql) => sql<{ last_balance: string | null; last_sms_id: bigint | null; n: bigint }>`
    SELECT last_balance::text AS last_balance, last_sms_id, (SELECT count(*) FROM recon.balance_account WHERE account = ${account}) AS n
    FROM recon.balance_account WHERE account = ${account}`).then(([r]) => ({ lastBalance: Number(r!.last_balance), lastSms: Number(r!.last_sms_id), accounts: Number(r!.n) }))

const txns: ReadonlyArray<Txn> = [
  { direction: "in", amount: 50_000, name: "김민준" },
  { direction: "out", amount: 12_000, name: "쿠팡" },
  { direction: "in", amount: 300_000, name: "이서연" },
  { direction: "out", amount: 2_500, name: "파우PC" },
  { direction: "in", amount: 10_000, name: "신동수" },
  { direction: "in", amount: 1, name: "otp8887" }
]
const nh = (account: string) => ({ sender: "15882100", bank: "NH농협", account })

beforeAll(async () => {
  db = await createMigratedDatabase("balance")
  // A receiver subscribed to balance.gap, so the outbox writes its events.
  await query((sql) => sql`INSERT INTO recon.webhook (url, secret, events) VALUES ('http://127.0.0.1:9/hook', 'a-secret-of-16-chars', '{balance.gap}')`)
  server = await startRecon(db)
})
afterAll(() => server.close())

describe("one account's messages, in real layouts", () => {
  it("all of them, in order: no gap, the last balance is the account's", async () => {
    const account = "352-****-7417-43"
    const steps = day(1_961_657, txns)
    for (const s of steps) await record([await arrive("phone-a", nhText(account, s), s, nh(account))])
    assert.deepStrictEqual(await openGaps(account), [])
    const row = await accountRow(account)
    assert.strictEqual(row.lastBalance, steps[5]!.balance)
  })

  it("one removed: a gap of its amount between its neighbours and one balance.gap event; re-sent later by the gateway, it closes", async () => {
    const account = "352-****-1111-01"
    const steps = day(1_000_000, txns)
    const facts = []
    for (const [i, s] of steps.entries()) {
      if (i === 2) continue
      const fact = await arrive("phone-a", nhText(account, s), s, nh(account))
      facts.push(fact)
      await record([fact])
    }
    const [before, after] = [facts[1]!, facts[2]!]
    assert.deepStrictEqual(await openGaps(account), [{ after: before.smsId, before: after.smsId, unexplained: 300_000 }])
    assert.deepStrictEqual(await gapEvents(account), [], "not announced within the grace period")
    await announce()
    const events = await gapEvents(account)
    assert.strictEqual(events.length, 1)
    assert.deepStrictEqual({ ...events[0], since: undefined }, {
      account, bank: "NH농협", device_id: null, sender: null, after_sms_id: before.smsId, before_sms_id: after.smsId, unexplained: "300000", since: undefined
    })
    // Hours later the SMS Gateway re-sends the missing message with its original time.
    const resent = await arrive("phone-a", nhText(account, steps[2]!), steps[2]!, nh(account))
    const done = await record([resent])
    assert.deepStrictEqual(done, { placed: 1, duplicates: 0, opened: 0, closed: 1 })
    assert.deepStrictEqual(await openGaps(account), [])
    const [closed] = await query((sql) => sql<{ by: bigint }>`SELECT closed_by_sms_id AS by FROM recon.balance_gap AS g
      JOIN recon.balance_account AS a ON a.id = g.account_id WHERE a.account = ${account}`)
    assert.strictEqual(Number(closed!.by), resent.smsId)
    assert.strictEqual((await gapEvents(account)).length, 1)
    assert.strictEqual((await accountRow(account)).lastBalance, steps[5]!.balance)
  })

  it("reordered: a late message fills the gap it left; within one batch no gap opens at all", async () => {
    const account = "352-****-2222-02"
    const steps = day(500_000, txns)
    const facts = []
    for (const s of steps) facts.push(await arrive("phone-a", nhText(account, s), s, nh(account)))
    // 1, 2, 4, 3, 5, 6 as the phone forwarded them.
    for (const i of [0, 1, 3]) await record([facts[i]!])
    assert.strictEqual((await openGaps(account)).length, 1)
    await announce()
    for (const i of [2, 4, 5]) await record([facts[i]!])
    assert.deepStrictEqual(await openGaps(account), [])
    assert.strictEqual((await gapEvents(account)).length, 1)

    const other = "352-****-3333-03"
    const shuffled = []
    for (const s of day(10_000, txns)) shuffled.push(await arrive("phone-a", nhText(other, s), s, nh(other)))
    await record([shuffled[4]!, shuffled[0]!, shuffled[2]!, shuffled[5]!, shuffled[1]!, shuffled[3]!])
    assert.deepStrictEqual(await openGaps(other), [])
    assert.deepStrictEqual(await gapEvents(other), [])
  })

  it("duplicated across two phones: one account, each transaction once, no gap; a message only the second phone got fills the first's gap", async () => {
    const account = "352-****-4444-04"
    const steps = day(2_000_000, txns)
    for (const [i, s] of steps.entries()) {
      const text = nhText(account, s)
      // Phone B misses nothing; phone A misses the fourth message. They forward seconds apart, B sometimes first.
      const b = await arrive("phone-b", text, s, nh(account), { receivedAt: new Date(s.at.getTime() + (i % 2 === 0 ? 3000 : -2000)) })
      if (i !== 3) await record([await arrive("phone-a", text, s, nh(account))])
      await record([b])
    }
    assert.deepStrictEqual(await openGaps(account), [])
    assert.strictEqual((await accountRow(account)).accounts, 1)
    const counts = await query((sql) => sql<{ placed: bigint; duplicates: bigint }>`
      SELECT count(*) FILTER (WHERE e.duplicate_of IS NULL) AS placed, count(*) FILTER (WHERE e.duplicate_of IS NOT NULL) AS duplicates
      FROM recon.balance_entry AS e JOIN recon.balance_account AS a ON a.id = e.account_id WHERE a.account = ${account}`)
    assert.deepStrictEqual([Number(counts[0]!.placed), Number(counts[0]!.duplicates)], [6, 5])
    assert.strictEqual((await gapEvents(account)).length, 0)
  })

  it("a second phone's copy arriving after the account's next message (within 10 minutes) is still a duplicate: no gap", async () => {
    const account = "352-****-6767-07"
    const steps = day(3_000_000, txns)
    const facts = []
    for (const s of steps) facts.push(await arrive("phone-a", nhText(account, s), s, nh(account)))
    await record(facts)
    // The copy of the fifth message, 8 minutes late: the sixth (7 minutes after the fifth) came first.
    const late = await arrive("phone-b", nhText(account, steps[4]!), steps[4]!, nh(account), { receivedAt: new Date(steps[4]!.at.getTime() + 8 * 60_000) })
    await record([late])
    assert.deepStrictEqual(await openGaps(account), [])
    const [row] = await query((sql) => sql<{ duplicate_of: bigint | null }>`SELECT duplicate_of FROM recon.balance_entry WHERE sms_id = ${late.smsId}`)
    assert.strictEqual(Number(row!.duplicate_of), facts[4]!.smsId)
  })

  it("a copy of a message that shows no balance, from a second phone 8 minutes late, is still found as a duplicate", async () => {
    const account = "352-****-6868-08"
    const steps = day(3_000_000, txns)
    const facts = []
    for (const s of steps) facts.push(await arrive("phone-a", nhText(account, s), s, nh(account), { balance: false }))
    await record(facts)
    const late = await arrive("phone-b", nhText(account, steps[4]!), steps[4]!, nh(account), { receivedAt: new Date(steps[4]!.at.getTime() + 8 * 60_000), balance: false })
    await record([late])
    const [row] = await query((sql) => sql<{ duplicate_of: bigint | null }>`SELECT duplicate_of FROM recon.balance_entry WHERE sms_id = ${late.smsId}`)
    assert.strictEqual(Number(row!.duplicate_of), facts[4]!.smsId)
  })

  it("two messages missing in one gap: the first to arrive narrows it (no second event), the second closes it", async () => {
    const account = "352-****-5555-05"
    const steps = day(100_000, txns)
    const facts = []
    for (const s of steps) facts.push(await arrive("phone-a", nhText(account, s), s, nh(account)))
    for (const i of [0, 1, 4, 5]) await record([facts[i]!])
    await announce()
    assert.deepStrictEqual(await openGaps(account), [{ after: facts[1]!.smsId, before: facts[4]!.smsId, unexplained: 300_000 - 2_500 }])
    await record([facts[2]!])
    assert.deepStrictEqual(await openGaps(account), [{ after: facts[2]!.smsId, before: facts[4]!.smsId, unexplained: -2_500 }])
    assert.strictEqual((await gapEvents(account)).length, 1)
    await record([facts[3]!])
    assert.deepStrictEqual(await openGaps(account), [])
  })

  it("a message without a balance (KB's short layout) is not placed, yet explains the step it sits in", async () => {
    const account = "444401-01-499150"
    const steps = day(800_000, txns.slice(0, 3))
    // `[KB]08/05 14:32 902002**333 홍길동 입금 500,000 잔액 1,234,567`, and `[KB국민] 06/18 15:30 444401-01-499150 입금 50,000원 홍길동` (no balance).
    const kbText = (s: Step, withBalance: boolean) =>
      `[KB]${kst(s.at)} ${account} ${s.name} ${s.direction === "in" ? "입금" : "출금"} ${won(s.amount)}${withBalance ? ` 잔액 ${won(s.balance)}` : ""}`
    const kb = { sender: "16449999", bank: "KB국민", account }
    await record([await arrive("phone-a", kbText(steps[0]!, true), steps[0]!, kb)])
    await record([await arrive("phone-a", kbText(steps[1]!, false), steps[1]!, kb, { balance: false })])
    await record([await arrive("phone-a", kbText(steps[2]!, true), steps[2]!, kb)])
    assert.deepStrictEqual(await openGaps(account), [])
    assert.strictEqual((await accountRow(account)).lastBalance, steps[2]!.balance)
  })

  it("without account digits (신한's layout), each phone's messages are an account of their own", async () => {
    const steps = day(1_250_000, txns.slice(0, 2))
    const shinhan = (s: Step) => `신한은행\n${s.direction === "in" ? "입금" : "출금"} ${won(s.amount)}원\n${kst(s.at).slice(6)}\n${s.name}님\n잔액: ${won(s.balance)}원`
    for (const device of ["shinhan-a", "shinhan-b"]) {
      for (const s of steps) await record([await arrive(device, shinhan(s), s, { sender: "15778000", bank: "신한" })])
    }
    const accounts = await query((sql) => sql<{ device_id: string; sender: string; account: string | null }>`
      SELECT device_id, sender, account FROM recon.balance_account WHERE device_id LIKE 'shinhan-%' ORDER BY device_id`)
    assert.deepStrictEqual(accounts.map((a) => [a.device_id, a.sender, a.account]), [["shinhan-a", "15778000", null], ["shinhan-b", "15778000", null]])
  })

  it("a fact recorded again (the SMS parsed again after a reset) changes nothing", async () => {
    const account = "352-****-6666-06"
    const steps = day(0, txns.slice(0, 3))
    const facts = []
    for (const s of steps) facts.push(await arrive("phone-a", nhText(account, s), s, nh(account)))
    await record([facts[0]!, facts[2]!])
    assert.strictEqual((await openGaps(account)).length, 1)
    await announce()
    assert.deepStrictEqual(await record([facts[0]!, facts[2]!]), { placed: 0, duplicates: 0, opened: 0, closed: 0 })
    assert.strictEqual((await openGaps(account)).length, 1)
    assert.strictEqual((await gapEvents(account)).length, 1)
  })
})

describe("several writers at once", () => {
  it("batches touching the same accounts in opposite orders neither deadlock nor lose a message", async () => {
    const accounts = ["352-****-8001-01", "352-****-8002-02", "352-****-8003-03"]
    const perAccount = await Promise.all(accounts.map(async (account) => {
      const facts = []
      for (const s of day(1_000_000, [...txns, ...txns])) facts.push(await arrive("phone-a", nhText(account, s), s, nh(account)))
      return facts
    }))
    // Worker 1 takes the even messages of every account, worker 2 the odd ones, each batch listing the accounts in another order.
    const batches = [0, 1].flatMap((parity) => [0, 1, 2, 3, 4, 5].map((k) =>
      (parity === 0 ? perAccount : [...perAccount].reverse()).flatMap((facts) => facts.filter((_, i) => i % 2 === parity && Math.floor(i / 2) === k))))
    await Promise.all(batches.map((batch) => record(batch)))
    for (const account of accounts) assert.deepStrictEqual(await openGaps(account), [], account)
  })
})

describe("POST /internal/recon/accounts/list", () => {
  it("each account with its last balance and its open gaps only; has_gaps filters; paged, the latest first", async () => {
    const account = "352-****-7777-07"
    const steps = day(3_000_000, txns)
    const facts = []
    for (const s of steps) facts.push(await arrive("phone-a", nhText(account, s), s, nh(account)))
    await record([facts[0]!, facts[1]!, facts[3]!, facts[5]!])
    const call = recon(server.url)
    const answer = await call("/accounts/list", { has_gaps: true, page_size: 200 })
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    const item = answer.body.data.items.find((a: any) => a.account === account)
    assert.deepStrictEqual({ ...item, id: undefined, last_at: undefined, gaps: item.gaps.map((g: any) => ({ ...g, id: undefined, since: undefined })) }, {
      id: undefined,
      account,
      bank: "NH농협",
      device_id: null,
      sender: null,
      last_balance: String(steps[5]!.balance),
      last_at: undefined,
      merged_into: null,
      gaps: [
        { id: undefined, after_sms_id: facts[1]!.smsId, before_sms_id: facts[3]!.smsId, unexplained: "300000", since: undefined, explained: null },
        { id: undefined, after_sms_id: facts[3]!.smsId, before_sms_id: facts[5]!.smsId, unexplained: "10000", since: undefined, explained: null }
      ]
    })
    assert.strictEqual(item.last_at, steps[5]!.at.toISOString())
    assert.isTrue(answer.body.data.items.every((a: any) => a.gaps.length > 0))
    const closedOnes = await call("/accounts/list", { has_gaps: false, page_size: 200 })
    assert.isTrue(closedOnes.body.data.items.every((a: any) => a.gaps.length === 0))
    assert.isTrue(closedOnes.body.data.items.some((a: any) => a.account === "352-****-7417-43"))
    const all = await call("/accounts/list", { page: 1, page_size: 2 })
    assert.strictEqual(all.body.data.items.length, 2)
    assert.strictEqual(all.body.data.total, answer.body.data.total + closedOnes.body.data.total)
    const lasts = (await call("/accounts/list", { page_size: 200 })).body.data.items.map((a: any) => a.last_at)
    // The latest first; an account whose messages never showed a balance has none, and comes last.
    const known = lasts.filter((at: string | null) => at !== null)
    assert.deepStrictEqual(lasts, [...[...known].sort().reverse(), ...lasts.filter((at: string | null) => at === null)])
  })
})

describe("placed by the balances, not by arrival (issue 34)", () => {
  /** Six KB messages within one minute (printed times are minutes). */
  const kbMinute = (account: string, opening: number) => {
    const steps = day(opening, txns).map((s, i) => ({ ...s, at: new Date(T0 + 3_600_000 + i * 8_000) }))
    const text = (s: Step) => `[KB]${kst(s.at)} ${account} ${s.name} ${s.direction === "in" ? "입금" : "출금"} ${won(s.amount)} 잔액 ${won(s.balance)}`
    return { steps, text, kb: { sender: "16449999", bank: "KB국민", account } }
  }

  it("the fifth of six messages in one minute, arriving after the sixth, closes the gap the sixth opened; the last balance stays the sixth's", async () => {
    const account = "902002**3301"
    const { steps, text, kb } = kbMinute(account, 1_000_000)
    const facts = []
    for (const s of steps) facts.push(await arrive("phone-a", text(s), s, kb))
    for (const i of [0, 1, 2, 3, 5]) await record([facts[i]!])
    assert.deepStrictEqual(await openGaps(account), [{ after: facts[3]!.smsId, before: facts[5]!.smsId, unexplained: 10_000 }])
    // A second later: the same printed minute, later than the sixth by arrival.
    const late = { ...facts[4]!, receivedAt: new Date(facts[5]!.receivedAt.getTime() + 1000) }
    assert.deepStrictEqual(await record([late]), { placed: 1, duplicates: 0, opened: 0, closed: 1 })
    assert.deepStrictEqual(await openGaps(account), [])
    const row = await accountRow(account)
    assert.deepStrictEqual([row.lastBalance, row.lastSms], [steps[5]!.balance, facts[5]!.smsId])
    // Closed within the grace period: never announced.
    await announce()
    assert.deepStrictEqual(await gapEvents(account), [])
  })

  it("a minute's messages in any arrival order, one at a time: no gap at the end, the chain's end is the last balance", async () => {
    for (const [k, order] of [[1, 0, 3, 2, 5, 4], [5, 2, 0, 4, 1, 3], [5, 4, 3, 2, 1, 0], [2, 5, 0, 3, 1, 4]].entries()) {
      const account = `902002**340${k}`
      const { steps, text, kb } = kbMinute(account, 2_000_000)
      const facts = []
      for (const s of steps) facts.push(await arrive("phone-a", text(s), s, kb))
      for (const i of order) await record([facts[i]!])
      assert.deepStrictEqual(await openGaps(account), [], order.join(","))
      assert.strictEqual((await accountRow(account)).lastBalance, steps[5]!.balance, order.join(","))
      const chain = await query((sql) => sql<{ sms_id: bigint }>`SELECT e.sms_id FROM recon.balance_entry AS e
        JOIN recon.balance_account AS a ON a.id = e.account_id WHERE a.account = ${account} ORDER BY e.pos`)
      assert.deepStrictEqual(chain.map((r) => Number(r.sms_id)), facts.map((f) => f.smsId), `the chain's order, ${order.join(",")}`)
    }
  })

  it("a gap is announced once past the grace period; an explained one alerts no more, and a message still closes it", async () => {
    const account = "352-****-9191-01"
    const steps = day(700_000, txns)
    const facts = []
    for (const s of steps) facts.push(await arrive("phone-a", nhText(account, s), s, nh(account)))
    for (const i of [0, 2, 3, 5]) await record([facts[i]!])
    assert.strictEqual((await openGaps(account)).length, 2)
    // Within the grace period (a generous one): nothing is sent.
    assert.strictEqual(await announce(3600), 0)
    const call = recon(server.url)
    const listed = (await call("/accounts/list", { has_gaps: true, page_size: 200 })).body.data.items.find((a: any) => a.account === account)
    const [first, second] = listed.gaps
    const explained = await call("/accounts/gap/explain", { gap_id: first.id, reason: "monthly sweep", amount: "-12000", operator: "kim" })
    assert.strictEqual(explained.http, 200, JSON.stringify(explained.body))
    assert.deepInclude(explained.body.data.explained, { reason: "monthly sweep", amount: "-12000", operator: "kim" })
    assert.strictEqual((await call("/accounts/gap/explain", { gap_id: first.id, reason: "again", operator: "kim" })).http, 409)
    assert.strictEqual((await call("/accounts/gap/explain", { gap_id: 999_999_999, reason: "x", operator: "kim" })).http, 404)
    // Past the grace period: the other gap is announced, the explained one is not.
    await announce()
    assert.deepStrictEqual((await gapEvents(account)).map((e) => e.after_sms_id), [second.after_sms_id])
    await announce()
    assert.strictEqual((await gapEvents(account)).length, 1, "each gap once")
    // The missing message arrives after all: it closes the explained gap.
    await record([facts[1]!])
    assert.deepStrictEqual((await openGaps(account)).map((g) => g.after), [second.after_sms_id])
    assert.strictEqual((await call("/accounts/gap/unexplain", { gap_id: first.id, operator: "kim" })).http, 409)
    const actions = (await call("/accounts/actions", { account_id: listed.id })).body.data.items
    assert.deepStrictEqual(actions.map((a: any) => [a.action, a.operator, a.gap_id, a.reason, a.amount]), [["explain", "kim", first.id, "monthly sweep", "-12000"]])
  })

  it("two phones forwarding one 신한 account (no digits): merged by an operator, each fills the other's gaps; undone, they are back", async () => {
    const steps = day(4_250_000, txns)
    const shinhan = (s: Step) => `신한은행\n${s.direction === "in" ? "입금" : "출금"} ${won(s.amount)}원\n${kst(s.at).slice(6)}\n${s.name}님\n잔액: ${won(s.balance)}원`
    const fact = { sender: "15778001", bank: "신한" }
    // Phone A misses the third message, phone B the fifth.
    for (const [i, s] of steps.entries()) {
      if (i !== 2) await record([await arrive("merge-a", shinhan(s), s, fact)])
      if (i !== 4) await record([await arrive("merge-b", shinhan(s), s, fact, { receivedAt: new Date(s.at.getTime() + 2000) })])
    }
    const call = recon(server.url)
    const mine = async () => (await call("/accounts/list", { page_size: 200 })).body.data.items.filter((a: any) => a.sender === "15778001")
      .sort((a: any, b: any) => a.device_id.localeCompare(b.device_id))
    const [a, b] = await mine()
    assert.deepStrictEqual([a.gaps.length, b.gaps.length], [1, 1])
    const merged = await call("/accounts/merge", { account_id: b.id, into_id: a.id, operator: "lee" })
    assert.strictEqual(merged.http, 200, JSON.stringify(merged.body))
    assert.deepStrictEqual(merged.body.data.gaps, [])
    assert.strictEqual(merged.body.data.last_balance, String(steps[5]!.balance))
    // A later message from phone B lands in the merged chain.
    const next = day(steps[5]!.balance, [{ direction: "in", amount: 7_000, name: "박지훈" }]).map((s) => ({ ...s, at: new Date(steps[5]!.at.getTime() + 60_000) }))[0]!
    await record([await arrive("merge-b", shinhan(next), next, fact)])
    const [afterA, afterB] = await mine()
    assert.deepStrictEqual([afterA.gaps, afterA.last_balance, afterB.merged_into], [[], String(next.balance), a.id])
    assert.strictEqual((await call("/accounts/merge", { account_id: b.id, into_id: a.id, operator: "lee" })).http, 409)
    const undone = await call("/accounts/unmerge", { account_id: b.id, operator: "park" })
    assert.strictEqual(undone.http, 200, JSON.stringify(undone.body))
    const [backA, backB] = await mine()
    assert.deepStrictEqual([backA.gaps.length, backB.gaps.length, backB.merged_into, backB.last_balance], [1, 1, null, String(next.balance)])
    const actions = (await call("/accounts/actions", { account_id: b.id })).body.data.items
    assert.deepStrictEqual(actions.map((x: any) => [x.action, x.operator, x.account_id, x.other_account_id]), [["unmerge", "park", b.id, a.id], ["merge", "lee", b.id, a.id]])
    // An account that shows its digits is placed by them, never merged.
    const digits = (await call("/accounts/list", { page_size: 200 })).body.data.items.find((x: any) => x.account !== null)
    assert.strictEqual((await call("/accounts/merge", { account_id: digits.id, into_id: a.id, operator: "lee" })).http, 409)
  })
})
