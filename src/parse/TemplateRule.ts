// SMS template rules: RE2 expressions (linear time, no backreferences or lookaround) with named
// groups `name` and `amount` (optional `time`, `balance`, `account`). Every rule written by an
// operator or a model is compiled here, never by the JS RegExp engine.
//
// The engine is re2js, the JavaScript port of RE2 (RE2 syntax and linear-time matching): a
// compiled rule is an ordinary object that the garbage collector frees, so rules can be compiled
// and dropped for as long as the process lives (re2-wasm, used before, never freed one and
// refused every rule once its fixed 16 MiB heap was full). Linear is not cheap: RE2 bounds a
// rule only at about 1.4 million instructions, and its work per character grows with the threads
// a rule keeps alive. So a rule is bounded by what it is, never by a clock: its length
// ({@link maxRuleLength}), its estimated program ({@link maxRuleSize}, before compiling), and at
// validation the steps RE2's machine takes per character read ({@link maxStepsPerChar}, counted
// by {@link readingSteps}). The same rule gets the same answer on any machine under any load.
import { Result, Schema } from "effect"
import { RE2JS } from "re2js"
import { readingSteps } from "./RuleCost.ts"
import { parseAmount } from "../domain/Money.ts"
import { knownNonDeposits } from "./NonDeposits.ts"
import { classifyTransaction, describeVerdict } from "./DepositGuard.ts"
import { normalizeSmsText } from "../domain/SmsText.ts"

export interface RuleExtraction {
  readonly name: string
  readonly amount: string
  readonly time?: string
  readonly balance?: string
  readonly account?: string
}

export interface CompiledRule {
  readonly source: string
  readonly extract: (text: string) => RuleExtraction | undefined
}

export class RuleRejected extends Schema.TaggedError<RuleRejected>()("RuleRejected", {
  detail: Schema.String
}) {}

export const maxRuleLength = 2_000

/**
 * The largest estimated program (instructions, repetitions expanded) a rule may compile to. A
 * bank template needs a few hundred; at this bound the slowest rule measured compiles in tens of
 * milliseconds and matches an SMS in about a millisecond (BENCHMARKS.md, "rule engine").
 */
export const maxRuleSize = 2_000

/** Texts longer than this are not given to rules (bank notifications are far shorter). */
export const maxTextLength = 2_000

/**
 * A new rule (operator's or model's) is refused when reading a text of {@link maxTextLength}
 * characters (its sample repeated; the known non-deposit messages) takes RE2's machine more than
 * this many steps a character ({@link readingSteps}). On their samples the built-in templates take
 * 9 to 34 (2 to 12 on the known messages), a plain `name 입금 amount` 13, rules drafted from the
 * corpus's deposits at most 13; `(?:[^x]{1,5}){1,4}` repeated to the size bound takes 2,859 (it
 * was timed at 140 to 160 ms a text, 400 times a plain template). At the bound a 2,000-character
 * text is a million steps: bench/rules.ts prints what steps cost in time.
 */
export const maxStepsPerChar = 500

const requiredGroups = ["name", "amount"] as const

type Groups = Readonly<Record<string, string | undefined>>

/** What one rule made of one text: the extraction, or why there is none (for feedback). */
type Attempt =
  | { readonly _tag: "Extracted"; readonly extraction: RuleExtraction }
  | { readonly _tag: "Missed"; readonly reason: string }

const clip = (text: string, max: number): string => text.length <= max ? text : `${text.slice(0, max)}…`

const nonEmpty = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === "" ? undefined : trimmed
}

const groupsOf = (re: RE2JS, names: ReadonlyArray<string>, text: string): Groups | undefined => {
  const matcher = re.matcher(text)
  if (!matcher.find()) return undefined
  const groups: Record<string, string | undefined> = {}
  for (const name of names) groups[name] = matcher.group(name) ?? undefined
  return groups
}

