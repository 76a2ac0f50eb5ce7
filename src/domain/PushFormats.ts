// The two forwarder wire formats of PUSH_PROTOCOL.md (SmsForwarder webhook, SMS Gateway for
// Android webhook): raw request → one incoming SMS, an ignored event, or a rejection with its
// HTTP status. Pure: the clock and the registration's secret are passed in.
import { createHmac, timingSafeEqual } from "node:crypto"
import { DateTime, Redacted, Result, Schema } from "effect"
import { decodeUtf8, LONE_SURROGATE, loneSurrogatePath, PgIsoTime, PgString } from "./PgValues.ts"
import type { PushFormat } from "./Records.ts"
import { normalizePhone } from "./Phone.ts"
import { normalizeLineBreaks, parseForwarderContent } from "./SmsText.ts"

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

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

const malformed = (message: string) => new PushRejected({ status: 400, reason: "malformed", message })
const unauthorized = (reason: "signature_missing" | "signature_invalid" | "signature_stale", message: string) =>
  new PushRejected({ status: 401, reason, message })

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/** SmsForwarder: `timestamp` must be within one hour of the worker's clock (contract). */
export const SMS_FORWARDER_MAX_SKEW_MS = 60 * 60 * 1000

/**
 * SMS Gateway: `X-Timestamp` must be within 5 minutes of the worker's clock. The app signs every
 * delivery attempt afresh (its signing plugin runs per request, timestamp = that moment), so its
 * retries never go stale and the window only has to cover clock skew and transit; 5 minutes is
 * the window the app's documentation recommends. A replay inside it is only a duplicate.
 */
export const SMS_GATEWAY_MAX_SKEW_MS = 5 * 60 * 1000

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

const secretOf = (options: PushDecodeOptions): string | undefined => {
  const secret = options.secret
  if (secret === undefined || secret === null) return undefined
  const value = Redacted.isRedacted(secret) ? Redacted.value(secret) : secret
  return value === "" ? undefined : value
}

const nowMillis = (options: PushDecodeOptions): number =>
  options.now instanceof Date ? options.now.getTime() : DateTime.toEpochMillis(options.now)

