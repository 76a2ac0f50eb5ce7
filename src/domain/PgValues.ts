// Values PostgreSQL can hold, as Schema pieces for every API definition: text without U+0000
// (PostgreSQL text cannot store it) and times within the years 1 to 9999 (ISO-8601's four-digit
// years; PostgreSQL's own range is wider, but a time outside this one is a client's error, and
// its expanded form, `+200000-…`, is not one PostgreSQL reads). A value outside is a 400 at the
// schema instead of a failed statement.
import { Schema } from "effect"

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
