// Balance placement by the balances themselves (DESIGN section 11, issue 34). An account's placed
// messages form a chain ordered by `pos` (a decimal: a message placed between two others takes the
// midpoint). A new message goes, in this order of preference:
//   1. nowhere, as a copy of a transaction already seen (another phone, another channel);
//   2. at the chain's end when its printed time is not before the end's and its balance follows
//      from the end's (`end ± amount = balance`);
//   3. into an open gap whose arithmetic it fits: right after the gap's first message
//      (`after ± amount = balance`) or right before its last (`balance ± last's amount = last`),
//      whatever its arrival order: what is left of the gap stays open (the same gap: its `since`,
//      announcement and explanation kept), none left closes it;
//   4. at the chain's end (a gap opens when the balance does not follow);
//   5. by its printed time among the chain's last messages (a message late and fitting nothing).
// A message without a balance cannot be placed by arithmetic: it goes into an open gap of exactly
// its amount, else at the end (its amount counts in the next step), else by time.
//
// The work per message is bounded: the chain's end, the open gaps its balance or amount fits
// (looked up by index) and, for rule 5 only, the chain's last TAIL messages. The store loads those
// (`ChainView`), `Chain` places facts in memory and says what changed; the same code rebuilds a
// whole account in memory (a merge of two device-accounts) from a view holding all of it.
import { BigDecimal } from "effect"

type Dec = BigDecimal.BigDecimal
import { type Entry, sameTransaction } from "./BalanceSequence.ts"

/** Messages of the chain's end loaded for placement by time (rule 5). */
export const TAIL = 32
/** Printed times are minutes; a message fits a gap whose ends' printed times are within this of its own. */
const FIT_SLACK_MS = 60_000

const ZERO = BigDecimal.fromBigInt(0n)
const ONE = BigDecimal.fromBigInt(1n)
const HALF = BigDecimal.fromStringUnsafe("0.5")
const dec = (text: string) => BigDecimal.fromStringUnsafe(text)
export const decText = (d: Dec) => BigDecimal.format(BigDecimal.normalize(d))
const same = (a: Dec, b: Dec) => BigDecimal.equals(a, b)
const less = (a: Dec, b: Dec) => BigDecimal.Order(a, b) < 0
const mid = (a: Dec, b: Dec) => BigDecimal.multiply(BigDecimal.sum(a, b), HALF)
const signedOf = (e: Entry) => e.direction === "in" ? dec(e.amount) : BigDecimal.negate(dec(e.amount))
/** The time a message tells of: the printed one, else when it was received. */
const timeOf = (e: Entry) => e.txnAt ?? e.receivedAt
const key = (d: Dec) => decText(d)

/** A placed message: an entry with its position in the chain. */
export interface Placed extends Entry {
  readonly pos: string
}

/** An open gap as the store loads it: its two ends and what lies between them. */
export interface GapView {
  readonly id: number
  readonly after: Placed
  readonly before: Placed
  /** The signed amounts of the balance-less messages placed between the two ends. */
  readonly between: string
  /** The position of the message right after `after` (`before`'s own when nothing is between). */
  readonly afterNext: string
  /** The position of the message right before `before`. */
  readonly beforePrev: string
  readonly since: number
}

/** What the store loads of one account to place new facts in it. */
export interface ChainView {
  /** The chain's last messages in order (up to TAIL; all of them when `complete`). */
  readonly tail: ReadonlyArray<Placed>
  readonly complete: boolean
  /** The chain's last message with a balance (its end), the last position, the balance-less amounts after the end. */
  readonly lastBalance: Placed | undefined
  readonly endPos: string | undefined
  readonly tailBetween: string
  /** Open gaps the new facts may fit, and those whose first end is in the tail. */
  readonly gaps: ReadonlyArray<GapView>
  /** Entries a new fact may repeat (same direction, amount and balance, received near it). */
  readonly candidates: ReadonlyArray<Entry>
}

export const emptyView: ChainView = { tail: [], complete: true, lastBalance: undefined, endPos: undefined, tailBetween: "0", gaps: [], candidates: [] }

interface Node {
  readonly entry: Entry
  pos: Dec
}

