// The templates a message is tried with (DESIGN section 6): each row with its rule compiled, in
// the order they are tried for one sender. Pure.
import { normalizePhone } from "../domain/Phone.ts"
import type { RuleSource } from "../domain/Records.ts"
import type { CompiledRule } from "./TemplateRule.ts"

/** A template row with its rule compiled (or why it does not compile). */
export interface LoadedTemplate {
  readonly id: number
  readonly bank: string
  readonly sender: string | null
  readonly ruleSource: RuleSource
  readonly rule: CompiledRule | { readonly broken: string }
}

/** The templates in the order they are tried for one sender. */
export interface TemplateSet {
  readonly forSender: (sender: string) => ReadonlyArray<LoadedTemplate>
}

const senderKey = (sender: string): string => normalizePhone(sender) ?? sender.trim()

/**
 * Orders templates once: within the templates of one sender and within the rest, operator ones
 * (manual, ai) before the built-ins, older before newer. A template whose rule does not compile
 * stays in the set (the outcome names it) but is never tried.
 */
export const templateSet = (templates: ReadonlyArray<LoadedTemplate>): TemplateSet => {
  const rank = (t: LoadedTemplate) => (t.ruleSource === "builtin" ? 1 : 0)
  const sorted = [...templates].sort((a, b) => rank(a) - rank(b) || a.id - b.id)
  const bySender = new Map<string, Array<LoadedTemplate>>()
  for (const t of sorted) {
    if (t.sender === null || t.sender.trim() === "") continue
    const key = senderKey(t.sender)
    bySender.set(key, [...(bySender.get(key) ?? []), t])
  }
  const cache = new Map<string, ReadonlyArray<LoadedTemplate>>()
  return {
    forSender: (sender) => {
      const key = senderKey(sender)
      const cached = cache.get(key)
      if (cached !== undefined) return cached
      const first = bySender.get(key) ?? []
      const ordered = first.length === 0 ? sorted : [...first, ...sorted.filter((t) => !first.includes(t))]
      if (cache.size < 10_000) cache.set(key, ordered)
      return ordered
    }
  }
}
