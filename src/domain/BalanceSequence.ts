// Balance continuity (DESIGN section 11): every message that carries a transaction of an account
// (deposits and outgoing money alike) is an entry of that account's sequence, in received order.
// Between two consecutive entries that show a balance, `previous ± amount = balance` must hold,
// counting the entries between them that show no balance (they cannot be placed themselves, but
// their amounts still explain the step); a step it does not explain is a gap: an SMS that never
// arrived, or was never read. Pure. Where a new message goes in its account's chain (by the
// balances, whatever its arrival order) is domain/BalanceChain.ts.
import { BigDecimal } from "effect"
import { normalizePhone } from "./Phone.ts"

export type Direction = "in" | "out"

/** What parse_loop knows of one message that carried a transaction of an account. */
export interface BalanceFact {
  readonly smsId: number
  readonly receivedAt: Date
  readonly deviceId: string
  readonly sender: string
  readonly bank?: string | null | undefined
  /** The account digits as the message shows them (masked form kept: `352-****-4273-63`). */
  readonly account?: string | null | undefined
  readonly direction: Direction
  /** A decimal string (`"50000"`). */
  readonly amount: string
  /** The balance printed after the transaction (`잔액`); null when the message shows none. */
  readonly balance: string | null
  /** The transaction time printed, when it was read. */
  readonly txnAt?: Date | null | undefined
}

/** Which account a message belongs to: the bank and the account digits shown, else the device and the sender. */
export interface AccountIdentity {
  readonly key: string
  readonly bank: string | null
  readonly account: string | null
  readonly deviceId: string | null
  readonly sender: string | null
}

/** Account digits as compared: digits and mask characters only; fewer than 3 digits is no account. */
const accountDigits = (account: string): string | undefined => {
  const folded = account.normalize("NFKC").replace(/[^0-9*]/g, "")
  return folded.replace(/\*/g, "").length >= 3 ? folded : undefined
}

const compact = (text: string) => text.normalize("NFKC").replace(/\s+/g, "").toLowerCase()

export const accountOf = (fact: BalanceFact): AccountIdentity => {
  const bank = fact.bank === undefined || fact.bank === null || fact.bank.trim() === "" ? null : fact.bank.trim()
  const sender = normalizePhone(fact.sender) ?? fact.sender.trim()
  const digits = fact.account === undefined || fact.account === null ? undefined : accountDigits(fact.account)
  if (digits !== undefined) {
    // Two phones forwarding the same account's messages land in the same account.
    return { key: `account:${bank === null ? `sender ${sender}` : compact(bank)}:${digits}`, bank, account: fact.account!.trim(), deviceId: null, sender: null }
  }
  return { key: `device:${fact.deviceId}:${sender}`, bank, account: null, deviceId: fact.deviceId, sender }
}

/** An entry of an account's sequence (times in epoch milliseconds). */
export interface Entry {
  readonly smsId: number
  readonly receivedAt: number
  readonly txnAt: number | null
  readonly deviceId: string
  readonly direction: Direction
  readonly amount: string
  readonly balance: string | null
  /** The earlier entry of the same transaction (the same message from another phone or channel). */
  readonly duplicateOf: number | null
}

export const entryOf = (fact: BalanceFact): Entry => ({
  smsId: fact.smsId,
  receivedAt: fact.receivedAt.getTime(),
  txnAt: fact.txnAt?.getTime() ?? null,
  deviceId: fact.deviceId,
  direction: fact.direction,
  amount: fact.amount,
  balance: fact.balance,
  duplicateOf: null
})

/** Received order; the SMS id breaks ties. */
export const compareEntries = (a: Entry, b: Entry): number => a.receivedAt - b.receivedAt || a.smsId - b.smsId

/** Copies of one transaction arrive this close together (two phones, an app push beside the SMS). */
export const DUPLICATE_WINDOW_MS = 10 * 60_000

const decimal = (text: string) => BigDecimal.fromStringUnsafe(text)
// "1000" and "1000.00" (as PostgreSQL answers numeric(18,2)) are the same amount.
const canonical = (text: string) => text.includes(".") ? text.replace(/\.?0+$/, "") : text
const sameDecimal = (a: string | null, b: string | null) => a === null || b === null ? a === b : canonical(a) === canonical(b)

/**
 * Two entries are one transaction when direction, amount and balance agree and they happened
 * together: the same printed time when both show one (a re-send hours later still matches), else
 * received within DUPLICATE_WINDOW_MS. (The same amount in, out and in again within minutes, with
 * no time printed, would read as one: a false gap later, never a missed one.)
 */
export const sameTransaction = (a: Entry, b: Entry): boolean =>
  a.direction === b.direction && sameDecimal(a.amount, b.amount) && sameDecimal(a.balance, b.balance) &&
  (a.txnAt !== null && b.txnAt !== null ? a.txnAt === b.txnAt : Math.abs(a.receivedAt - b.receivedAt) <= DUPLICATE_WINDOW_MS)

const signed = (e: Entry) => e.direction === "in" ? decimal(e.amount) : BigDecimal.negate(decimal(e.amount))

export interface Gap {
  readonly afterSmsId: number
  readonly beforeSmsId: number
  /** How much more the balance moved than the messages explain (negative: money left unseen). */
  readonly unexplained: string
}

/** The gaps of a run of entries in received order (duplicates are left out). */
export const gapsOf = (entries: ReadonlyArray<Entry>): ReadonlyArray<Gap> => {
  const gaps: Array<Gap> = []
  let previous: Entry | undefined
  let between = BigDecimal.fromBigInt(0n)
  for (const entry of entries) {
    if (entry.duplicateOf !== null) continue
    if (entry.balance === null) {
      between = BigDecimal.sum(between, signed(entry))
      continue
    }
    if (previous !== undefined) {
      const expected = BigDecimal.sum(BigDecimal.sum(decimal(previous.balance!), between), signed(entry))
      const unexplained = BigDecimal.subtract(decimal(entry.balance), expected)
      if (!BigDecimal.isZero(unexplained)) {
        gaps.push({ afterSmsId: previous.smsId, beforeSmsId: entry.smsId, unexplained: BigDecimal.format(BigDecimal.normalize(unexplained)) })
      }
    }
    previous = entry
    between = BigDecimal.fromBigInt(0n)
  }
  return gaps
}