interface GapState {
  /** Undefined: opened by this placement. */
  readonly id: number | undefined
  after: Node
  before: Node
  between: Dec
  afterNext: Dec
  beforePrev: Dec
  readonly since: number
  /** The gap it was split from (its announcement is inherited). */
  readonly splitFrom: number | undefined
  closedBy: number | undefined
  changed: boolean
}

/** A gap as written: its ends, what is unexplained, and the keys it is found by. */
export interface GapWrite {
  readonly afterSmsId: number
  readonly beforeSmsId: number
  readonly unexplained: string
  /** The balance of its first end (a message fits right after it when `this ± amount = balance`). */
  readonly fromBalance: string
  /** The balance right before its last end (a message with this balance fits right before it). */
  readonly beforeKey: string
  readonly between: string
}

export interface ChainChanges {
  /** New entries: placed ones with their position, copies with `duplicateOf` and no position. */
  readonly inserted: ReadonlyArray<Entry & { readonly pos: string | null }>
  /** Placed messages given another position: a run moved behind the message that links it (ties in printed time). */
  readonly moved: ReadonlyArray<{ readonly smsId: number; readonly pos: string }>
  readonly closed: ReadonlyArray<{ readonly id: number; readonly bySmsId: number }>
  /** Open gaps whose ends or amount changed (a message placed inside them). */
  readonly changed: ReadonlyArray<GapWrite & { readonly id: number }>
  /** Gaps opened; `since` is now, or that of the gap it was split from (`splitFrom`). */
  readonly opened: ReadonlyArray<GapWrite & { readonly since: number; readonly splitFrom: number | undefined }>
  /** The chain's end after placement. */
  readonly end: { readonly lastBalance: Placed | undefined; readonly endPos: string | undefined; readonly tailBetween: string }
}

const balanceOf = (n: Node) => dec(n.entry.balance!)
const unexplainedOf = (g: GapState) => BigDecimal.subtract(BigDecimal.subtract(BigDecimal.subtract(balanceOf(g.before), signedOf(g.before.entry)), g.between), balanceOf(g.after))
const writeOf = (g: GapState): GapWrite => ({
  afterSmsId: g.after.entry.smsId,
  beforeSmsId: g.before.entry.smsId,
  unexplained: decText(unexplainedOf(g)),
  fromBalance: decText(balanceOf(g.after)),
  beforeKey: decText(BigDecimal.subtract(balanceOf(g.before), signedOf(g.before.entry))),
  between: decText(g.between)
})
const placedOf = (n: Node): Placed => ({ ...n.entry, pos: decText(n.pos) })
const nodeOf = (p: Placed): Node => ({ entry: { ...p }, pos: dec(p.pos) })
const repeatKey = (e: Entry) => `${e.direction}:${e.amount.includes(".") ? e.amount.replace(/\.?0+$/, "") : e.amount}:${e.balance === null ? "-" : key(dec(e.balance))}`

/** One account's chain in memory: `add` places facts one by one, `changes` says what to write. */
export class Chain {
  private readonly tail: Array<Node>
  private readonly complete: boolean
  private lastBalance: Node | undefined
  private endPos: Dec | undefined
  private tailBetween: Dec
  private readonly known = new Set<number>()
  private readonly repeats = new Map<string, Array<Entry>>()
  private readonly byFrom = new Map<string, Set<GapState>>()
  private readonly byBeforeKey = new Map<string, Set<GapState>>()
  private readonly byUnexplained = new Map<string, Set<GapState>>()
  private readonly byAfter = new Map<Node, GapState>()
  private readonly touched = new Set<GapState>()
  private readonly inserted: Array<{ readonly entry: Entry; readonly node: Node | undefined }> = []
  /** Placed messages given another position (a run moved behind the message that links it). */
  private readonly moved = new Set<Node>()
  private readonly now: number

