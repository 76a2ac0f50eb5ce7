// Suggestions for an SMS that waits for a person (DESIGN section 11, "Reconciliation aids"): the
// pending deposits it may pay beyond the exact match, ranked, each with the reasons. A suggestion
// is never approved without a person. Pure: the store finds the deposits worth a look with the
// search keys made here, and `suggest` decides what is shown.
import { BigDecimal, Option } from "effect"
import { escapeLike } from "./PgValues.ts"

/** Why a deposit is suggested (DESIGN section 11): how the names relate, and how the amounts do. */
export const SUGGESTION_REASONS = ["name_separators", "name_prefix", "name_truncated", "masked_name", "amount_differs", "sum_of_sms"] as const
export type SuggestionReason = (typeof SUGGESTION_REASONS)[number]
export type NameReason = Exclude<SuggestionReason, "amount_differs" | "sum_of_sms">

export interface Suggestion {
  readonly deposit_id: number
  readonly player_id: number
  readonly from_bank_owner: string
  readonly amount: string
  readonly reasons: ReadonlyArray<SuggestionReason>
  /** 0 to 1: how likely a person finds it is the one (name likeness, then amount closeness). */
  readonly score: number
  /** sum_of_sms: the SMS (this one first) whose amounts add up to the deposit. */
  readonly sms_ids?: ReadonlyArray<number>
}

/** A pending deposit the store found, with its keys as the database computed them. */
export interface PendingDeposit {
  readonly deposit_id: number
  readonly player_id: number
  readonly from_bank_owner: string
  readonly amount: string
  /** recon.name_key(from_bank_owner). */
  readonly owner_key: string
  /** recon.loose_name_key(from_bank_owner). */
  readonly owner_loose_key: string
}

export interface SuggestionSubject {
  readonly smsId: number
  readonly payerName: string | null
  /** recon.name_key(payer_name). */
  readonly payerKey: string | null
  readonly amount: string | null
  /** The payer's other SMS waiting for a person (unmatched, manual_review), nearest in time first. */
  readonly siblings: ReadonlyArray<{ readonly smsId: number; readonly amount: string }>
}

/** At most this many suggestions per SMS. */
export const MAX_SUGGESTIONS = 5
/** Siblings combined for sum_of_sms (besides the SMS itself), and at most how many of them at once. */
export const MAX_SIBLINGS = 10
const MAX_PARTS = 3
/** A name cut short still shows this many characters: fewer would suggest every 김철… for 김철. */
const MIN_TRUNCATED = 3
/** A name found inside a longer one (after a glued prefix or code) has at least this many characters. */
const MIN_GLUED_NAME = 2

// The characters recon.loose_name_key removes (migration 0014): white space (recon.name_key's
// list), separators and their look-alikes (ㆍ becomes U+119E under NFKC), brackets.
const looseDropped = /[\][(){}<>\u0009-\u000d\u0020\u0085\u00a0\u1680\u180e\u2000-\u200b\u2028\u2029\u202f\u205f\u2060\u3000\ufeff._\u00b7\u318d\u119e\u30fb\u2022\u2027\u2010-\u2015\u2212-]+/gu

/** recon.loose_name_key: NFKC, ASCII lower case, no white space, separators or brackets; `*` kept. */
export const looseNameKey = (name: string): string =>
  name.normalize("NFKC").replace(looseDropped, "").replace(/[A-Z]+/g, (s) => s.toLowerCase())

// What a depositor glues to the name: a bank (국민김철수, KB김철수, 국민은행김철수) or a code or memo
// of Latin letters and digits (coin1147 박석호, 088-조휘서, 김철수1234), as loose keys.
const banks = [
  "kb", "kb국민", "국민", "nh", "nh농협", "농협", "농축협", "축협", "신한", "우리", "하나", "ibk", "기업", "카카오", "카카오뱅크",
  "카뱅", "토스", "토스뱅크", "케이뱅크", "k뱅크", "신협", "새마을", "새마을금고", "mg", "우체국", "수협", "sh", "대구", "im", "im뱅크",
  "부산", "bnk", "경남", "광주", "전북", "제주", "sc", "sc제일", "제일", "씨티", "산업", "kdb", "저축", "저축은행", "산림조합"
]
const gluedPart = new RegExp(`^(?:(?:${banks.join("|")})(?:은행)?[a-z0-9]*|[a-z0-9]+)$`)

