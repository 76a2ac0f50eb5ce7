// SMS template rules: RE2 expressions (linear time, no backreferences or lookaround) with named
// groups `name` and `amount` (optional `time`, `balance`, `account`). Every rule written by an
// operator or a model is compiled here, never by the JS RegExp engine.
import { Predicate, Result, Schema } from "effect"
import { RE2 } from "re2-wasm"
import { parseAmount } from "./Money.ts"
import { knownNonDeposits } from "./NonDeposits.ts"

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

const attempt = (re: RE2, text: string): Attempt => {
  const match = re.exec(text)
  if (match === null) return { _tag: "Missed", reason: "it does not match" }
  const groups: Groups = match.groups ?? {}
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

// re2-wasm reports "Invalid regular expression: /<pattern>/u: <what RE2 said>"; keep what RE2 said.
const compileMessage = (rule: string, error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  const marker = message.indexOf("/u: ", "Invalid regular expression: /".length + rule.length)
  return clip(marker >= 0 ? message.slice(marker + 4) : message, 200)
}

// re2-wasm keeps its group table in a private field; read it defensively.
const groupNamesOf = (re: RE2): ReadonlyArray<string> => {
  const table: unknown = (re as unknown as { readonly namedGroups?: unknown }).namedGroups
  return Predicate.isObject(table) ? Object.keys(table) : []
}

// Inside this module a compiled rule can also say why a text was missed (feedback for the model).
interface ExplainedRule extends CompiledRule {
  readonly attempt: (text: string) => Attempt
}

const compileUncached = (rule: string): Result.Result<ExplainedRule, RuleRejected> => {
  if (rule.trim() === "") return Result.fail(new RuleRejected({ detail: "rule is empty" }))
  if (rule.length > maxRuleLength) {
    return Result.fail(new RuleRejected({ detail: `rule is longer than ${maxRuleLength.toLocaleString("en")} characters` }))
  }
  let re: RE2
  try {
    re = new RE2(rule, "u")
  } catch (error) {
    return Result.fail(new RuleRejected({ detail: `rule does not compile: ${compileMessage(rule, error)}` }))
  }
  const names = groupNamesOf(re)
  const missing = requiredGroups.filter((group) => !names.includes(group))
  if (missing.length > 0) {
    const list = missing.map((group) => `(?P<${group}>…)`).join(" and ")
    return Result.fail(new RuleRejected({ detail: `rule has no ${list} group${missing.length > 1 ? "s" : ""}` }))
  }
  return Result.succeed({
    source: rule,
    attempt: (text) => attempt(re, text),
    extract: (text) => {
      const outcome = attempt(re, text)
      return outcome._tag === "Extracted" ? outcome.extraction : undefined
    }
  })
}

// re2-wasm never frees a compiled expression (no finalizer), so the same rule text compiled again
// for every SMS would grow WASM memory without bound: compile each distinct text once.
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

const kindLabel = {
  wd: "withdrawal / outgoing money",
  other: "non-transaction (notice, OTP, advertisement or template)"
} as const

/**
 * Compiles the rule and checks that it extracts a non-empty name and an amount from `sample`.
 * With `rejectNonDeposits`, a rule that extracts a deposit from any known non-deposit message
 * (withdrawals, card approvals, OTPs, notices, …) is rejected too.
 */
export const validateRule = (
  rule: string,
  sample: string,
  options?: { readonly rejectNonDeposits?: boolean }
): Result.Result<CompiledRule, RuleRejected> =>
  Result.flatMap(compileCached(rule), ({ attempt: explain, extract, source }) => {
    const onSample = explain(sample)
    if (onSample._tag === "Missed") {
      return Result.fail(
        new RuleRejected({ detail: `rule does not extract name and amount from the sample: ${onSample.reason}` })
      )
    }
    if (options?.rejectNonDeposits === true) {
      const hit = knownNonDeposits.find((message) => extract(message.text) !== undefined)
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
