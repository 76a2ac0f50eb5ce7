// Amounts as printed in bank SMS ("50,000원", full-width "５０，０００", "12.50") read into
// exact decimal strings. Never a JS number: amounts stay strings end to end.
import { Schema } from "effect"

/** Full-width digits, comma and full stop (U+FF10–FF19, U+FF0C, U+FF0E) to ASCII; nothing else is folded. */
const toHalfWidth = (text: string): string =>
  text.replace(/[\uFF10-\uFF19\uFF0C\uFF0E]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xFEE0))

// Integer part with correct thousands grouping or no separators at all; at most two decimals
// (a third would make "12.500" ambiguous with a European thousands separator).
const amountPattern = /^(?:(\d{1,3}(?:,\d{3})+)|(\d+))(?:\.(\d{1,2}))?$/

const maxIntegerDigits = 16

/**
 * "50,000" / "50,000원" / "５０，０００원" / "₩50,000" / "12.50" → "50000" / … / "12.50".
 * `undefined` when the text is not a non-negative amount: empty, signed, letters, a broken
 * thousands grouping, more than 2 decimals or more than 16 integer digits.
 */
export const parseAmount = (text: string): string | undefined => {
  const folded = toHalfWidth(text).trim()
  const unsigned = folded.replace(/^[₩￦]\s*/, "").replace(/\s*원$/, "")
  const match = amountPattern.exec(unsigned)
  if (match === null) return undefined
  const digits = (match[1] ?? match[2] ?? "").replaceAll(",", "").replace(/^0+(?=\d)/, "")
  if (digits.length > maxIntegerDigits) return undefined
  return match[3] === undefined ? digits : `${digits}.${match[3]}`
}

/**
 * An amount as the APIs take it (DESIGN section 4): a decimal string of whole won or with up to
 * two decimals, above zero and within numeric(18,2) (`"50000"`, `"12.50"`).
 */
export const DecimalAmount = Schema.String.check(
  Schema.isPattern(/^(?:0|[1-9]\d{0,15})(?:\.\d{1,2})?$/, { message: "expected a decimal amount such as \"50000\" or \"12.50\"" }),
  Schema.makeFilter((s: string) => !/^0(?:\.0+)?$/.test(s) || "expected an amount above zero")
)