/** The loose keys a deposit owner may have and the ranges to search, for one payer name. */
export interface SearchKeys {
  /** Owners whose loose key is one of these: the name itself, or the name without a glued bank or code. */
  readonly keys: ReadonlyArray<string>
  /** Owners whose loose key starts with this (the bank cut the name short). */
  readonly truncated: string | null
  /** A masked name (`김*수`): its LIKE pattern (one `_` per `*`), and the part to search an index by. */
  readonly masked: {
    readonly pattern: string
    /** The longer unmasked end: the characters before the first `*` (searched forward), or those after the last, reversed. */
    readonly prefix: string | null
    readonly reversedSuffix: string | null
  } | null
}

export const searchKeys = (payerName: string): SearchKeys => {
  const s = looseNameKey(payerName)
  const keys = new Set<string>(s === "" ? [] : [s])
  for (let i = 1; i <= s.length - MIN_GLUED_NAME; i++) {
    if (gluedPart.test(s.slice(0, i))) keys.add(s.slice(i))
    if (gluedPart.test(s.slice(s.length - i))) keys.add(s.slice(0, s.length - i))
  }
  const stars = s.indexOf("*")
  const before = stars < 0 ? "" : s.slice(0, stars)
  const after = stars < 0 ? "" : s.slice(s.lastIndexOf("*") + 1)
  // The longer unmasked end narrows the index range more (김*객12: by 객12 from the end).
  const masked = stars < 0 || s.replaceAll("*", "") === "" ? null : {
    pattern: s.split("*").map(escapeLike).join("_"),
    prefix: before.length >= after.length ? before : null,
    reversedSuffix: before.length >= after.length ? null : [...after].reverse().join("")
  }
  return {
    keys: [...keys].filter((k) => !k.includes("*")),
    truncated: stars < 0 && [...s].length >= MIN_TRUNCATED ? s : null,
    masked
  }
}

/** How a payer name relates to a deposit owner: the same name (exact match's rule), or one reason, and how strongly. */
export const nameRelation = (
  sms: { readonly key: string; readonly loose: string },
  owner: { readonly key: string; readonly loose: string }
): { readonly reason: NameReason | "same"; readonly strength: number } | undefined => {
  const s = sms.loose
  const o = owner.loose
  if (sms.key === owner.key) return { reason: "same", strength: 1 }
  if (s === "" || o === "") return undefined
  if (s === o) return { reason: "name_separators", strength: 0.95 }
  const sChars = [...s]
  const oChars = [...o]
  if (s.includes("*")) {
    const shown = sChars.filter((c) => c !== "*").length
    return shown > 0 && sChars.length === oChars.length && sChars.every((c, i) => c === "*" || c === oChars[i])
      ? { reason: "masked_name", strength: 0.6 + 0.25 * (shown / sChars.length) }
      : undefined
  }
  if (oChars.length >= MIN_GLUED_NAME && ((s.endsWith(o) && gluedPart.test(s.slice(0, s.length - o.length)))
    || (s.startsWith(o) && gluedPart.test(s.slice(o.length))))) {
    return { reason: "name_prefix", strength: 0.85 }
  }
  if (sChars.length >= MIN_TRUNCATED && oChars.length > sChars.length && o.startsWith(s)) {
    return { reason: "name_truncated", strength: 0.5 + 0.35 * (sChars.length / oChars.length) }
  }
  return undefined
}

const decimal = (text: string) => Option.getOrUndefined(BigDecimal.fromString(text))
const ONE_PERCENT = BigDecimal.fromStringUnsafe("0.01")
const FLOOR = BigDecimal.fromStringUnsafe("1000")

/**
 * How far an amount may be from the deposit's and still be suggested: 1 % of the deposit, at least
 * 1,000 won. A digit slipped at the end, a memo typed into the amount (50,027 for 50,000) or a fee
 * added by hand stays within it; a depositor's other orders (round sums: 10,000, 30,000, 50,000)
 * never come that close to each other.
 */
export const amountTolerance = (depositAmount: BigDecimal.BigDecimal): BigDecimal.BigDecimal =>
  BigDecimal.max(FLOOR, BigDecimal.multiply(depositAmount, ONE_PERCENT))