const attempt = (re: RE2JS, names: ReadonlyArray<string>, text: string): Attempt => {
  const groups = text.length > maxTextLength ? undefined : groupsOf(re, names, text)
  if (groups === undefined) return { _tag: "Missed", reason: text.length > maxTextLength ? "the text is too long" : "it does not match" }
  const name = nonEmpty(groups["name"])
  if (name === undefined) return { _tag: "Missed", reason: "the name group captured nothing" }
  const rawAmount = groups["amount"]
  const amount = rawAmount === undefined ? undefined : parseAmount(rawAmount)
  if (amount === undefined) {
    return {
      _tag: "Missed",
      reason: rawAmount === undefined || rawAmount === ""
        ? "the amount group captured nothing"
        : `the amount group captured ${JSON.stringify(clip(rawAmount, 40))}, which is not an amount`
    }
  }
  const time = nonEmpty(groups["time"])
  const balanceText = nonEmpty(groups["balance"])
  const balance = balanceText === undefined ? undefined : parseAmount(balanceText)
  const account = nonEmpty(groups["account"])
  return {
    _tag: "Extracted",
    extraction: {
      name,
      amount,
      ...(time === undefined ? {} : { time }),
      ...(balance === undefined ? {} : { balance }),
      ...(account === undefined ? {} : { account })
    }
  }
}

const count = (n: number): string => n.toLocaleString("en")

const compileMessage = (error: unknown): string => clip(error instanceof Error ? error.message : String(error), 200)

/**
 * An upper bound of the instructions RE2 compiles `rule` to, read from the text alone (before
 * compiling): each atom counts one, a group the sum of its parts, `x{n,m}` the size of `x` times
 * m (or n + 1 when open), other quantifiers one more. Refusing rules above a bound keeps the
 * time to compile and to match any one rule small, whatever an operator or a model writes.
 */
export const estimateRuleSize = (rule: string): number => {
  // Case folding makes a character class many times dearer to compile (every range folded).
  const classCost = /\(\?[a-zA-Z]*i/.test(rule) ? 10 : 1
  const stack: Array<{ total: number; last: number }> = [{ total: 0, last: 0 }]
  const top = () => stack[stack.length - 1]!
  const add = (size: number) => {
    const frame = top()
    frame.total += size
    frame.last = size
  }
  let i = 0
  while (i < rule.length) {
    const c = rule[i]!
    if (c === "\\") {
      const next = rule[i + 1]
      if (next === "Q") {
        const end = rule.indexOf("\\E", i + 2)
        const literal = end < 0 ? rule.length - i - 2 : end - i - 2
        add(Math.max(literal, 1))
        i = end < 0 ? rule.length : end + 2
        continue
      }
      if ((next === "p" || next === "P") && rule[i + 2] === "{") {
        const end = rule.indexOf("}", i + 3)
        i = end < 0 ? rule.length : end + 1
      } else if (next === "x" && rule[i + 2] === "{") {
        const end = rule.indexOf("}", i + 3)
        i = end < 0 ? rule.length : end + 1
      } else {
        i += next === "p" || next === "P" ? 3 : 2
      }
      add(1)
      continue
    }
    if (c === "[") {
      let j = i + 1
      if (rule[j] === "^") j++
      if (rule[j] === "]") j++
      while (j < rule.length && rule[j] !== "]") {
        if (rule[j] === "\\") j += 2
        else if (rule[j] === "[" && rule[j + 1] === ":") {
          const end = rule.indexOf(":]", j + 2)
          j = end < 0 ? j + 1 : end + 2
        } else j++
      }
      i = j + 1
      add(classCost)
      continue
    }
    if (c === "(") {
      stack.push({ total: 0, last: 0 })
      i++
      if (rule[i] === "?") {
        // (?P<name>…, (?<name>…, (?:…, (?flags:… and the flag group (?flags).
        const close = rule.slice(i).search(/[>:)]/)
        if (close >= 0 && rule[i + close] === ")") {
          stack.pop()
          i += close + 1
          continue
        }
        i += close < 0 ? rule.length : close + 1
      }
      continue
    }
    if (c === ")") {
      const frame = stack.length > 1 ? stack.pop()! : top()
      i++
      add(frame.total + 2)
      continue
    }
    if (c === "|") {
      top().last = 0
      top().total += 1
      i++
      continue
    }
    if (c === "*" || c === "+" || c === "?") {
      const frame = top()
      frame.total += 1
      i += rule[i + 1] === "?" ? 2 : 1
      continue
    }
    if (c === "{") {
      const repeat = /^\{(\d+)(,(\d*))?\}/.exec(rule.slice(i, i + 16))
      if (repeat !== null) {
        const min = Number(repeat[1])
        const max = repeat[2] === undefined ? min : repeat[3] === "" ? min + 1 : Number(repeat[3])
        const frame = top()
        frame.total += frame.last * (Math.max(min, max, 1) - 1) + 1
        frame.last = frame.last * Math.max(min, max, 1)
        i += repeat[0].length
        if (rule[i] === "?") i++
        continue
      }
    }
    i += c.codePointAt(0)! > 0xFFFF ? 2 : 1
    add(1)
  }
  while (stack.length > 1) {
    const frame = stack.pop()!
    add(frame.total)
  }
  return top().total
}

