// The demo phone's bank SMS as recon reads them (the built-in templates and reader): every
// account's notices print a running balance that is read back, so one account's messages, from
// either phone, form a sequence without a gap; one withheld opens exactly one gap of its amount,
// and its late arrival closes it; a restart continues from the balance the last notice printed. The near misses are read as the payer typed them and suggested
// for their request with the reason meant; the 신협 layouts are read by nobody (parse_failed).
import { assert, describe, it } from "@effect/vitest"
import {
  type Account,
  accountShown,
  balanceShown,
  type Bank,
  COMPANY,
  depositSms,
  Ledger,
  NEAR_MISSES,
  type NearMiss,
  nearMiss,
  unknownSender,
  unknownSenderSms,
  unreadableSms,
  unreadBank,
  banks,
  withdrawalSms
} from "../../src/demo/BankSms.ts"
import { accountOf, type BalanceFact, compareEntries, entryOf, gapsOf } from "../../src/domain/BalanceSequence.ts"
import { parseSms } from "../../src/parse/SmsParse.ts"
import { templateSet } from "../../src/parse/Templates.ts"
import { compactForComparison } from "../../src/domain/SmsText.ts"
import { looseNameKey, suggest, type SuggestionReason } from "../../src/domain/Suggestions.ts"
import { builtinTemplates } from "../support/parse.ts"

const templates = templateSet(builtinTemplates)
const T0 = Date.parse("2026-11-25T12:00:00Z")

interface Sent {
  readonly smsId: number
  readonly sender: string
  readonly body: string
  readonly at: Date
  readonly deviceId: string
}

/** The balance fact of an SMS as recon reads it (what parse_loop hands balance continuity), if it carries one. */
const factOf = (sms: Sent): BalanceFact | undefined => {
  const outcome = parseSms({ body: sms.body, sender: sms.sender, receivedAt: sms.at }, templates)
  const slots = outcome.detail.slots
  if (slots?.amount === undefined || slots.balance === undefined) return undefined
  return {
    smsId: sms.smsId, receivedAt: sms.at, deviceId: sms.deviceId, sender: sms.sender, bank: slots.bank ?? null,
    account: slots.account ?? null, direction: slots.direction, amount: slots.amount, balance: slots.balance
  }
}

/** The gaps of each account (by its key) among these SMS. */
const gapsByAccount = (sent: ReadonlyArray<Sent>) => {
  const entries = new Map<string, Array<ReturnType<typeof entryOf>>>()
  for (const fact of sent.flatMap((s) => factOf(s) ?? [])) {
    const key = accountOf(fact).key
    entries.set(key, [...(entries.get(key) ?? []), entryOf(fact)])
  }
  return new Map([...entries].map(([key, list]) => [key, gapsOf([...list].sort(compareEntries))]))
}

const OPENING: Record<Account, number> = { KB: 1_000_000, NH: 2_500_000, SHINHAN: 730_000, SHINHYUP: 90_000, IBK: 4_000_000 }
const names = ["이서연", "박지호", "최윤서", "정도현", "강하은", "조민재"]

/** An hour of the demo phone: deposits of the three banks in turn, KB's withdrawals, 신협's and IBK기업's deposits. */
const anHour = () => {
  const ledger = new Ledger(OPENING)
  const sent: Array<Sent & { readonly account: Account; readonly amount: number }> = []
  for (let i = 0; i < 60; i++) {
    const at = new Date(T0 + i * 60_000)
    const amount = (1 + (i % 7)) * 10_000
    const name = names[i % names.length]!
    const add = (account: Account, sender: string, body: string, value: number) =>
      sent.push({ smsId: i + 1, sender, body, at, deviceId: "demo-phone-1", account, amount: value })
    if (i % 10 === 7) add("KB", banks.KB.sender, withdrawalSms("쿠팡", 8_110, ledger.move("KB", -8_110), at), -8_110)
    else if (i % 20 === 11) add("SHINHYUP", unreadBank.sender, unreadableSms(i % 40 < 20 ? 0 : 1, name, amount, ledger.move("SHINHYUP", amount), at), amount)
    else if (i % 20 === 16) add("IBK", unknownSender.sender, unknownSenderSms(name, amount, ledger.move("IBK", amount), at), amount)
    else {
      const bank = (["KB", "NH", "SHINHAN"] as const)[i % 3]!
      add(bank, banks[bank].sender, depositSms(bank, name, amount, ledger.move(bank, amount), at), amount)
    }
  }
  return sent
}

