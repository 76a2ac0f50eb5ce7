// What decoding a push request gives (one incoming SMS, an ignored event, or a rejection with its
// HTTP status), the options it takes, and what both forwarder formats share: the sender, optional
// text fields, headers. Pure: the clock and the registration's secret are passed in.
import { DateTime, Redacted, Result, Schema } from "effect"
import { PgString } from "./PgValues.ts"
import type { PushFormat } from "./Records.ts"

/** One SMS as a phone forwarded it. */
export interface IncomingSms {
  readonly _tag: "IncomingSms"
  readonly format: PushFormat
  /** The sender as the phone reported it (trimmed). */
  readonly sender: string
  /** `normalizePhone(sender)`: the form the whitelist and templates compare; absent for names. */
  readonly senderNormalized?: string | undefined
  /** The SMS text, forwarder wrapper removed, line breaks as `\n`. */
  readonly text: string
  readonly receivedAt: DateTime.Utc
  /** The forwarder's own id of the message (SMS Gateway `payload.messageId`). */
  readonly remoteId?: string | undefined
  /** 1-based SIM slot that received the SMS, when the forwarder tells it. */
  readonly simSlot?: number | undefined
  /** SMS Gateway's `deviceId` (its id for the phone, not ours). */
  readonly remoteDeviceId?: string | undefined
  /**
   * SmsForwarder's verified `sign` (canonical Base64), with the milliseconds its freshness ends
   * at. It covers only the timestamp, not the message: the endpoint refuses it with another message.
   */
  readonly signature?: { readonly sign: string; readonly expiresAtMillis: number } | undefined
}

/** A well-formed, authentic request that carries no SMS (another SMS Gateway event): answer 200. */
export interface Ignored {
  readonly _tag: "Ignored"
  readonly format: PushFormat
  readonly event: string
}

export const PushRejectedReason = Schema.Literals([
  "unsupported_media_type",
  "malformed",
  "signature_missing",
  "signature_invalid",
  "signature_stale"
])
export type PushRejectedReason = typeof PushRejectedReason.Type

/** A request refused before anything is stored: 400 malformed, 401 signature missing/wrong/stale, 415 media type. */
export class PushRejected extends Schema.TaggedError<PushRejected>()("PushRejected", {
  status: Schema.Literals([400, 401, 415]),
  reason: PushRejectedReason,
  message: Schema.String
}) {}

export const malformed = (message: string) => new PushRejected({ status: 400, reason: "malformed", message })
export const unauthorized = (reason: "signature_missing" | "signature_invalid" | "signature_stale", message: string) =>
  new PushRejected({ status: 401, reason, message })

/** Request headers as a plain record (node) or with `get` (fetch). */
export type HeadersInput =
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  | { readonly get: (name: string) => string | null }

export interface PushDecodeOptions {
  /** The registration's secret. Absent, `null` or empty: no signature is required or checked. */
  readonly secret?: string | Redacted.Redacted<string> | null | undefined
  /** The worker's clock (freshness windows; SmsForwarder fallback receive time). */
  readonly now: DateTime.DateTime | Date
  /** The registration's format: decode as that format instead of recognising it from the body. */
  readonly format?: PushFormat | undefined
  readonly smsForwarderMaxSkewMs?: number | undefined
  readonly smsGatewayMaxSkewMs?: number | undefined
}

/** The registration's secret, `undefined` when none is set (no signature checked). */
export const secretOf = (options: PushDecodeOptions): string | undefined => {
  const secret = options.secret
  if (secret === undefined || secret === null) return undefined
  const value = Redacted.isRedacted(secret) ? Redacted.value(secret) : secret
  return value === "" ? undefined : value
}

export const nowMillis = (options: PushDecodeOptions): number =>
  options.now instanceof Date ? options.now.getTime() : DateTime.toEpochMillis(options.now)

export const header = (headers: HeadersInput, name: string): string | undefined => {
  if (typeof headers.get === "function") return (headers.get as (name: string) => string | null)(name) ?? undefined
  const wanted = name.toLowerCase()
  for (const [key, value] of Object.entries(headers as Readonly<Record<string, unknown>>)) {
    if (key.toLowerCase() !== wanted) continue
    if (typeof value === "string") return value
    if (Array.isArray(value) && typeof value[0] === "string") return value[0]
  }
  return undefined
}

/** A text field a forwarder may leave out or send as null. */
export const OptionalText = Schema.optionalKey(Schema.NullOr(PgString))

/** The longest sender taken: numbers with their country code and alphanumeric sender ids (11 characters in GSM) fit well within it. */
export const MAX_SENDER_LENGTH = 32

// A number as phones show it (digits, spaces, `+ - ( ) . # *`), or an alphanumeric sender id (letters of any script, digits, spaces, `. - &`).
const senderCharacters = /^[\p{L}\p{M}\p{N} +\-().#*&]+$/u

/** A sender as a phone reports it, once trimmed: 1 to 32 of those characters, with a letter or a digit. */
export const Sender = PgString.check(Schema.makeFilter((s: string) => {
  const sender = s.trim()
  return (sender.length <= MAX_SENDER_LENGTH && senderCharacters.test(sender) && /[\p{L}\p{N}]/u.test(sender)) ||
    `expected a sender number or alphanumeric sender id of at most ${MAX_SENDER_LENGTH} characters (digits, letters, spaces, + - ( ) . # * &)`
}))

/** The SMS text a forwarder sent, refused when there is none: an SMS without text carries no deposit. */
export const nonEmptyText = (text: string, what: string): Result.Result<string, PushRejected> =>
  text.trim() === "" ? Result.fail(malformed(`${what} is empty`)) : Result.succeed(text)