const header = (headers: HeadersInput, name: string): string | undefined => {
  if (typeof headers.get === "function") return (headers.get as (name: string) => string | null)(name) ?? undefined
  const wanted = name.toLowerCase()
  for (const [key, value] of Object.entries(headers as Readonly<Record<string, unknown>>)) {
    if (key.toLowerCase() !== wanted) continue
    if (typeof value === "string") return value
    if (Array.isArray(value) && typeof value[0] === "string") return value[0]
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Signatures
// ---------------------------------------------------------------------------------------------

/**
 * SmsForwarder's `sign`: `Base64(HMAC-SHA256(key = secret, message = timestamp + "\n" + secret))`,
 * plain Base64 (the app URL-encodes it once more before putting it into the request).
 */
export const signSmsForwarder = (secret: string, timestamp: string | number): string =>
  createHmac("sha256", secret).update(`${timestamp}\n${secret}`, "utf8").digest("base64")

/** SMS Gateway's `X-Signature`: hex `HMAC-SHA256(key = secret, message = raw body + X-Timestamp)`. */
export const signSmsGateway = (secret: string, rawBody: Uint8Array | string, timestamp: string | number): string =>
  createHmac("sha256", secret)
    .update(typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody)
    .update(String(timestamp), "utf8")
    .digest("hex")

/** Constant-time equality of two ASCII signatures; different lengths are unequal (length is public). */
const sameSignature = (given: string, expected: string): boolean => {
  const a = Buffer.from(given, "utf8")
  const b = Buffer.from(expected, "utf8")
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The app URL-encodes the Base64 `sign` before the form encoder encodes the body, so after form
 * decoding it usually still reads `abc%2B%2F%3D`; a client that encodes once sends `abc+/=`, which
 * a form decoder may turn into `abc /=`. Base64 has neither `%` nor spaces, so both are undone
 * unambiguously. `undefined` for a broken percent-encoding.
 */
const canonicalBase64 = (sign: string): string | undefined => {
  let value = sign.trim()
  if (/%[0-9a-fA-F]{2}/.test(value)) {
    const decoded = safeDecodeURIComponent(value)
    if (decoded === undefined) return undefined
    value = decoded
  }
  return value.replace(/ /g, "+")
}

const safeDecodeURIComponent = (value: string): string | undefined =>
  Result.try(() => decodeURIComponent(value)).pipe(Result.getOrUndefined)

// ---------------------------------------------------------------------------------------------
// Request body
// ---------------------------------------------------------------------------------------------

// The text rule of every port (PgValues.ts): well-formed Unicode, nothing replaced by U+FFFD.
const bodyText = (rawBody: Uint8Array | string): Result.Result<string, PushRejected> => {
  if (typeof rawBody === "string") return Result.succeed(rawBody)
  const text = decodeUtf8(rawBody)
  return text === undefined ? Result.fail(malformed("body is not valid UTF-8")) : Result.succeed(text)
}

const bodyBytes = (rawBody: Uint8Array | string): Uint8Array =>
  typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody

const parseJson = (text: string): Result.Result<unknown, PushRejected> =>
  Result.try({ try: () => JSON.parse(text) as unknown, catch: () => malformed("body is not valid JSON") }).pipe(
    Result.flatMap((json) => {
      const path = loneSurrogatePath(json)
      return path === undefined ? Result.succeed(json) : Result.fail(malformed(`\`${path.join(".")}\` ${LONE_SURROGATE}`))
    })
  )

const occurrences = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0

/**
 * Form fields, the first value of each name (URLSearchParams: `+` is a space, `%xx` decoded as
 * UTF-8). URLSearchParams reads `%`-escapes that are not UTF-8 as U+FFFD: a U+FFFD the body did
 * not carry itself (as the character or `%EF%BF%BD`) is one of those, and the form is refused.
 */
const parseForm = (text: string): Result.Result<Record<string, string>, PushRejected> => {
  const fields: Record<string, string> = {}
  let replacements = 0
  for (const [key, value] of new URLSearchParams(text)) {
    replacements += occurrences(key, /\uFFFD/g) + occurrences(value, /\uFFFD/g)
    if (!(key in fields)) fields[key] = value
  }
  return replacements > occurrences(text, /\uFFFD|%EF%BF%BD/gi)
    ? Result.fail(malformed("a form field's %-escapes are not UTF-8"))
    : Result.succeed(fields)
}

type MediaKind = "form" | "json" | "unsupported"

// What the forwarders send: SmsForwarder a form (its default) or JSON (a JSON template), SMS Gateway JSON.
const mediaKind = (contentType: string): MediaKind => {
  const essence = (contentType.split(";")[0] ?? "").trim().toLowerCase()
  if (essence === "application/x-www-form-urlencoded") return "form"
  if (essence === "application/json" || essence.endsWith("+json")) return "json"
  return "unsupported"
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const looksLikeSmsGateway = (json: unknown): boolean => isRecord(json) && ("event" in json || "payload" in json)

/**
 * Decodes a push request of either forwarder. The format is the registration's when
 * `options.format` is given, else recognised: form bodies are SmsForwarder; JSON with `event` or
 * `payload` is SMS Gateway, other JSON SmsForwarder.
 *
 * Errors: 415 for a missing Content-Type or one other than a form or JSON; 400 for text that is
 * not well-formed Unicode (PgValues.ts), invalid JSON, missing or mistyped fields, a sender that
 * is no plausible sender, an empty SMS, a non-numeric `timestamp`; 401 when the registration has a secret and the signature is
 * missing, wrong or stale. Without a secret no signature is checked, and a signature that is
 * present is ignored: SMS Gateway signs every request with a key it generates itself, so a
 * registration without a secret must still accept them.
 */
export const decodePush = (
  contentType: string,
  rawBody: Uint8Array | string,
  headers: HeadersInput,
  options: PushDecodeOptions
): Result.Result<IncomingSms | Ignored, PushRejected> => {
  const kind = mediaKind(contentType)
  if (kind === "unsupported") {
    return Result.fail(
      new PushRejected({
        status: 415,
        reason: "unsupported_media_type",
        message: `Content-Type ${contentType.trim() === "" ? "is missing" : `${contentType.trim()} is not taken`}: expected application/x-www-form-urlencoded or application/json`
      })
    )
  }
  return Result.flatMap(bodyText(rawBody), (text) => {
    if (kind === "form") {
      if (options.format === "sms-gateway") return Result.fail(malformed("SMS Gateway sends JSON"))
      return Result.flatMap(parseForm(text), (fields) => decodeSmsForwarderFields(fields, options))
    }
    return Result.flatMap(parseJson(text), (json) => {
      const format = options.format ?? (looksLikeSmsGateway(json) ? "sms-gateway" : "smsforwarder")
      return format === "sms-gateway"
        ? decodeSmsGatewayJson(bodyBytes(rawBody), json, headers, options)
        : decodeSmsForwarderFields(json, options)
    })
  })
}

// ---------------------------------------------------------------------------------------------
// SmsForwarder
// ---------------------------------------------------------------------------------------------

const OptionalText = Schema.optionalKey(Schema.NullOr(PgString))

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
const nonEmptyText = (text: string, what: string): Result.Result<string, PushRejected> =>
  text.trim() === "" ? Result.fail(malformed(`${what} is empty`)) : Result.succeed(text)

// A form carries the timestamp as text; a custom JSON template may put it in bare (a number).
const Timestamp = Schema.Union([
  Schema.String.check(Schema.isPattern(/^\d{1,15}$/, { expected: "milliseconds since the epoch, as digits" })),
  Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
])

/** SmsForwarder's fields (form or JSON); every string one PostgreSQL can hold. */
export const SmsForwarderBody = Schema.Struct({
  from: Sender,
  content: OptionalText,
  org_content: OptionalText,
  timestamp: Schema.optionalKey(Schema.NullOr(Timestamp)),
  sign: OptionalText,
  // Only when the user's template sends it: `SIM1_…` / `SIM2_…`.
  card_slot: OptionalText
})

const decodeSmsForwarderBody = Schema.decodeUnknownResult(SmsForwarderBody)

const simSlotOf = (cardSlot: string | null | undefined): number | undefined => {
  const match = cardSlot == null ? null : /^\s*SIM(\d)/i.exec(cardSlot)
  return match === null ? undefined : Number(match[1])
}

/** Why a SmsForwarder `timestamp` is refused; one in seconds (a hand-made request, another app) is named as such. */
const staleTimestamp = (timestamp: number, now: number, maxSkew: number): string =>
  Number.isFinite(timestamp) && Math.abs(now - timestamp * 1000) <= maxSkew
    ? "`timestamp` is in seconds: milliseconds since 1970 are expected (as SmsForwarder sends, e.g. Date.now())"
    : "`timestamp` is more than an hour from now (milliseconds since 1970 expected)"

/**
 * SmsForwarder fields (already parsed from the form or the JSON body) → the SMS. With a secret:
 * `sign` and `timestamp` required, the signature checked in constant time, `timestamp` within
 * {@link SMS_FORWARDER_MAX_SKEW_MS}. `receivedAt` is `timestamp` (when the phone sent it) when it
 * is within that window, else the worker's `now`.
 */
export const decodeSmsForwarderFields = (
  fields: unknown,
  options: PushDecodeOptions
): Result.Result<IncomingSms, PushRejected> => {
  const decoded = decodeSmsForwarderBody(fields)
  if (Result.isFailure(decoded)) return Result.fail(malformed(`SmsForwarder body: ${decoded.failure.message}`))
  const body = decoded.success

  const sender = body.from.trim()
  const content = body.content ?? undefined
  const orgContent = body.org_content ?? undefined
  if (content === undefined && orgContent === undefined) {
    return Result.fail(malformed("SmsForwarder body: neither `content` nor `org_content`"))
  }

  const timestamp = body.timestamp == null ? undefined : String(body.timestamp)
  const now = nowMillis(options)
  const maxSkew = options.smsForwarderMaxSkewMs ?? SMS_FORWARDER_MAX_SKEW_MS
  const fresh = timestamp !== undefined && Math.abs(now - Number(timestamp)) <= maxSkew

  const secret = secretOf(options)
  let signature: IncomingSms["signature"]
  if (secret !== undefined) {
    const sign = body.sign ?? ""
    if (sign.trim() === "") return Result.fail(unauthorized("signature_missing", "`sign` is required"))
    if (timestamp === undefined) return Result.fail(unauthorized("signature_missing", "`timestamp` is required"))
    const given = canonicalBase64(sign)
    if (given === undefined || !sameSignature(given, signSmsForwarder(secret, timestamp))) {
      return Result.fail(unauthorized("signature_invalid", "`sign` does not match"))
    }
    if (!fresh) return Result.fail(unauthorized("signature_stale", staleTimestamp(Number(timestamp), now, maxSkew)))
    signature = { sign: given, expiresAtMillis: Number(timestamp) + maxSkew }
  }

  const wrapper = content === undefined ? undefined : parseForwarderContent(content, sender)
  const text = nonEmptyText(orgContent !== undefined ? normalizeLineBreaks(orgContent) : wrapper?.text ?? "", "SmsForwarder body: the SMS text")
  if (Result.isFailure(text)) return Result.fail(text.failure)
  return Result.succeed({
    _tag: "IncomingSms",
    format: "smsforwarder",
    sender,
    senderNormalized: normalizePhone(sender),
    text: text.success,
    receivedAt: DateTime.makeUnsafe(fresh ? Number(timestamp) : now),
    remoteId: undefined,
    simSlot: simSlotOf(body.card_slot) ?? wrapper?.simSlot,
    remoteDeviceId: undefined,
    signature
  })
}

/**
 * A form body as SmsForwarder's default webhook sends it (`from`, `content`, `timestamp`, and
 * `sign` when a secret is set, URL-encoded by the app and then again by the form encoder), for
 * tests and the benchmark.
 */
export const smsForwarderFormBody = (input: {
  readonly from: string
  readonly content: string
  readonly timestamp: number | string
  readonly secret?: string | undefined
  readonly orgContent?: string | undefined
}): string => {
  const form = new URLSearchParams()
  form.set("from", input.from)
  form.set("content", input.content)
  if (input.orgContent !== undefined) form.set("org_content", input.orgContent)
  form.set("timestamp", String(input.timestamp))
  if (input.secret !== undefined && input.secret !== "") {
    form.set("sign", encodeURIComponent(signSmsForwarder(input.secret, input.timestamp)))
  }
  return form.toString()
}

// ---------------------------------------------------------------------------------------------
// SMS Gateway for Android
// ---------------------------------------------------------------------------------------------

/** SMS Gateway's webhook envelope. */
export const SmsGatewayEnvelope = Schema.Struct({
  event: PgString,
  deviceId: OptionalText,
  id: OptionalText,
  webhookId: OptionalText,
  payload: Schema.optionalKey(Schema.Unknown)
})

// `phoneNumber` is the sender in every version; newer ones also send `sender` (and deprecate
// `phoneNumber`), so either is accepted.
export const SmsReceivedPayload = Schema.Struct({
  messageId: PgString.check(Schema.isMinLength(1)),
  message: PgString,
  phoneNumber: Schema.optionalKey(Schema.NullOr(Sender)),
  sender: Schema.optionalKey(Schema.NullOr(Sender)),
  simNumber: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  receivedAt: PgIsoTime
})

const decodeEnvelope = Schema.decodeUnknownResult(SmsGatewayEnvelope)
const decodeSmsReceived = Schema.decodeUnknownResult(SmsReceivedPayload)

const verifySmsGateway = (
  rawBody: Uint8Array,
  headers: HeadersInput,
  secret: string,
  options: PushDecodeOptions
): Result.Result<void, PushRejected> => {
  const signature = header(headers, "x-signature")?.trim()
  const timestamp = header(headers, "x-timestamp")?.trim()
  if (signature === undefined || signature === "") {
    return Result.fail(unauthorized("signature_missing", "X-Signature is required"))
  }
  if (timestamp === undefined || timestamp === "") {
    return Result.fail(unauthorized("signature_missing", "X-Timestamp is required"))
  }
  if (!/^\d{1,12}$/.test(timestamp)) return Result.fail(unauthorized("signature_invalid", "X-Timestamp is not Unix seconds"))
  if (!sameSignature(signature.toLowerCase(), signSmsGateway(secret, rawBody, timestamp))) {
    return Result.fail(unauthorized("signature_invalid", "X-Signature does not match"))
  }
  const maxSkew = options.smsGatewayMaxSkewMs ?? SMS_GATEWAY_MAX_SKEW_MS
  if (Math.abs(nowMillis(options) - Number(timestamp) * 1000) > maxSkew) {
    return Result.fail(unauthorized("signature_stale", "X-Timestamp is too far from now"))
  }
  return Result.void
}

/**
 * An SMS Gateway webhook (raw body for the signature, and its parsed JSON) → the SMS for
 * `sms:received`, {@link Ignored} for any other event. With a secret the signature is checked
 * before anything else in the body is looked at.
 */
export const decodeSmsGatewayJson = (
  rawBody: Uint8Array,
  json: unknown,
  headers: HeadersInput,
  options: PushDecodeOptions
): Result.Result<IncomingSms | Ignored, PushRejected> => {
  const secret = secretOf(options)
  if (secret !== undefined) {
    const verified = verifySmsGateway(rawBody, headers, secret, options)
    if (Result.isFailure(verified)) return Result.fail(verified.failure)
  }

  const envelope = decodeEnvelope(json)
  if (Result.isFailure(envelope)) return Result.fail(malformed(`SMS Gateway body: ${envelope.failure.message}`))
  const { deviceId, event, payload } = envelope.success
  if (event !== "sms:received") return Result.succeed({ _tag: "Ignored", format: "sms-gateway", event })

  const decoded = decodeSmsReceived(payload)
  if (Result.isFailure(decoded)) {
    return Result.fail(malformed(`SMS Gateway payload: ${decoded.failure.message}`))
  }
  const sms = decoded.success
  const sender = (sms.sender ?? sms.phoneNumber ?? "").trim()
  if (sender === "") return Result.fail(malformed("SMS Gateway payload: no `phoneNumber` or `sender`"))
  const text = nonEmptyText(normalizeLineBreaks(sms.message), "SMS Gateway payload: `message`")
  if (Result.isFailure(text)) return Result.fail(text.failure)
  return Result.succeed({
    _tag: "IncomingSms",
    format: "sms-gateway",
    sender,
    senderNormalized: normalizePhone(sender),
    text: text.success,
    receivedAt: DateTime.makeUnsafe(Date.parse(sms.receivedAt)),
    remoteId: sms.messageId,
    simSlot: sms.simNumber ?? undefined,
    remoteDeviceId: deviceId ?? undefined
  })
}
