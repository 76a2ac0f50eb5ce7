import { assert, describe, it } from "@effect/vitest"
import { DateTime, Redacted, Result } from "effect"
import { decodePush } from "../../src/domain/PushFormats.ts"
import { type Ignored, type IncomingSms, type PushDecodeOptions, PushRejected } from "../../src/domain/PushRequest.ts"
import { signSmsForwarder, signSmsGateway } from "../../src/domain/PushSignatures.ts"
import { smsForwarderFormBody } from "../../src/domain/SmsForwarder.ts"

const FORM = "application/x-www-form-urlencoded"
const JSON_TYPE = "application/json; charset=utf-8"

// 2026-08-10T05:49:00Z in milliseconds; the worker's clock is 30 s later.
const TS = 1786340940000
const now = DateTime.makeUnsafe(TS + 30_000)
const SECRET = "SEC-test-1234"

// Real bank SMS (test/corpus/sms-dev.tsv).
const NH_SMS = "[Web발신]\n농협 입금300,000원\n06/12 11:02 301-****-2640-41 이사랑 잔액1,305,428원"
const IBK_SMS = "[Web발신]\n2026/08/10 14:49\n입금 407,000원\n잔액 144,153,377원\n㈜시프트업\n452***38801011\n기업"

// SmsForwarder's default `content` for that SMS: sender, SMS, SIM line, SubId, receive time, device.
const NH_CONTENT = `15882100\n${NH_SMS}\nSIM1_KT_01012345678\nSubId：1\n2026-08-10 14:48:58\n카운터폰`

const ok = (result: Result.Result<IncomingSms | Ignored, PushRejected>): IncomingSms | Ignored => {
  if (Result.isFailure(result)) assert.fail(`rejected: ${result.failure.status} ${result.failure.message}`)
  return result.success
}

const sms = (result: Result.Result<IncomingSms | Ignored, PushRejected>): IncomingSms => {
  const value = ok(result)
  if (value._tag !== "IncomingSms") assert.fail(`expected an SMS, got ${value._tag}`)
  return value
}

const rejected = (
  result: Result.Result<IncomingSms | Ignored, PushRejected>,
  status: 400 | 401 | 415,
  reason: PushRejected["reason"]
): PushRejected => {
  if (Result.isSuccess(result)) assert.fail(`accepted: ${JSON.stringify(result.success)}`)
  const error = result.failure
  assert.instanceOf(error, PushRejected)
  assert.strictEqual(error._tag, "PushRejected")
  assert.strictEqual(error.status, status)
  assert.strictEqual(error.reason, reason)
  return error
}

const withSecret: PushDecodeOptions = { secret: SECRET, now }
const noSecret: PushDecodeOptions = { now }
const millis = (s: IncomingSms) => DateTime.toEpochMillis(s.receivedAt)

describe("signatures (known answers computed independently with Python's hmac)", () => {
  it("SmsForwarder: Base64(HMAC-SHA256(secret, timestamp + \\n + secret))", () => {
    assert.strictEqual(signSmsForwarder(SECRET, TS), "HD2rZ5Kv+/1sZyHZh81NMltHEb7o8YtVLbPv+LC6bo0=")
    assert.strictEqual(signSmsForwarder(SECRET, String(TS)), "HD2rZ5Kv+/1sZyHZh81NMltHEb7o8YtVLbPv+LC6bo0=")
    assert.strictEqual(signSmsForwarder("시크릿-키", TS), "bcdLwgKtOYcWJFfbyA3kdrBzRFcO2/ggTLGX66j7Nck=")
  })

  it("SMS Gateway: hex HMAC-SHA256(secret, raw body + X-Timestamp)", () => {
    const body =
      `{"deviceId":"ffffffffceb0b1db0000018e937c815b","event":"sms:received","id":"Ey6ECgOkVVFjz3CL48B8C",` +
      `"payload":{"messageId":"abc123","message":"Android is always a sweet treat!","phoneNumber":"6505551212",` +
      `"simNumber":1,"receivedAt":"2024-06-22T15:46:11.000+07:00"},"webhookId":"LreFUt-Z3sSq0JufY9uWB"}`
    const expected = "ee08ddecae0952e2320d01bc04fc4aaa1afba6e862b85a84227e76dfb5220d36"
    assert.strictEqual(signSmsGateway("gateway-key", body, 1719045971), expected)
    assert.strictEqual(signSmsGateway("gateway-key", new TextEncoder().encode(body), "1719045971"), expected)
  })
})

