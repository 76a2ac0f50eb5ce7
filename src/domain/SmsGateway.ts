// SMS Gateway for Android's webhook (PUSH_PROTOCOL.md): the `sms:received` event → one SMS, any
// other event ignored; with a secret the signature is checked before the body is looked at.
import { DateTime, Result, Schema } from "effect"
import { PgIsoTime, PgString } from "./PgValues.ts"
import { normalizePhone } from "./Phone.ts"
import { verifySmsGateway } from "./PushSignatures.ts"
import { type HeadersInput, type Ignored, type IncomingSms, malformed, nonEmptyText, OptionalText, type PushDecodeOptions, type PushRejected, secretOf, Sender } from "./PushRequest.ts"
import { normalizeLineBreaks } from "./SmsText.ts"

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
