// A template rule drafted from one SMS a person read by eye (the console's "learn from the
// person"): the payer name and amount they marked become the rule's `name` and `amount` groups,
// the rest of the message its layout, with what varies from one message to the next (digits:
// dates, times, balances, account numbers; masks; white space) generalised. Pure: the rule is
// validated like any operator's (RE2, extracts from the sample, the never-a-deposit guard).
import { Result } from "effect"
import { parseAmount } from "../domain/Money.ts"
import { normalizeSmsText } from "../domain/SmsText.ts"
import { type CompiledRule, validateRule } from "./TemplateRule.ts"

// Amounts as banks print them, with or without thousands separators.
const amountToken = /\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?/g

/** One piece of literal layout as a rule: digits, masks and white space generalised, everything else literal. */
const layout = (text: string): string =>
  text.replace(/\s+|\d[\d,.]*|\*+|[\\^$.|?+()[\]{}]/g, (piece) =>
    /^\s/.test(piece) ? "\\s*" : /^\d/.test(piece) ? "\\d[\\d,.]*" : piece.startsWith("*") ? "\\*+" : `\\${piece}`)

interface Span {
  readonly start: number
  readonly end: number
  readonly group: "name" | "amount"
}

/**
 * The rule for `body` where `payerName` and `amount` (a decimal string) are what a person read:
 * the rule's source, or why none can be made from this message (the name or the amount is not
 * written in it as such).
 */
export const draftRule = (body: string, payerName: string, amount: string): Result.Result<string, string> => {
  const text = normalizeSmsText(body)
  const name = payerName.trim()
  const nameAt = text.indexOf(name)
  if (name === "" || nameAt < 0) return Result.fail(`the payer name "${name}" is not written in the message as it is`)
  const nameSpan: Span = { start: nameAt, end: nameAt + name.length, group: "name" }
  const amountSpan = [...text.matchAll(amountToken)]
    .map((m): Span => ({ start: m.index, end: m.index + m[0].length, group: "amount" }))
    .find((s) => parseAmount(text.slice(s.start, s.end)) === amount && (s.end <= nameSpan.start || s.start >= nameSpan.end))
  if (amountSpan === undefined) return Result.fail(`the amount ${amount} is not written in the message`)
  const [first, second] = nameSpan.start < amountSpan.start ? [nameSpan, amountSpan] : [amountSpan, nameSpan]
  const trailing = text.slice(second.end)
  const group = (span: Span, last: boolean) =>
    span.group === "amount"
      ? "(?P<amount>\\d[\\d,]*(?:\\.\\d{1,2})?)"
      // A name ends where the layout after it begins; last in the message, at the end of its line.
      : last ? "(?P<name>[^\\n]+)" : "(?P<name>[^\\n]+?)"
  return Result.succeed([
    layout(text.slice(0, first.start)),
    group(first, false),
    layout(text.slice(first.end, second.start)),
    group(second, trailing.trim() === ""),
    layout(trailing)
  ].join(""))
}

/** A drafted rule, checked: it validates like an operator's and reads back exactly what the person read. */
export const draftTemplate = (body: string, payerName: string, amount: string): Result.Result<CompiledRule & { readonly rule: string }, string> =>
  Result.flatMap(draftRule(body, payerName, amount), (rule) => {
    const checked = validateRule(rule, body, { rejectNonDeposits: true })
    if (Result.isFailure(checked)) return Result.fail(checked.failure.detail)
    const read = checked.success.extract(normalizeSmsText(body))
    return read?.name === payerName.trim() && read.amount === amount
      ? Result.succeed({ ...checked.success, rule })
      : Result.fail(`the drafted rule reads ${read === undefined ? "nothing" : `"${read.name}" ${read.amount}`} from the message, not what was marked`)
  })