describe("SmsForwarder", () => {
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
  // `null`: no secret on the phone, so no `sign` in the body.
  const defaultBody = (secret: string | null = SECRET, timestamp: number | string = TS) =>
    smsForwarderFormBody({ from: "15882100", content: NH_CONTENT, timestamp, secret: secret ?? undefined })

  it("decodes the app's default form body (sign URL-encoded twice) and strips the wrapper", () => {
    const body = defaultBody()
    // The app's own URL-encoding survives the form decoding: `%2B`, `%2F`, `%3D` in the value.
    assert.include(body, "sign=HD2rZ5Kv%252B%252F1sZyHZh81NMltHEb7o8YtVLbPv%252BLC6bo0%253D")
    const result = sms(decodePush(FORM, new TextEncoder().encode(body), {}, withSecret))
    assert.strictEqual(result.format, "smsforwarder")
    assert.strictEqual(result.sender, "15882100")
    assert.strictEqual(result.senderNormalized, "15882100")
    assert.strictEqual(result.text, NH_SMS)
    assert.strictEqual(millis(result), TS)
    assert.strictEqual(result.simSlot, 1)
    assert.strictEqual(result.remoteId, undefined)
  })

  it("accepts the sign URL-encoded once, as plain Base64, and with `+` turned into a space", () => {
    const plain = signSmsForwarder(SECRET, TS)
    const base = { from: "15882100", content: NH_CONTENT, timestamp: String(TS) }
    for (
      const body of [
        form({ ...base, sign: plain }), // sign=HD2rZ5Kv%2B%2F1s…: decodes to the plain Base64
        form(base) + "&sign=" + plain, // raw `+` in the body: a form decoder reads it as a space
        form({ ...base, sign: encodeURIComponent(plain) })
      ]
    ) assert.strictEqual(sms(decodePush(FORM, body, {}, withSecret)).text, NH_SMS)
  })

  it("decodes Korean form bodies byte for byte (UTF-8 percent-encoding), with or without charset", () => {
    const body = smsForwarderFormBody({ from: "1566-2566", content: IBK_SMS, timestamp: TS, secret: SECRET })
    assert.notInclude(body, "입금")
    for (const type of [FORM, FORM + "; charset=UTF-8", "Application/X-WWW-Form-Urlencoded"]) {
      const result = sms(decodePush(type, Buffer.from(body, "utf8"), {}, withSecret))
      assert.strictEqual(result.text, IBK_SMS)
      assert.strictEqual(result.sender, "1566-2566")
      assert.strictEqual(result.senderNormalized, "15662566")
    }
  })

  it("decodes a JSON body from a custom template, preferring org_content", () => {
    const body = JSON.stringify({
      from: "15882100",
      content: NH_CONTENT,
      org_content: IBK_SMS,
      timestamp: String(TS),
      sign: encodeURIComponent(signSmsForwarder(SECRET, TS)) // [sign] is the app's URL-encoded value
    })
    const result = sms(decodePush(JSON_TYPE, body, {}, withSecret))
    assert.strictEqual(result.text, IBK_SMS)
    assert.strictEqual(result.format, "smsforwarder")
    assert.strictEqual(result.simSlot, 1)
    // A bare number for [timestamp] (template `"timestamp":[timestamp]`) is accepted too.
    const bare = `{"from":"15882100","content":${JSON.stringify(NH_CONTENT)},"timestamp":${TS},"sign":"${
      signSmsForwarder(SECRET, TS)
    }"}`
    assert.strictEqual(sms(decodePush(JSON_TYPE, bare, {}, withSecret)).text, NH_SMS)
  })

  it("accepts the secret as Redacted, and treats an empty secret as none", () => {
    assert.isTrue(Result.isSuccess(decodePush(FORM, defaultBody(), {}, { secret: Redacted.make(SECRET), now })))
    assert.isTrue(Result.isSuccess(decodePush(FORM, defaultBody(null), {}, { secret: "", now })))
  })

  it("rejects a wrong, missing or stale signature with 401", () => {
    rejected(decodePush(FORM, defaultBody("other-secret"), {}, withSecret), 401, "signature_invalid")
    rejected(decodePush(FORM, defaultBody(null), {}, withSecret), 401, "signature_missing")
    rejected(
      decodePush(FORM, form({ from: "15882100", content: NH_CONTENT, timestamp: String(TS), sign: "" }), {}, withSecret),
      401,
      "signature_missing"
    )
    rejected(
      decodePush(FORM, form({ from: "1", content: "x", sign: signSmsForwarder(SECRET, TS) }), {}, withSecret),
      401,
      "signature_missing"
    )
    // A valid signature over a different timestamp than the one sent.
    const mismatched = form({
      from: "15882100",
      content: NH_CONTENT,
      timestamp: String(TS + 1),
      sign: signSmsForwarder(SECRET, TS)
    })
    rejected(decodePush(FORM, mismatched, {}, withSecret), 401, "signature_invalid")
    rejected(
      decodePush(FORM, form({ from: "1", content: "x", timestamp: String(TS), sign: "%E0%A4%A" }), {}, withSecret),
      401,
      "signature_invalid"
    )
  })

  it("accepts timestamps up to one hour from now and rejects older or newer ones as stale", () => {
    const hour = 60 * 60 * 1000
    const at = (ts: number) => decodePush(FORM, defaultBody(SECRET, ts), {}, withSecret)
    assert.strictEqual(millis(sms(at(TS + 30_000 - hour + 1000))), TS + 30_000 - hour + 1000)
    assert.strictEqual(millis(sms(at(TS + 30_000 + hour - 1000))), TS + 30_000 + hour - 1000)
    rejected(at(TS + 30_000 - hour - 1000), 401, "signature_stale")
    rejected(at(TS + 30_000 + hour + 1000), 401, "signature_stale")
  })

  it("says that milliseconds are expected when the timestamp is in seconds", () => {
    const inSeconds = rejected(decodePush(FORM, defaultBody(SECRET, Math.floor(TS / 1000)), {}, withSecret), 401, "signature_stale")
    assert.match(inSeconds.message, /in seconds: milliseconds since 1970 are expected/)
    const old = rejected(decodePush(FORM, defaultBody(SECRET, TS - 86_400_000), {}, withSecret), 401, "signature_stale")
    assert.match(old.message, /more than an hour from now \(milliseconds since 1970 expected\)/)
  })

  it("without a secret needs no signature, ignores a wrong one, and falls back to now for time", () => {
    assert.strictEqual(sms(decodePush(FORM, defaultBody(null), {}, noSecret)).text, NH_SMS)
    assert.strictEqual(sms(decodePush(FORM, defaultBody("whatever"), {}, noSecret)).text, NH_SMS)
    const noTimestamp = sms(decodePush(FORM, form({ from: "15882100", content: NH_CONTENT }), {}, noSecret))
    assert.strictEqual(millis(noTimestamp), TS + 30_000)
    const stale = sms(decodePush(FORM, defaultBody(null, TS - 86_400_000), {}, noSecret))
    assert.strictEqual(millis(stale), TS + 30_000)
  })

  it("decodes a replayed request the same way (duplicates are the caller's job)", () => {
    const body = defaultBody()
    const first = sms(decodePush(FORM, body, {}, withSecret))
    const second = sms(decodePush(FORM, body, {}, withSecret))
    assert.deepStrictEqual({ ...second, receivedAt: millis(second) }, { ...first, receivedAt: millis(first) })
  })

  it("rejects malformed bodies with 400", () => {
    const base = { from: "15882100", content: NH_CONTENT, timestamp: String(TS) }
    const cases: ReadonlyArray<readonly [string, string | Uint8Array]> = [
      [FORM, form({ ...base, timestamp: "1786340940000ms" })],
      [FORM, form({ ...base, timestamp: "" })],
      [FORM, form({ content: NH_CONTENT, timestamp: String(TS) })],
      [FORM, form({ ...base, from: "  " })],
      [FORM, form({ from: "15882100", timestamp: String(TS) })],
      [FORM, ""],
      [FORM, new Uint8Array([0x66, 0x72, 0x6f, 0x6d, 0x3d, 0xff, 0xfe])],
      [JSON_TYPE, "{\"from\":\"15882100\",\"content\":"],
      [JSON_TYPE, JSON.stringify({ ...base, from: 15882100 })],
      [JSON_TYPE, JSON.stringify({ ...base, content: ["x"] })],
      [JSON_TYPE, JSON.stringify({ ...base, timestamp: -1 })],
      [JSON_TYPE, JSON.stringify({ ...base, timestamp: 1.5 })],
      [JSON_TYPE, JSON.stringify({ ...base, timestamp: "abc" })],
      [JSON_TYPE, "[1,2]"],
      [JSON_TYPE, "null"]
    ]
    for (const [type, body] of cases) {
      for (const options of [withSecret, noSecret]) rejected(decodePush(type, body, {}, options), 400, "malformed")
    }
  })

  it("takes the media types the forwarders send, and refuses a missing or any other Content-Type with 415", () => {
    const json = JSON.stringify({ from: "15882100", org_content: NH_SMS, timestamp: String(TS) })
    assert.strictEqual(sms(decodePush(FORM, defaultBody(), {}, withSecret)).text, NH_SMS)
    assert.strictEqual(sms(decodePush("Application/X-WWW-Form-Urlencoded; charset=UTF-8", defaultBody(), {}, withSecret)).text, NH_SMS)
    for (const type of [JSON_TYPE, "application/json", "application/vnd.forwarder+json"]) assert.strictEqual(sms(decodePush(type, json, {}, noSecret)).text, NH_SMS)
    for (const type of ["", "   ", "text/plain", "multipart/form-data; boundary=x", "garbage", "application/jsonx", "; charset=utf-8"]) {
      const error = rejected(decodePush(type, defaultBody(), {}, withSecret), 415, "unsupported_media_type")
      assert.include(error.message, "expected application/x-www-form-urlencoded or application/json")
      rejected(decodePush(type, json, {}, noSecret), 415, "unsupported_media_type")
    }
  })

  it("takes the senders phones report (numbers and alphanumeric ids), and refuses anything else as `from` with 400", () => {
    const signedWith = (from: string) => smsForwarderFormBody({ from, content: NH_CONTENT, timestamp: TS, secret: SECRET })
    for (const from of ["15882100", "1588-2100", "+82 10-1234-5678", "+1 (650) 555-1212", "#1234", "02.123.4567", "KB국민", "Toss", "AT&T", " 15882100 ", "1".repeat(32)]) {
      assert.strictEqual(sms(decodePush(FORM, signedWith(from), {}, withSecret)).sender, from.trim())
    }
    for (const from of ["1".repeat(33), "1".repeat(60_000), "", "   ", "---", "1588<script>", "1588\n2100", "a;b", "15882100\u200b", "😀"]) {
      const error = rejected(decodePush(FORM, signedWith(from), {}, withSecret), 400, "malformed")
      assert.include(error.message, "sender", from)
    }
  })

  it("refuses an SMS without text (empty or white space only) with 400", () => {
    const body = (fields: Record<string, string>) => form({ from: "15882100", timestamp: String(TS), ...fields })
    const cases: ReadonlyArray<Record<string, string>> = [{ content: "" }, { content: " \n\t " }, { org_content: "" }, { org_content: "   " }, { content: NH_CONTENT, org_content: " " }]
    for (const fields of cases) {
      const error = rejected(decodePush(FORM, body(fields), {}, noSecret), 400, "malformed")
      assert.include(error.message, "empty", JSON.stringify(fields))
    }
  })

  it("refuses text that is not well-formed Unicode with 400: lone surrogates in JSON, %-escapes that are not UTF-8", () => {
    const base = { from: "15882100", timestamp: String(TS) }
    for (const body of [
      JSON.stringify({ ...base, content: "입금 1원 \ud800" }),
      JSON.stringify({ ...base, org_content: "\udfff" }),
      JSON.stringify({ ...base, content: "입금", "\ud800": "x" }),
      JSON.stringify({ ...base, from: "15882100\ud83d", content: "입금" })
    ]) {
      const error = rejected(decodePush(JSON_TYPE, body, {}, noSecret), 400, "malformed")
      assert.include(error.message, "lone UTF-16 surrogate")
    }
    for (const bad of ["%ED%A0%80", "%FF", "%C3", "%E1%84"]) {
      rejected(decodePush(FORM, `from=15882100&timestamp=${TS}&content=${bad}`, {}, noSecret), 400, "malformed")
      rejected(decodePush(FORM, `from=15882100&timestamp=${TS}&content=x&${bad}=1`, {}, noSecret), 400, "malformed")
    }
    // What URLSearchParams reads stays as it was: `+`, a literal `%`, paired surrogates, a leading `?`.
    const read = sms(decodePush(FORM, `?from=15882100&timestamp=${TS}&org_content=%EC%9E%85%EA%B8%88+100%+%F0%9F%98%80%zz`, {}, noSecret))
    assert.strictEqual(read.text, "입금 100% 😀%zz")
    assert.strictEqual(sms(decodePush(JSON_TYPE, JSON.stringify({ ...base, content: "입금 \ud83d\ude00" }), {}, noSecret)).text, "입금 😀")
  })
})