// Inside this module a compiled rule can also say why a text was missed (feedback for the model).
interface ExplainedRule extends CompiledRule {
  readonly attempt: (text: string) => Attempt
  readonly re: RE2JS
}

const compileUncached = (rule: string): Result.Result<ExplainedRule, RuleRejected> => {
  if (rule.trim() === "") return Result.fail(new RuleRejected({ detail: "rule is empty" }))
  if (rule.length > maxRuleLength) {
    return Result.fail(new RuleRejected({
      detail: `rule is longer than ${count(maxRuleLength)} characters: ${count(rule.length)} (${count(rule.length - maxRuleLength)} over)`
    }))
  }
  const size = estimateRuleSize(rule)
  if (size > maxRuleSize) {
    return Result.fail(new RuleRejected({
      detail: `rule is too large: it would compile to about ${count(size)} instructions, more than ${count(maxRuleSize)} (${
        count(size - maxRuleSize)
      } over; lower the repetition counts)`
    }))
  }
  let re: RE2JS
  try {
    re = RE2JS.compile(rule)
  } catch (error) {
    return Result.fail(new RuleRejected({ detail: `rule does not compile: ${compileMessage(error)}` }))
  }
  const names = Object.keys(re.namedGroups())
  const missing = requiredGroups.filter((group) => !names.includes(group))
  if (missing.length > 0) {
    const list = missing.map((group) => `(?P<${group}>…)`).join(" and ")
    return Result.fail(new RuleRejected({ detail: `rule has no ${list} group${missing.length > 1 ? "s" : ""}` }))
  }
  return Result.succeed({
    source: rule,
    re,
    attempt: (text) => attempt(re, names, text),
    extract: (text) => {
      const outcome = attempt(re, names, text)
      return outcome._tag === "Extracted" ? outcome.extraction : undefined
    }
  })
}

// A compiled rule is kept for its text, so the same rule compiled again (a template list reloaded,
// the same sample validated twice) costs nothing; the oldest go first past the limit, and the
// garbage collector frees what is dropped.
const cacheLimit = 1_000
const cache = new Map<string, Result.Result<ExplainedRule, RuleRejected>>()

const compileCached = (rule: string): Result.Result<ExplainedRule, RuleRejected> => {
  const cached = cache.get(rule)
  if (cached !== undefined) return cached
  const compiled = compileUncached(rule)
  if (cache.size >= cacheLimit) {
    const oldest = cache.keys().next()
    if (oldest.done !== true) cache.delete(oldest.value)
  }
  cache.set(rule, compiled)
  return compiled
}

/** Compiles a rule in RE2; it must have the groups `name` and `amount`. */
export const compileRule = (rule: string): Result.Result<CompiledRule, RuleRejected> =>
  Result.map(compileCached(rule), ({ extract, source }): CompiledRule => ({ source, extract }))

