// A push request of either forwarder wire format of PUSH_PROTOCOL.md (SmsForwarder webhook, SMS
// Gateway for Android webhook): its media type and body read, the format picked, and decoded by
// that format's file (SmsForwarder.ts, SmsGateway.ts; signatures in PushSignatures.ts). Pure.
import { Result } from "effect"
import { decodeUtf8, LONE_SURROGATE, loneSurrogatePath } from "./PgValues.ts"
import { type HeadersInput, type Ignored, type IncomingSms, malformed, type PushDecodeOptions, PushRejected } from "./PushRequest.ts"
import { decodeSmsForwarderFields } from "./SmsForwarder.ts"
import { decodeSmsGatewayJson } from "./SmsGateway.ts"

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
