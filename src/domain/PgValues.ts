// Values PostgreSQL can hold, as Schema pieces for every API definition: text without U+0000
// (PostgreSQL text cannot store it) and times within the years 1 to 9999 (ISO-8601's four-digit
// years; PostgreSQL's own range is wider, but a time outside this one is a client's error, and
// its expanded form, `+200000-…`, is not one PostgreSQL reads). A value outside is a 400 at the
// schema instead of a failed statement. And the other way: columns as they arrive (bigint ids as
// JS bigint, timestamptz as Date) as the API speaks them, plain integers and ISO-8601 strings.
import { Result, Schema, SchemaTransformation } from "effect"

/** PostgreSQL text cannot hold U+0000. */
export const isNulFree = Schema.makeFilter((s: string) => !s.includes("\u0000") || "must not contain a NUL character (U+0000)")

/** A string PostgreSQL text can hold. */
export const PgString = Schema.String.check(isNulFree)

/** 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z in epoch milliseconds. */
export const MIN_TIME_MS = -62_135_596_800_000
export const MAX_TIME_MS = 253_402_300_800_000

/** True for epoch milliseconds inside the years 1 to 9999 (UTC). */
const isStorableTime = (ms: number): boolean => ms >= MIN_TIME_MS && ms < MAX_TIME_MS

/** An ISO-8601 time string within the years 1 to 9999 (`format: date-time` in the OpenAPI document). */
export const PgIsoTime = PgString.check(Schema.makeFilter((s: string) => {
  const ms = Date.parse(s)
  return Number.isNaN(ms) ? "expected an ISO-8601 time" : isStorableTime(ms) || "expected a time between the years 1 and 9999"
})).annotate({ format: "date-time" })

// ---------------------------------------------------------------------------------------------
// Well-formed text: PostgreSQL text and jsonb hold only valid UTF-8, so a request's text must be
// well-formed Unicode. One rule for every port: the body's bytes (and a form's percent-escapes)
// decode as UTF-8, and no JSON string or key holds a lone UTF-16 surrogate (`\ud800`). Nothing is
// replaced by U+FFFD on the way in.
// ---------------------------------------------------------------------------------------------

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/** The bytes as UTF-8 text, or undefined when they are not UTF-8. */
export const decodeUtf8 = (bytes: Uint8Array): string | undefined => Result.getOrUndefined(Result.try(() => strictUtf8.decode(bytes)))

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const isWellFormed = (s: string) => !loneSurrogate.test(s)

/** The issue message of a string or key that holds a lone surrogate. */
export const LONE_SURROGATE = "must be well-formed Unicode: a lone UTF-16 surrogate (\\ud800-\\udfff without its pair) cannot be stored"

/**
 * The path to the first string or key holding a lone UTF-16 surrogate in a parsed JSON value, or
 * undefined when there is none. A key in the path is shown with U+FFFD where it was ill-formed.
 * Iterative: a 64 KiB body can nest deeper than the call stack.
 */
export const loneSurrogatePath = (json: unknown): ReadonlyArray<string | number> | undefined => {
  interface Node {
    readonly value: unknown
    readonly key?: string | number
    readonly parent?: Node
  }
  const pathOf = (node: Node, last?: string): Array<string | number> => {
    const path: Array<string | number> = last === undefined ? [] : [last]
    for (let at: Node | undefined = node; at?.key !== undefined; at = at.parent) path.push(at.key)
    return path.reverse()
  }
  const pending: Array<Node> = [{ value: json }]
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    const value = node.value
    if (typeof value === "string") {
      if (!isWellFormed(value)) return pathOf(node)
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], key: i, parent: node })
    } else if (typeof value === "object" && value !== null) {
      const entries = Object.entries(value)
      for (const [key] of entries) {
        if (!isWellFormed(key)) return pathOf(node, key.replace(new RegExp(loneSurrogate, "g"), "\uFFFD"))
      }
      for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i]![1], key: entries[i]![0], parent: node })
    }
  }
  return undefined
}

// Only a `\uD800`-`\uDFFF` escape can put a surrogate into parsed JSON: text without one is not parsed twice.
const surrogateEscape = /\\u[dD][89a-fA-F]/

/** Where JSON text holds a lone surrogate once parsed; undefined when it does not (or is no JSON: its parser says so). */
export const loneSurrogateInJson = (text: string): ReadonlyArray<string | number> | undefined => {
  if (!surrogateEscape.test(text)) return undefined
  return Result.try(() => JSON.parse(text) as unknown).pipe(Result.map((json) => loneSurrogatePath(json)), Result.getOrUndefined)
}

/** A bigint/bigserial column as a plain integer. */
export const DbId = Schema.Union([Schema.BigInt, Schema.Number]).pipe(
  Schema.decodeTo(Schema.Int, SchemaTransformation.transform({ decode: (n) => Number(n), encode: (n) => n }))
)

/** A timestamptz column as an ISO-8601 string (UTC, with its `Z` offset). */
export const DbTime = Schema.Date.pipe(
  Schema.decodeTo(Schema.String, SchemaTransformation.transform({
    decode: (date) => date.toISOString(),
    encode: (iso) => new Date(iso)
  }))
)

export const DbTimeOrNull = Schema.NullOr(DbTime)

/** `text` as a LIKE pattern that matches it literally (`\`, `%` and `_` escaped; LIKE's default escape is `\`). */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/** A LIKE pattern: any text that contains `text`. */
export const containing = (text: string): string => `%${escapeLike(text)}%`