describe("SMS Gateway for Android", () => {
  const GW_SECRET = "gw-signing-key"
  const SECONDS = Math.floor(TS / 1000) + 30 // the worker's now, in seconds
  const gwSecret: PushDecodeOptions = { secret: GW_SECRET, now }

  const received = (payload: Record<string, unknown> = {}) =>
    JSON.stringify({
      deviceId: "ffffffffceb0b1db0000018e937c815b",
      event: "sms:received",
      id: "Ey6ECgOkVVFjz3CL48B8C",
      payload: {
        messageId: "6a1f0c2e",
        message: IBK_SMS,
        phoneNumber: "+82 1566-2566",
        simNumber: 2,
        receivedAt: "2026-08-10T14:49:00.000+09:00",
        ...payload
      },
      webhookId: "LreFUt-Z3sSq0JufY9uWB"
    })

  const signed = (body: string, timestamp: number | string = SECONDS, secret = GW_SECRET) => ({
    "X-Signature": signSmsGateway(secret, body, timestamp),
    "X-Timestamp": String(timestamp)
  })

  it("decodes a signed sms:received", () => {
    const body = received()
    const result = sms(decodePush(JSON_TYPE, Buffer.from(body, "utf8"), signed(body), gwSecret))
    assert.strictEqual(result.format, "sms-gateway")
    assert.strictEqual(result.text, IBK_SMS)
    assert.strictEqual(result.sender, "+82 1566-2566")
    assert.strictEqual(result.senderNormalized, "15662566")
    assert.strictEqual(result.remoteId, "6a1f0c2e")
    assert.strictEqual(result.simSlot, 2)
    assert.strictEqual(result.remoteDeviceId, "ffffffffceb0b1db0000018e937c815b")
    assert.strictEqual(DateTime.formatIso(result.receivedAt), "2026-08-10T05:49:00.000Z")
  })

  it("reads headers case-insensitively, from records, arrays or a Headers object; hex in any case", () => {
    const body = received()
    const { "X-Signature": signature, "X-Timestamp": timestamp } = signed(body)
    const shapes = [
      { "x-signature": signature, "x-timestamp": timestamp },
      { "X-SIGNATURE": [signature.toUpperCase()], "X-Timestamp": [timestamp] },
      new Headers({ "X-Signature": signature, "X-Timestamp": timestamp })
    ]
    for (const headers of shapes) assert.strictEqual(sms(decodePush(JSON_TYPE, body, headers, gwSecret)).text, IBK_SMS)
  })

  it("accepts the newer `sender` field and a null simNumber", () => {
    const body = received({ phoneNumber: undefined, sender: "15662566", simNumber: null })
    const result = sms(decodePush(JSON_TYPE, body, signed(body), gwSecret))
    assert.strictEqual(result.sender, "15662566")
    assert.strictEqual(result.simSlot, undefined)
  })

  it("rejects a wrong, missing or stale signature with 401", () => {
    const body = received()
    rejected(decodePush(JSON_TYPE, body, signed(body, SECONDS, "other"), gwSecret), 401, "signature_invalid")
    rejected(decodePush(JSON_TYPE, body, {}, gwSecret), 401, "signature_missing")
    rejected(decodePush(JSON_TYPE, body, { "X-Signature": signed(body)["X-Signature"] }, gwSecret), 401, "signature_missing")
    rejected(decodePush(JSON_TYPE, body, { "X-Timestamp": String(SECONDS) }, gwSecret), 401, "signature_missing")
    // The body changed after signing (one digit of the amount).
    const tampered = body.replace("407,000", "907,000")
    rejected(decodePush(JSON_TYPE, tampered, signed(body), gwSecret), 401, "signature_invalid")
    // The timestamp header changed after signing.
    rejected(
      decodePush(JSON_TYPE, body, { ...signed(body), "X-Timestamp": String(SECONDS - 1) }, gwSecret),
      401,
      "signature_invalid"
    )
    rejected(decodePush(JSON_TYPE, body, signed(body, "17863409x"), gwSecret), 401, "signature_invalid")
    // Signed properly, but more than 5 minutes from the worker's clock.
    rejected(decodePush(JSON_TYPE, body, signed(body, SECONDS - 301), gwSecret), 401, "signature_stale")
    rejected(decodePush(JSON_TYPE, body, signed(body, SECONDS + 301), gwSecret), 401, "signature_stale")
    assert.isTrue(Result.isSuccess(decodePush(JSON_TYPE, body, signed(body, SECONDS - 299), gwSecret)))
    // The signature is checked before the body is looked at.
    rejected(decodePush(JSON_TYPE, "{\"event\":\"sms:received\"}", {}, gwSecret), 401, "signature_missing")
  })

  it("without a secret needs no signature and ignores a wrong one", () => {
    const body = received()
    assert.strictEqual(sms(decodePush(JSON_TYPE, body, {}, noSecret)).remoteId, "6a1f0c2e")
    assert.strictEqual(sms(decodePush(JSON_TYPE, body, signed(body, 1, "x"), noSecret)).remoteId, "6a1f0c2e")
  })

  it("acknowledges other events as Ignored (after checking their signature)", () => {
    for (const event of ["sms:sent", "sms:delivered", "sms:failed", "system:ping", "sms:data-received", "mms:received"]) {
      const body = JSON.stringify({ deviceId: "d", event, id: "e", payload: { messageId: "m" }, webhookId: "w" })
      const result = ok(decodePush(JSON_TYPE, body, signed(body), gwSecret))
      assert.deepStrictEqual(result, { _tag: "Ignored", format: "sms-gateway", event })
      rejected(decodePush(JSON_TYPE, body, signed(body, SECONDS, "other"), gwSecret), 401, "signature_invalid")
    }
  })

  it("decodes a replayed request the same way (duplicates are the caller's job)", () => {
    const body = received()
    const headers = signed(body)
    const first = sms(decodePush(JSON_TYPE, body, headers, gwSecret))
    const second = sms(decodePush(JSON_TYPE, body, headers, gwSecret))
    assert.deepStrictEqual({ ...second, receivedAt: millis(second) }, { ...first, receivedAt: millis(first) })
  })

  it("rejects malformed bodies with 400 (signature valid)", () => {
    const bodies = [
      "{\"event\":\"sms:received\",\"payload\":",
      JSON.stringify({ deviceId: "d", id: "e", payload: {} }).replace("{", "{\"event\":null,"),
      JSON.stringify({ event: "sms:received" }),
      received({ message: undefined }),
      received({ message: 42 }),
      received({ messageId: "" }),
      received({ messageId: 7 }),
      received({ phoneNumber: undefined }),
      received({ phoneNumber: "  " }),
      received({ phoneNumber: "1".repeat(33) }),
      received({ phoneNumber: undefined, sender: "<b>bank</b>" }),
      received({ message: "" }),
      received({ message: " \n " }),
      received({ message: "입금 \ud800" }),
      received({ simNumber: "1" }),
      received({ receivedAt: "yesterday" }),
      received({ receivedAt: undefined })
    ]
    for (const body of bodies) {
      rejected(decodePush(JSON_TYPE, body, signed(body), gwSecret), 400, "malformed")
      rejected(decodePush(JSON_TYPE, body, {}, noSecret), 400, "malformed")
    }
  })

  it("with the registration's format given, does not guess", () => {
    const formBody = smsForwarderFormBody({ from: "15882100", content: NH_CONTENT, timestamp: TS })
    rejected(decodePush(FORM, formBody, {}, { now, format: "sms-gateway" }), 400, "malformed")
    const body = received()
    // An SMS Gateway body read as SmsForwarder has no `from`.
    rejected(decodePush(JSON_TYPE, body, {}, { now, format: "smsforwarder" }), 400, "malformed")
    assert.strictEqual(sms(decodePush(JSON_TYPE, body, {}, { now, format: "sms-gateway" })).remoteId, "6a1f0c2e")
  })
})