  constructor(view: ChainView, now: number) {
    this.now = now
    const nodes = new Map<number, Node>()
    const node = (p: Placed) => {
      const found = nodes.get(p.smsId)
      if (found !== undefined) return found
      const made = nodeOf(p)
      nodes.set(p.smsId, made)
      return made
    }
    this.tail = view.tail.map(node)
    this.complete = view.complete
    this.lastBalance = view.lastBalance === undefined ? undefined : node(view.lastBalance)
    this.endPos = view.endPos === undefined ? undefined : dec(view.endPos)
    this.tailBetween = dec(view.tailBetween)
    for (const e of view.candidates) this.remember(e)
    for (const p of view.tail) this.remember(p)
    for (const g of view.gaps) {
      this.index({
        id: g.id,
        after: node(g.after),
        before: node(g.before),
        between: dec(g.between),
        afterNext: dec(g.afterNext),
        beforePrev: dec(g.beforePrev),
        since: g.since,
        splitFrom: undefined,
        closedBy: undefined,
        changed: false
      })
    }
  }

  private remember(e: Entry) {
    this.known.add(e.smsId)
    if (e.duplicateOf !== null) return
    const k = repeatKey(e)
    const list = this.repeats.get(k)
    if (list === undefined) this.repeats.set(k, [e])
    else list.push(e)
  }

  private static put(map: Map<string, Set<GapState>>, k: string, g: GapState) {
    const set = map.get(k)
    if (set === undefined) map.set(k, new Set([g]))
    else set.add(g)
  }

  private index(g: GapState) {
    const w = writeOf(g)
    Chain.put(this.byFrom, w.fromBalance, g)
    Chain.put(this.byBeforeKey, w.beforeKey, g)
    Chain.put(this.byUnexplained, w.unexplained, g)
    this.byAfter.set(g.after, g)
  }

  private unindex(g: GapState) {
    const w = writeOf(g)
    this.byFrom.get(w.fromBalance)?.delete(g)
    this.byBeforeKey.get(w.beforeKey)?.delete(g)
    this.byUnexplained.get(w.unexplained)?.delete(g)
    if (this.byAfter.get(g.after) === g) this.byAfter.delete(g.after)
  }

  /** Changes a gap (re-indexed); closes it when nothing is left unexplained. */
  private update(g: GapState, by: number, change: (g: GapState) => void) {
    this.unindex(g)
    change(g)
    g.changed = true
    this.touched.add(g)
    if (BigDecimal.isZero(unexplainedOf(g))) g.closedBy = by
    else this.index(g)
  }

  private openGap(after: Node, before: Node, between: Dec, afterNext: Dec, beforePrev: Dec, from: GapState | undefined) {
    const g: GapState = {
      id: undefined,
      after,
      before,
      between,
      afterNext,
      beforePrev,
      since: from?.since ?? this.now,
      splitFrom: from?.id ?? from?.splitFrom,
      closedBy: undefined,
      changed: true
    }
    if (BigDecimal.isZero(unexplainedOf(g))) return
    this.touched.add(g)
    this.index(g)
  }

  /** Adds a node to the tail when it lies within it. */
  private toTail(n: Node) {
    if (!this.complete && this.tail.length > 0 && less(n.pos, this.tail[0]!.pos)) return
    let i = this.tail.length
    while (i > 0 && less(n.pos, this.tail[i - 1]!.pos)) i--
    this.tail.splice(i, 0, n)
  }

  private place(e: Entry, pos: Dec): Node {
    const n: Node = { entry: e, pos }
    this.inserted.push({ entry: e, node: n })
    this.remember(e)
    this.toTail(n)
    return n
  }

  private append(e: Entry): Node {
    const pos = this.endPos === undefined ? ZERO : BigDecimal.sum(this.endPos, ONE)
    this.endPos = pos
    return this.place(e, pos)
  }

  /** The gaps among `set` a message of time `t` may belong to, nearest in time first. */
  private nearest(set: Set<GapState> | undefined, e: Entry): Array<GapState> {
    if (set === undefined || set.size === 0) return []
    const t = timeOf(e)
    const distance = (g: GapState) => {
      const lo = timeOf(g.after.entry)
      const hi = timeOf(g.before.entry)
      return t < lo ? lo - t : t > hi ? t - hi : 0
    }
    const printed = e.txnAt !== null
    return [...set]
      .filter((g) => !printed || g.after.entry.txnAt === null || g.before.entry.txnAt === null || distance(g) <= FIT_SLACK_MS)
      .sort((a, b) => distance(a) - distance(b) || a.since - b.since)
  }

