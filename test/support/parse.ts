// The built-in templates as the parse loop loads them (the latest migration's list, compiled), and
// the numbers of a generated deposit with the ways banks print them.
import { Result } from "effect"
import fc from "fast-check"
import { builtins0012 } from "../../src/db/BuiltinTemplates.ts"
import type { LoadedTemplate } from "../../src/parse/Templates.ts"
import { compileRule } from "../../src/parse/TemplateRule.ts"

export const builtins = builtins0012

export const builtinTemplates: ReadonlyArray<LoadedTemplate> = builtins.map((t, i) => {
  const compiled = compileRule(t.rule)
  if (Result.isFailure(compiled)) throw new Error(`built-in ${t.key} does not compile: ${compiled.failure.detail}`)
  return { id: i + 1, bank: t.bank, sender: t.sender, ruleSource: "builtin" as const, rule: compiled.success }
})

/** A generated deposit's numbers: amount, balance, whether thousands are grouped, the date and time. */
export const depositNumbers = fc.record({
  amount: fc.integer({ min: 1, max: 2_000_000_000 }),
  balance: fc.integer({ min: 0, max: 9_000_000_000 }),
  commas: fc.boolean(),
  month: fc.integer({ min: 1, max: 12 }),
  day: fc.integer({ min: 1, max: 28 }),
  hour: fc.integer({ min: 0, max: 23 }),
  minute: fc.integer({ min: 0, max: 59 })
})
export type DepositNumbers = typeof depositNumbers extends fc.Arbitrary<infer A> ? A : never

export const two = (n: number) => String(n).padStart(2, "0")
export const money = (n: number, commas: boolean) => commas ? n.toLocaleString("en") : String(n)
