// The transaction time (issue 35: one time reader). The tokenizer's date and time tokens
// (SmsTokens.ts) are the only reading of dates and times: the reader prints them as the message's
// time text, and the time is read from that text's tokens, whichever reader (a template's `time`
// group or the built-in reader) found it. Pure.
import { type Token, tokenize } from "./SmsTokens.ts"

const seoulOffsetMs = 9 * 3600_000
const dayMs = 86_400_000

const seoulTime = (year: number, month: number, day: number, hour: number, minute: number, second: number): Date | undefined => {
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined
  const utc = Date.UTC(year, month - 1, day, hour, minute, second) - seoulOffsetMs
  const check = new Date(utc + seoulOffsetMs)
  return check.getUTCDate() === day ? new Date(utc) : undefined
}

/**
 * The transaction time printed in an SMS, in Asia/Seoul. A date without a year is put in the year
 * that makes it nearest before the time received (up to a day after it, for phone clocks ahead);
 * a time without a date on the day that does the same.
 */
export const readTransactionTime = (text: string, receivedAt: Date): Date | undefined => {
  const tokens = tokenize(text)
  const { date, time } = dateAndTime(tokens)
  const d = date === undefined ? undefined : /^(?:(\d{4}|\d{2})[./-])?(\d{1,2})[./-](\d{1,2})|^(\d{1,2})월(\d{1,2})일/u.exec(date.text)
  const t = time === undefined ? undefined : /^(\d{1,2}):(\d{2})(?::(\d{2}))?/u.exec(time.text)
  if (d === undefined && t === undefined) return undefined
  const seoul = new Date(receivedAt.getTime() + seoulOffsetMs)
  const latest = receivedAt.getTime() + dayMs
  const hour = Number(t?.[1] ?? 0)
  const minute = Number(t?.[2] ?? 0)
  const second = Number(t?.[3] ?? 0)
  if (d !== undefined && d !== null) {
    const month = Number(d[2] ?? d[4])
    const day = Number(d[3] ?? d[5])
    if (d[1] !== undefined) {
      const printed = Number(d[1])
      return seoulTime(printed < 100 ? 2000 + printed : printed, month, day, hour, minute, second)
    }
    const year = seoul.getUTCFullYear()
    for (const candidate of [year + 1, year, year - 1, year - 2, year - 3, year - 4]) {
      const at = seoulTime(candidate, month, day, hour, minute, second)
      if (at !== undefined && at.getTime() <= latest) return at
    }
    return undefined
  }
  if (t === undefined || t === null) return undefined
  const today = seoulTime(seoul.getUTCFullYear(), seoul.getUTCMonth() + 1, seoul.getUTCDate(), hour, minute, second)
  if (today === undefined) return undefined
  // Nearest before the time received, a few minutes of clock skew allowed.
  return today.getTime() <= receivedAt.getTime() + 10 * 60_000 ? today : new Date(today.getTime() - dayMs)
}

/** `2026-01-01T00:01:00+09:00`: a time in Asia/Seoul for people to read. */
export const seoulIso = (at: Date): string => `${new Date(at.getTime() + seoulOffsetMs).toISOString().slice(0, 19)}+09:00`


/** The transaction's date and time tokens: the first date, and the first time after it (at most two tokens on). */
const dateAndTime = (tokens: ReadonlyArray<Token>): { readonly date?: Token; readonly time?: Token } => {
  const date = tokens.findIndex((t) => t.kind === "date")
  const time = tokens.findIndex((t, i) => t.kind === "time" && (date < 0 || i > date))
  if (date < 0) return time < 0 ? {} : { time: tokens[time]! }
  return time < 0 || time > date + 2 ? { date: tokens[date]! } : { date: tokens[date]!, time: tokens[time]! }
}

/** The date and time as printed (`07/04 15:18`, `2026.12.11 22:05`, `08/07, 15:33`). */
export const timeTextOf = (text: string, tokens: ReadonlyArray<Token>): string | undefined => {
  const { date, time } = dateAndTime(tokens)
  if (date === undefined) return time?.text
  if (time === undefined) return date.text
  return time.line === date.line ? text.slice(date.start, time.end) : `${date.text} ${time.text}`
}