  /** The chain's first message when the tail holds the whole chain and `balance` leads to it (`balance ± first's amount = first`). */
  private firstFit(entry: Entry, balance: Dec): Node | undefined {
    const first = this.tail[0]
    if (!this.complete || first === undefined || first.entry.balance === null || timeOf(first.entry) < timeOf(entry)) return undefined
    return same(BigDecimal.sum(balance, signedOf(first.entry)), balanceOf(first)) ? first : undefined
  }

  /** Places one fact (in the order the caller gives: printed time, then received). */
  add(e: Entry): void {
    if (this.known.has(e.smsId)) return
    const original = (this.repeats.get(repeatKey(e)) ?? [])
      .filter((c) => c.smsId !== e.smsId && sameTransaction(c, e))
      .sort((a, b) => Math.abs(a.receivedAt - e.receivedAt) - Math.abs(b.receivedAt - e.receivedAt))[0]
    if (original !== undefined) {
      this.known.add(e.smsId)
      this.inserted.push({ entry: { ...e, duplicateOf: original.smsId }, node: undefined })
      return
    }
    const entry = { ...e, duplicateOf: null }
    const s = signedOf(entry)
    if (entry.balance === null) return this.addWithoutBalance(entry, s)
    const balance = dec(entry.balance)
    const end = this.lastBalance
    if (end === undefined) {
      this.lastBalance = this.append(entry)
      this.tailBetween = ZERO
      return
    }
    const chainsEnd = same(BigDecimal.sum(BigDecimal.sum(balanceOf(end), this.tailBetween), s), balance)
    const late = timeOf(entry) < timeOf(end.entry)
    const afterFit = this.nearest(this.byFrom.get(key(BigDecimal.subtract(balance, s))), entry)
    const beforeFit = this.nearest(this.byBeforeKey.get(key(balance)), entry)
    // A gap it closes exactly comes first.
    const closing = afterFit.find((g) => same(unexplainedOf(g), s))
    if (closing !== undefined) return this.fillAfter(closing, entry)
    // What it follows (the chain's end, or a gap's first end) and what follows it (a gap's last
    // end, or the chain's first): both known, the run that follows is moved behind it.
    const follows: GapState | "end" | undefined = chainsEnd && !late ? "end" : afterFit[0] ?? (chainsEnd ? "end" : undefined)
    const nextGap = beforeFit.find((g) => timeOf(g.before.entry) >= timeOf(entry) && (follows === "end" || g !== follows))
    const leads = nextGap ?? this.firstFit(entry, balance)
    if (follows !== undefined && leads !== undefined && this.link(entry, follows, leads)) return
    if (follows === "end") return this.toEnd(entry, end)
    if (follows !== undefined) return this.fillAfter(follows, entry)
    if (beforeFit[0] !== undefined) return this.fillBefore(beforeFit[0], entry)
    const first = this.firstFit(entry, balance)
    if (first !== undefined) {
      this.place(entry, BigDecimal.subtract(first.pos, ONE))
      return
    }
    if (!late) return this.toEnd(entry, end)
    this.byTime(entry)
  }

  private fillAfter(gap: GapState, entry: Entry) {
    const n = this.place(entry, mid(gap.after.pos, gap.afterNext))
    this.update(gap, entry.smsId, (g) => {
      if (same(g.beforePrev, g.after.pos)) g.beforePrev = n.pos
      g.after = n
    })
  }

  private fillBefore(gap: GapState, entry: Entry) {
    const n = this.place(entry, mid(gap.beforePrev, gap.before.pos))
    this.update(gap, entry.smsId, (g) => {
      if (same(g.afterNext, g.before.pos)) g.afterNext = n.pos
      g.before = n
    })
  }

  /** At the chain's end (rule 4): a gap from the old end when the balance does not follow. */
  private toEnd(entry: Entry, end: Node) {
    const between = this.tailBetween
    const endPos = this.endPos!
    const n = this.append(entry)
    const afterNext = this.tail.find((t) => less(end.pos, t.pos))?.pos ?? n.pos
    this.openGap(end, n, between, afterNext, endPos, undefined)
    this.lastBalance = n
    this.tailBetween = ZERO
  }