describe("the demo phone's notices", () => {
  it("read back as one account each, with balances that explain every step", () => {
    const sent = anHour()
    const gaps = gapsByAccount(sent)
    // KB, NH and 신한 (account digits shown) and IBK기업; 신협's are read by nobody, so none of them is placed.
    assert.deepStrictEqual([...gaps.keys()].sort(), [
      `account:ibk기업:${accountShown.IBK!.replace(/\D/g, "")}`,
      "account:kb국민:834702**717",
      "account:nh농협:352****427363",
      "account:신한:110496922482"
    ])
    for (const [key, found] of gaps) assert.deepStrictEqual(found, [], key)
    for (const sms of sent.filter((s) => s.account === "SHINHYUP")) {
      const outcome = parseSms({ body: sms.body, sender: sms.sender, receivedAt: sms.at }, templates)
      assert.strictEqual(outcome.status, "parse_failed", sms.body)
    }
  })

  it("print the running balance the next run continues from (balanceShown), whatever the layout", () => {
    const running = { ...OPENING }
    for (const sms of anHour()) {
      running[sms.account] += sms.amount
      assert.strictEqual(balanceShown(sms.body), running[sms.account], sms.body)
    }
  })

  it("one withheld opens exactly one gap of its amount in its account; re-sent by the second phone, none", () => {
    const sent = anHour()
    const withheld = sent.find((s, i) => i > 20 && s.account === "NH")!
    const without = sent.filter((s) => s !== withheld)
    const gaps = gapsByAccount(without)
    const nh = gaps.get("account:nh농협:352****427363")!
    assert.strictEqual(nh.length, 1)
    assert.strictEqual(nh[0]!.unexplained, String(withheld.amount))
    for (const [key, found] of gaps) if (!key.startsWith("account:nh농협")) assert.deepStrictEqual(found, [], key)
    // The SMS Gateway app of the second phone re-sends it, its received time kept: the same account, no gap.
    const resent = gapsByAccount([...without, { ...withheld, smsId: 1000, deviceId: "demo-phone-2" }])
    for (const [key, found] of resent) assert.deepStrictEqual(found, [], key)
  })
})

describe("the demo's near misses", () => {
  const expected: Record<NearMiss, SuggestionReason> = {
    code_prefix: "name_prefix",
    separators: "name_separators",
    bank_prefix: "name_prefix",
    truncated: "name_truncated",
    amount_differs: "amount_differs"
  }

  it("are read as the payer typed them, matched by no request exactly, and suggested for theirs with the reason meant", () => {
    for (const kind of NEAR_MISSES) {
      for (const bank of ["KB", "NH", "SHINHAN"] as const satisfies ReadonlyArray<Bank>) {
        const owner = kind === "truncated" ? COMPANY : "박석호"
        const sent = nearMiss(kind, owner, 50_000, 1147)
        const outcome = parseSms({ body: depositSms(bank, sent.payer, sent.amount, 1_234_567, new Date(T0)), sender: banks[bank].sender, receivedAt: new Date(T0) }, templates)
        assert.strictEqual(outcome.status, "parsed", `${kind} ${bank}`)
        if (outcome.status !== "parsed") continue
        assert.deepStrictEqual([outcome.payerName, outcome.amount], [sent.payer, String(sent.amount)], `${kind} ${bank}`)
        const found = suggest(
          { smsId: 1, payerName: outcome.payerName, payerKey: compactForComparison(outcome.payerName), amount: outcome.amount, siblings: [] },
          [{ deposit_id: 7, player_id: 3, from_bank_owner: owner, amount: "50000", owner_key: compactForComparison(owner), owner_loose_key: looseNameKey(owner) }]
        )
        assert.strictEqual(found.length, 1, `${kind} ${bank}`)
        assert.include(found[0]!.reasons, expected[kind], `${kind} ${bank}`)
        // Never the exact match: a person decides.
        assert.isFalse(compactForComparison(outcome.payerName) === compactForComparison(owner) && outcome.amount === "50000", kind)
      }
    }
    assert.strictEqual(nearMiss("amount_differs", "박석호", 50_000, 0).amount, 50_500)
    assert.match(nearMiss("code_prefix", "박석호", 50_000, 1147).payer, /^[a-z]+\d{4} 박석호$/)
  })
})
