// The built-in templates as the parse loop loads them (the latest migration's list, compiled).
import { Result } from "effect"
import { builtins0012 } from "../../src/db/migrations/0012_reader.ts"
import type { LoadedTemplate } from "../../src/domain/SmsParse.ts"
import { compileRule } from "../../src/domain/TemplateRule.ts"

export const builtins = builtins0012

export const builtinTemplates: ReadonlyArray<LoadedTemplate> = builtins.map((t, i) => {
  const compiled = compileRule(t.rule)
  if (Result.isFailure(compiled)) throw new Error(`built-in ${t.key} does not compile: ${compiled.failure.detail}`)
  return { id: i + 1, bank: t.bank, sender: t.sender, ruleSource: "builtin" as const, rule: compiled.success }
})