  private addWithoutBalance(entry: Entry, s: Dec) {
    const gap = this.nearest(this.byUnexplained.get(key(s)), entry)[0]
    if (gap !== undefined) {
      const n = this.place(entry, mid(gap.beforePrev, gap.before.pos))
      this.update(gap, entry.smsId, (g) => {
        if (same(g.afterNext, g.before.pos)) g.afterNext = n.pos
        g.beforePrev = n.pos
        g.between = BigDecimal.sum(g.between, s)
      })
      return
    }
    if (this.lastBalance === undefined || timeOf(entry) >= timeOf(this.lastBalance.entry)) {
      this.append(entry)
      this.tailBetween = BigDecimal.sum(this.tailBetween, s)
      return
    }
    this.byTime(entry)
  }

  /** The balanced messages before and after tail index `i` (undefined past what is loaded). */
  private balancedAround(i: number): [Node | undefined, Node | undefined] {
    let p = i - 1
    while (p >= 0 && this.tail[p]!.entry.balance === null) p--
    let q = i + 1
    while (q < this.tail.length && this.tail[q]!.entry.balance === null) q++
    return [p >= 0 ? this.tail[p] : undefined, q < this.tail.length ? this.tail[q] : undefined]
  }

  /**
   * The steps between these pairs of balanced messages (each pair's messages in the tail, only
   * balance-less ones between them) computed again: `old` gaps' rows are kept for the steps that
   * stay open (their since, announcement and explanation), the others close (by `by`); a further
   * open step is a gap split from them (their since), or new.
   */
  private resetSteps(pairs: ReadonlyArray<readonly [Node | undefined, Node | undefined]>, old: ReadonlyArray<GapState>, by: number) {
    const spare = [...new Set(old)].sort((a, b) => a.since - b.since)
    for (const g of spare) this.unindex(g)
    const oldest = spare[0]
    for (const [a, b] of pairs) {
      if (a === undefined || b === undefined) continue
      const i = this.tail.indexOf(a)
      const j = this.tail.indexOf(b)
      let between = ZERO
      for (let k = i + 1; k < j; k++) between = BigDecimal.sum(between, signedOf(this.tail[k]!.entry))
      const step = { after: a, before: b, between, afterNext: this.tail[i + 1]!.pos, beforePrev: this.tail[j - 1]!.pos }
      const probe: GapState = { ...step, id: undefined, since: this.now, splitFrom: undefined, closedBy: undefined, changed: true }
      if (BigDecimal.isZero(unexplainedOf(probe))) continue
      const reuse = spare.shift()
      if (reuse === undefined) this.openGap(a, b, between, step.afterNext, step.beforePrev, oldest)
      else {
        Object.assign(reuse, step, { changed: true })
        this.touched.add(reuse)
        this.index(reuse)
      }
    }
    for (const g of spare) {
      g.closedBy = by
      this.touched.add(g)
    }
  }

  /** The chain's end read again from the tail (its last messages are the chain's last). */
  private refreshEnd() {
    const last = this.tail[this.tail.length - 1]
    if (last === undefined) return
    this.endPos = last.pos
    let i = this.tail.length - 1
    let between = ZERO
    while (i >= 0 && this.tail[i]!.entry.balance === null) between = BigDecimal.sum(between, signedOf(this.tail[i--]!.entry))
    if (i < 0) return
    this.lastBalance = this.tail[i]
    this.tailBetween = between
  }