/** 0 for equal amounts, up to 1 at the tolerance; undefined beyond it. */
export const amountDistance = (smsAmount: string, depositAmount: string): number | undefined => {
  const a = decimal(smsAmount)
  const d = decimal(depositAmount)
  if (a === undefined || d === undefined) return undefined
  const difference = BigDecimal.abs(BigDecimal.subtract(a, d))
  const tolerance = amountTolerance(d)
  if (BigDecimal.isGreaterThan(difference, tolerance)) return undefined
  return BigDecimal.toNumberUnsafe(difference) / BigDecimal.toNumberUnsafe(tolerance)
}

/** The siblings (at most MAX_PARTS, fewest first) that with `amount` add up to `target` exactly. */
const partsAddingUp = (amount: BigDecimal.BigDecimal, target: BigDecimal.BigDecimal, siblings: SuggestionSubject["siblings"]) => {
  const parts = siblings.slice(0, MAX_SIBLINGS).flatMap((s) => {
    const value = decimal(s.amount)
    return value === undefined ? [] : [{ smsId: s.smsId, value }]
  })
  const rest = BigDecimal.subtract(target, amount)
  const search = (from: number, left: BigDecimal.BigDecimal, size: number): ReadonlyArray<number> | undefined => {
    if (size === 0) return BigDecimal.isZero(left) ? [] : undefined
    for (let i = from; i < parts.length; i++) {
      const part = parts[i]!
      if (!BigDecimal.isPositive(part.value) || BigDecimal.isGreaterThan(part.value, left)) continue
      const found = search(i + 1, BigDecimal.subtract(left, part.value), size - 1)
      if (found !== undefined) return [part.smsId, ...found]
    }
    return undefined
  }
  if (!BigDecimal.isPositive(rest)) return undefined
  for (let size = 1; size <= MAX_PARTS; size++) {
    const found = search(0, rest, size)
    if (found !== undefined) return found
  }
  return undefined
}

const round = (score: number) => Math.round(score * 100) / 100

/**
 * The suggestions for one SMS among `deposits` (pending, not being approved): the name related
 * and the amount equal, within the tolerance, or completed by the payer's other SMS; never the
 * exact match itself (same name, same amount: that is `match.candidates`). Best first, at most 5.
 */
export const suggest = (subject: SuggestionSubject, deposits: ReadonlyArray<PendingDeposit>): ReadonlyArray<Suggestion> => {
  if (subject.payerName === null || subject.payerKey === null || subject.amount === null) return []
  const amount = decimal(subject.amount)
  if (amount === undefined) return []
  const sms = { key: subject.payerKey, loose: looseNameKey(subject.payerName) }
  const ranked: Array<{ readonly suggestion: Suggestion; readonly distance: number }> = []
  const seen = new Set<number>()
  for (const deposit of deposits) {
    if (seen.has(deposit.deposit_id)) continue
    seen.add(deposit.deposit_id)
    const name = nameRelation(sms, { key: deposit.owner_key, loose: deposit.owner_loose_key })
    const target = decimal(deposit.amount)
    if (name === undefined || target === undefined) continue
    const nameReasons: ReadonlyArray<SuggestionReason> = name.reason === "same" ? [] : [name.reason]
    const base = { deposit_id: deposit.deposit_id, player_id: deposit.player_id, from_bank_owner: deposit.from_bank_owner, amount: deposit.amount }
    const distance = amountDistance(subject.amount, deposit.amount)
    if (distance === 0) {
      // The exact match is not a suggestion.
      if (name.reason !== "same") ranked.push({ suggestion: { ...base, reasons: nameReasons, score: round(name.strength) }, distance: 0 })
      continue
    }
    if (distance !== undefined) {
      ranked.push({
        suggestion: { ...base, reasons: [...nameReasons, "amount_differs"], score: round(name.strength * (0.8 - 0.3 * distance)) },
        distance
      })
      continue
    }
    const parts = partsAddingUp(amount, target, subject.siblings)
    if (parts !== undefined) {
      ranked.push({
        suggestion: { ...base, reasons: [...nameReasons, "sum_of_sms"], score: round(name.strength * 0.75), sms_ids: [subject.smsId, ...parts] },
        distance: 1
      })
    }
  }
  return ranked
    .sort((a, b) => b.suggestion.score - a.suggestion.score || a.distance - b.distance || a.suggestion.deposit_id - b.suggestion.deposit_id)
    .slice(0, MAX_SUGGESTIONS)
    .map((r) => r.suggestion)
}
