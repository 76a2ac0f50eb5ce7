// What reading a text costs a compiled rule, counted instead of timed: the steps of RE2's NFA
// (a Pike VM: at most one thread per instruction, a new thread started at every position, the
// search not stopped by a match, as when a rule misses). The count depends on the rule and the
// text alone, so a rule is judged the same on a loaded machine as on an idle one.
//
// Every engine of re2js (one-pass, backtracker, lazy DFA, NFA) does at most this work, up to a
// constant; per character it is at most twice the program's size (RE2's linear bound) and in
// practice twice the threads the rule keeps alive: a bank template a few dozen,
// `(?:[^x]{1,5}){1,4}` repeated over a thousand.
import type { RE2JS } from "re2js"

// The instruction codes of re2js 2.10.0 (its Inst class; the version is pinned in package.json,
// and test/parse/TemplateRule.test.ts pins counts that change if they do).
const ALT = 1
const ALT_MATCH = 2
const CAPTURE = 3
const EMPTY_WIDTH = 4
const FAIL = 5
const MATCH = 6
const NOP = 7
const RUNE = 8
const RUNE1 = 9
const RUNE_ANY = 10
const RUNE_ANY_NOT_NL = 11

// Zero-width conditions, as re2js's Utils.EMPTY_* (`^`/`$` in multi-line mode, `\A`, `\z`, `\b`, `\B`).
const BEGIN_LINE = 1
const END_LINE = 2
const BEGIN_TEXT = 4
const END_TEXT = 8
const WORD_BOUNDARY = 16
const NO_WORD_BOUNDARY = 32

interface Inst {
  readonly op: number
  readonly out: number
  readonly arg: number
  readonly matchRune: (rune: number) => boolean
}

interface Prog {
  readonly inst: ReadonlyArray<Inst>
  readonly start: number
}

const isWordRune = (r: number): boolean => (r >= 48 && r <= 57) || (r >= 65 && r <= 90) || (r >= 97 && r <= 122) || r === 95

/** The zero-width conditions that hold between `before` and `after` (-1: the text's edge). */
const context = (before: number, after: number): number =>
  (before < 0 ? BEGIN_TEXT | BEGIN_LINE : before === 10 ? BEGIN_LINE : 0) |
  (after < 0 ? END_TEXT | END_LINE : after === 10 ? END_LINE : 0) |
  (isWordRune(before) === isWordRune(after) ? NO_WORD_BOUNDARY : WORD_BOUNDARY)

const consumes = (inst: Inst, rune: number): boolean => {
  switch (inst.op) {
    case RUNE:
    case RUNE1:
      return inst.matchRune(rune)
    case RUNE_ANY:
      return true
    case RUNE_ANY_NOT_NL:
      return rune !== 10
    default:
      return false
  }
}

/** What reading a text cost: the steps taken over the characters read. */
export interface ReadingCost {
  readonly steps: number
  /** The characters read: all of them, unless the steps went over the budget first. */
  readonly characters: number
}

/**
 * The steps RE2's NFA takes reading `text` with `re`: every instruction a thread visits, once per
 * position at most (a visit following an empty transition or trying a character). Counting stops
 * after the character at which the steps go over `budget`, so measuring costs at most that much.
 */
export const readingSteps = (re: RE2JS, text: string, budget = Number.POSITIVE_INFINITY): ReadingCost => {
  const prog = (re.re2Input as { readonly prog: Prog }).prog
  const inst = prog.inst
  const size = inst.length
  let current = new Int32Array(size)
  let next = new Int32Array(size)
  let currentLength = 0
  // The generation in which an instruction was last visited: once per position each.
  const visited = new Int32Array(size).fill(-1)
  let generation = 0
  let steps = 0
  const stack: Array<number> = []
  // Follows the empty transitions from `pc`, adding the threads that wait for a character to `list`.
  const add = (list: Int32Array, length: number, pc: number, condition: number): number => {
    let n = length
    stack.push(pc)
    while (stack.length > 0) {
      const at = stack.pop()!
      if (visited[at] === generation) continue
      visited[at] = generation
      steps++
      const i = inst[at]!
      switch (i.op) {
        case ALT:
        case ALT_MATCH:
          stack.push(i.arg, i.out)
          break
        case EMPTY_WIDTH:
          if ((i.arg & ~condition) === 0) stack.push(i.out)
          break
        case FAIL:
        case MATCH:
          break
        case RUNE:
        case RUNE1:
        case RUNE_ANY:
        case RUNE_ANY_NOT_NL:
          list[n++] = at
          break
        case CAPTURE:
        case NOP:
        default: // and look-behind bookkeeping (never enabled here): passed through
          stack.push(i.out)
      }
    }
    return n
  }
  const runes = Array.from(text, (c) => c.codePointAt(0)!)
  for (let at = 0; at <= runes.length; at++) {
    const rune = at < runes.length ? runes[at]! : -1
    currentLength = add(current, currentLength, prog.start, context(at === 0 ? -1 : runes[at - 1]!, rune))
    if (rune < 0) break
    generation++
    const condition = context(rune, at + 1 < runes.length ? runes[at + 1]! : -1)
    let nextLength = 0
    for (let k = 0; k < currentLength; k++) {
      const i = inst[current[k]!]!
      steps++
      if (consumes(i, rune)) nextLength = add(next, nextLength, i.out, condition)
    }
    const swap = current
    current = next
    next = swap
    currentLength = nextLength
    if (steps > budget) return { steps, characters: at + 1 }
  }
  return { steps, characters: runes.length }
}
