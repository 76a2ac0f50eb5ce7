// SmsForwarder's webhook (PUSH_PROTOCOL.md): a form (its default) or a JSON template → one SMS,
// the signature checked when the registration has a secret; and the form it sends, for tests.
import { DateTime, Result, Schema } from "effect"
import { normalizePhone } from "./Phone.ts"
import { isFresh, SMS_FORWARDER_MAX_SKEW_MS, signSmsForwarder, verifySmsForwarder } from "./PushSignatures.ts"
import { type IncomingSms, malformed, nonEmptyText, nowMillis, OptionalText, type PushDecodeOptions, type PushRejected, secretOf, Sender } from "./PushRequest.ts"
import { normalizeLineBreaks, parseForwarderContent } from "./SmsText.ts"

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
  const fresh = isFresh(timestamp, now, maxSkew)

  const secret = secretOf(options)
  let signature: IncomingSms["signature"]
  if (secret !== undefined) {
    const verified = verifySmsForwarder(body.sign ?? "", timestamp, secret, now, maxSkew)
    if (Result.isFailure(verified)) return Result.fail(verified.failure)
    signature = verified.success
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
 * The timestamps of one phone's SmsForwarder pushes (the demo's phone, the tests'): each strictly
 * after the last one given, `at` or later. Its signature covers only the timestamp, so the worker
 * takes a second message under a timestamp already seen for a replay (PUSH_PROTOCOL): two messages
 * of one phone in the same millisecond leave with different ones, as the app's own do (it sends
 * one at a time, each stamped with its own now). A resend of one message keeps the timestamp it
 * was first sent with (its body is sent again as it was).
 */
export const forwarderClock = (): ((at: number) => number) => {
  let last = Number.NEGATIVE_INFINITY
  return (at) => (last = Math.max(at, last + 1))
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