  /**
   * Ties in printed time ordered by the chain: the message follows `follows` (the chain's end or
   * a gap's first end) and leads to `leads` (a gap's last end, or the chain's first), which an
   * earlier arrival placed elsewhere: the run starting there (up to its next gap) moves behind
   * the message. Only within the loaded tail, and for a run of balanced messages; false: not done.
   */
  private link(entry: Entry, follows: GapState | "end", leads: GapState | Node): boolean {
    const start = "entry" in leads ? leads : leads.before
    const before = "entry" in leads ? undefined : leads
    const from = this.tail.indexOf(start)
    if (from < 0 || (before === undefined && from !== 0)) return false
    let to = from
    while (!this.byAfter.has(this.tail[to]!) && to + 1 < this.tail.length) to++
    const run = this.tail.slice(from, to + 1)
    if (run.some((n) => n.entry.balance === null)) return false
    const x = follows === "end" ? this.tail[this.tail.length - 1]! : follows.after
    const xi = this.tail.indexOf(x)
    if (xi < 0 || (xi >= from && xi <= to)) return false
    const after = this.byAfter.get(this.tail[to]!)
    const [a2] = this.balancedAround(from)
    const d = after?.before
    const old = [follows === "end" ? undefined : follows, before, after].filter((g): g is GapState => g !== undefined)
    for (const g of old) this.unindex(g)
    this.tail.splice(from, run.length)
    const at = this.tail.indexOf(x)
    const next = this.tail[at + 1]?.pos
    let pos = next === undefined ? BigDecimal.sum(x.pos, ONE) : mid(x.pos, next)
    const n = this.place(entry, pos)
    for (const m of run) {
      pos = next === undefined ? BigDecimal.sum(pos, ONE) : mid(pos, next)
      m.pos = pos
      this.moved.add(m)
      this.toTail(m)
    }
    const [beforeN] = this.balancedAround(this.tail.indexOf(n))
    const [, afterRun] = this.balancedAround(this.tail.indexOf(run[run.length - 1]!))
    this.resetSteps([[a2, d], [beforeN, n], [n, start], [run[run.length - 1], afterRun]], old, entry.smsId)
    this.refreshEnd()
    return true
  }

  /** Rule 5: after the last message of the tail whose time is not after its own; the steps around it computed again. */
  private byTime(entry: Entry) {
    if (this.tail.length === 0) return this.toEnd(entry, this.lastBalance!)
    const t = timeOf(entry)
    let i = this.tail.length - 1
    while (i >= 0 && timeOf(this.tail[i]!.entry) > t) i--
    // Older than every message loaded: at the chain's start when the tail is all of it, else after the tail's first.
    if (i < 0 && !this.complete) i = 0
    const prev = i >= 0 ? this.tail[i]! : undefined
    const next = this.tail[i + 1]
    const pos = prev === undefined ? BigDecimal.subtract(next!.pos, ONE) : next === undefined ? BigDecimal.sum(prev.pos, ONE) : mid(prev.pos, next.pos)
    const n = this.place(entry, pos)
    const [p, q] = this.balancedAround(this.tail.indexOf(n))
    const old = p === undefined ? undefined : this.byAfter.get(p)
    this.resetSteps(entry.balance === null ? [[p, q]] : [[p, n], [n, q]], old === undefined ? [] : [old], entry.smsId)
    this.refreshEnd()
  }

  changes(): ChainChanges {
    const closed: Array<{ id: number; bySmsId: number }> = []
    const changed: Array<GapWrite & { id: number }> = []
    const opened: Array<GapWrite & { since: number; splitFrom: number | undefined }> = []
    for (const g of this.touched) {
      if (g.id === undefined) {
        if (g.closedBy === undefined) opened.push({ ...writeOf(g), since: g.since, splitFrom: g.splitFrom })
      } else if (g.closedBy !== undefined) closed.push({ id: g.id, bySmsId: g.closedBy })
      else if (g.changed) changed.push({ ...writeOf(g), id: g.id })
    }
    const fresh = new Set(this.inserted.flatMap((i) => i.node === undefined ? [] : [i.node]))
    return {
      inserted: this.inserted.map((i) => ({ ...i.entry, pos: i.node === undefined ? null : decText(i.node.pos) })),
      moved: [...this.moved].filter((n) => !fresh.has(n)).map((n) => ({ smsId: n.entry.smsId, pos: decText(n.pos) })),
      closed,
      changed,
      opened,
      end: {
        lastBalance: this.lastBalance === undefined ? undefined : placedOf(this.lastBalance),
        endPos: this.endPos === undefined ? undefined : decText(this.endPos),
        tailBetween: decText(this.tailBetween)
      }
    }
  }
}

/** The order facts are placed in: printed time, then received, then id. */
export const placingOrder = (a: Entry, b: Entry): number => timeOf(a) - timeOf(b) || a.receivedAt - b.receivedAt || a.smsId - b.smsId

/** Places facts in a chain loaded as `view`. */
export const placeInChain = (view: ChainView, incoming: ReadonlyArray<Entry>, now: number): ChainChanges => {
  const chain = new Chain(view, now)
  for (const e of [...incoming].sort(placingOrder)) chain.add(e)
  return chain.changes()
}
