// The forwarders' signatures and replay windows (PUSH_PROTOCOL.md): SmsForwarder signs its
// timestamp, SMS Gateway the raw body and X-Timestamp, both with the registration's secret;
// compared in constant time, the timestamps held to a window around the worker's clock.
import { createHmac, timingSafeEqual } from "node:crypto"
import { Result } from "effect"
import { header, type HeadersInput, nowMillis, type PushDecodeOptions, type PushRejected, unauthorized } from "./PushRequest.ts"

/** SmsForwarder: `timestamp` must be within one hour of the worker's clock (contract). */
export const SMS_FORWARDER_MAX_SKEW_MS = 60 * 60 * 1000

/**
 * SMS Gateway: `X-Timestamp` must be within 5 minutes of the worker's clock. The app signs every
 * delivery attempt afresh (its signing plugin runs per request, timestamp = that moment), so its
 * retries never go stale and the window only has to cover clock skew and transit; 5 minutes is
 * the window the app's documentation recommends. A replay inside it is only a duplicate.
 */
export const SMS_GATEWAY_MAX_SKEW_MS = 5 * 60 * 1000

/** A SmsForwarder `timestamp` (ms since the epoch) within the window around `now`. */
export const isFresh = (timestamp: string | undefined, now: number, maxSkew: number): boolean =>
  timestamp !== undefined && Math.abs(now - Number(timestamp)) <= maxSkew

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

/** Why a SmsForwarder `timestamp` is refused; one in seconds (a hand-made request, another app) is named as such. */
const staleTimestamp = (timestamp: number, now: number, maxSkew: number): string =>
  Number.isFinite(timestamp) && Math.abs(now - timestamp * 1000) <= maxSkew
    ? "`timestamp` is in seconds: milliseconds since 1970 are expected (as SmsForwarder sends, e.g. Date.now())"
    : "`timestamp` is more than an hour from now (milliseconds since 1970 expected)"

/**
 * SmsForwarder's `sign` and `timestamp` against the secret: both required, the signature checked
 * in constant time, `timestamp` within `maxSkew` of `now`. The verified `sign` (canonical Base64),
 * with the milliseconds its freshness ends at.
 */
export const verifySmsForwarder = (
  sign: string,
  timestamp: string | undefined,
  secret: string,
  now: number,
  maxSkew: number
): Result.Result<{ readonly sign: string; readonly expiresAtMillis: number }, PushRejected> => {
  if (sign.trim() === "") return Result.fail(unauthorized("signature_missing", "`sign` is required"))
  if (timestamp === undefined) return Result.fail(unauthorized("signature_missing", "`timestamp` is required"))
  const given = canonicalBase64(sign)
  if (given === undefined || !sameSignature(given, signSmsForwarder(secret, timestamp))) {
    return Result.fail(unauthorized("signature_invalid", "`sign` does not match"))
  }
  if (!isFresh(timestamp, now, maxSkew)) return Result.fail(unauthorized("signature_stale", staleTimestamp(Number(timestamp), now, maxSkew)))
  return Result.succeed({ sign: given, expiresAtMillis: Number(timestamp) + maxSkew })
}

/** SMS Gateway's `X-Signature` and `X-Timestamp` against the secret, the timestamp within {@link SMS_GATEWAY_MAX_SKEW_MS}. */
export const verifySmsGateway = (
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