/** `text` repeated (a line break between) to {@link maxTextLength} characters: the longest text a rule reads. */
export const probeOf = (text: string): string =>
  `${text}\n`.repeat(Math.ceil(maxTextLength / (text.length + 1))).slice(0, maxTextLength)

// The known non-deposit messages, every bank's layouts, as one probe (made when first needed).
let othersProbe: string | undefined
const knownMessagesProbe = (): string =>
  othersProbe ??= probeOf(knownNonDeposits.map((message) => normalizeSmsText(message.text)).join("\n"))

/**
 * Why reading costs `re` too many steps (its sample's probe, then the known messages'), or
 * undefined. Counting stops past the budget: judging a rule costs at most a million steps a probe.
 */
const tooSlow = (re: RE2JS, sample: string): string | undefined => {
  for (const [what, probe] of [["its sample repeated", probeOf(sample)], ["the known non-deposit messages", knownMessagesProbe()]] as const) {
    const budget = maxStepsPerChar * [...probe].length // characters as RE2 reads them: code points
    const { characters, steps } = readingSteps(re, probe, budget)
    if (steps > budget) {
      const perChar = Math.ceil(steps / characters)
      return `rule is too slow: reading ${what}, RE2 took ${count(steps)} steps in the first ${count(characters)} characters, ${
        count(perChar)
      } a character: ${count(perChar - maxStepsPerChar)} over the limit of ${count(maxStepsPerChar)} a character (${
        (perChar / maxStepsPerChar).toFixed(1)
      } times; narrow or shorten repeated classes such as [^x]{1,5} or .{0,50})`
    }
  }
  return undefined
}

const kindLabel = {
  wd: "withdrawal / outgoing money",
  other: "non-transaction (notice, OTP, advertisement or template)"
} as const

/**
 * Compiles the rule and checks that it extracts a non-empty name and an amount from `sample`,
 * read as the parse loop reads every SMS ({@link normalizeSmsText}), and that the sample is a
 * deposit at all for the never-a-deposit guard ({@link classifyTransaction}): a template made
 * from a withdrawal, a card approval or a notice is refused; and that reading costs RE2 at most
 * {@link maxStepsPerChar} steps a character (a count, no clock: the answer is the same on any
 * machine under any load). With `rejectNonDeposits`, a rule that extracts a deposit from any
 * known non-deposit message (withdrawals, card approvals, OTPs, notices, …) is rejected too: the
 * guard keeps them out at run time, and a rule that reads them is too lax to trust on the
 * messages the guard does not know.
 */
export const validateRule = (
  rule: string,
  sample: string,
  options?: { readonly rejectNonDeposits?: boolean }
): Result.Result<CompiledRule, RuleRejected> =>
  Result.flatMap(compileCached(rule), ({ attempt: explain, extract, re, source }) => {
    const text = normalizeSmsText(sample)
    const verdict = classifyTransaction(text)
    if (verdict.kind !== "deposit") {
      return Result.fail(new RuleRejected({ detail: `the sample is not a deposit: ${describeVerdict(verdict)}` }))
    }
    const onSample = explain(text)
    if (onSample._tag === "Missed") {
      return Result.fail(
        new RuleRejected({ detail: `rule does not extract name and amount from the sample: ${onSample.reason}` })
      )
    }
    const slow = tooSlow(re, text)
    if (slow !== undefined) return Result.fail(new RuleRejected({ detail: slow }))
    if (options?.rejectNonDeposits === true) {
      const hit = knownNonDeposits.find((message) => extract(normalizeSmsText(message.text)) !== undefined)
      if (hit !== undefined) {
        return Result.fail(
          new RuleRejected({
            detail: `rule extracts a deposit from a known ${kindLabel[hit.kind]} message (${hit.bank}): ${
              JSON.stringify(clip(hit.text, 120))
            }`
          })
        )
      }
    }
    return Result.succeed({ source, extract })
  })
