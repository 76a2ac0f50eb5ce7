// Text helpers for SMS bodies as they arrive from the phones: the SmsForwarder default wrapper,
// the `[Web발신]` marker, the `보낸사람 : …` prefix, the normalised body used for duplicates, and
// the sender and text of a chat-bot message.
import { normalizePhone } from "./Phone.ts"

/** CRLF and lone CR to LF, so every stored body uses one kind of line break. */
export const normalizeLineBreaks = (text: string): string => text.replace(/\r\n?/g, "\n")

// `[Web발신]` as Korean carriers print it for messages sent through the web; seen in any case,
// with full-width or round brackets and stray spaces.
const webSenderMarker = /[[［(（]\s*web\s*발신\s*[\]］)）]/giu

/** Removes every `[Web발신]` marker (any case, `[]`/`()`/full-width brackets). */
export const stripWebSenderMarker = (text: string): string => text.replace(webSenderMarker, "")

// `보낸사람 : 15882100()` on its own first line (a forwarding template in use by operators: the
// sender number, then a contact name in brackets, empty when unknown).
// The line goes only when the prefix is all it holds (one token, a bracketed name): with its line
// breaks made spaces the message's first line may hold the body too (`보낸사람 : 15882100 농협 입금…`).
const senderPrefixLine = /^\s*보낸\s*사람\s*[:：][^\S\n]*[^\s(]*(?:\([^)\n]{0,40}\))?[^\S\n]*\n/u
// The same label on a single-line message: only the number-like token after it is the prefix.
const senderPrefixInline = /^\s*보낸\s*사람\s*[:：][^\S\n]*[0-9+\-#*.]*(?:\([^)\n]{0,40}\))?/u

/**
 * Removes a leading `보낸사람 : <sender>` prefix. When it is a line of its own, the whole line
 * goes; when the message is on one line, only the label and the number-like token after it, so
 * the body itself is never swallowed.
 */
export const stripSenderPrefix = (text: string): string => {
  const unified = normalizeLineBreaks(text)
  const line = senderPrefixLine.exec(unified)
  if (line !== null && line[0].length <= 80) return unified.slice(line[0].length)
  return unified.replace(senderPrefixInline, "")
}

// White space in the Unicode sense plus the invisible characters that phones and web senders
// leave behind (zero-width space/joiners, word joiner, BOM).
const whiteSpace = /[\s\u200B-\u200D\u2060\uFEFF]+/gu

/** NFC, then every white space (and zero-width character) removed: for comparing names and bodies. */
export const compactForComparison = (text: string): string => text.normalize("NFC").replace(whiteSpace, "")

/**
 * The body used to find duplicates (PUSH_PROTOCOL "Duplicates"): Unicode NFC, without the
 * `[Web발신]` marker, without the forwarder's `보낸사람 : …` prefix, without any white space.
 * Everything else, the balance (`잔액`) above all, is kept, so two real deposits stay different.
 */
export const normalizeForDuplicates = (text: string): string => {
  const nfc = normalizeLineBreaks(text).normalize("NFC")
  // The marker may sit before or after the prefix: strip it on both sides of the prefix.
  const withoutPrefix = stripSenderPrefix(stripWebSenderMarker(nfc).replace(/^\s+/u, ""))
  return compactForComparison(stripWebSenderMarker(withoutPrefix))
}

// Full-width ASCII (U+FF01–FF5E: digits, comma, brackets, letters…) and the ideographic space.
const fullWidth = /[\uFF01-\uFF5E]/g

/**
 * The text the parser reads (templates, built-in or not, and the never-a-deposit guard): NFC,
 * full-width ASCII folded to ASCII, without the `[Web발신]` marker and the forwarder's
 * `보낸사람 : …` prefix, every line trimmed with its runs of spaces and tabs made one space, and
 * no empty line. Line breaks are kept where the phone kept them.
 */
export const normalizeSmsText = (text: string): string => {
  const folded = normalizeLineBreaks(text).normalize("NFC")
    .replace(fullWidth, (c) => String.fromCharCode(c.charCodeAt(0) - 0xFEE0))
    .replace(/\u3000/g, " ")
  const withoutPrefix = stripSenderPrefix(stripWebSenderMarker(folded).replace(/^\s+/u, ""))
  return stripWebSenderMarker(withoutPrefix)
    .split("\n")
    .map((line) => line.replace(/[^\S\n]+/gu, " ").trim())
    .filter((line) => line !== "")
    .join("\n")
}

// ---------------------------------------------------------------------------------------------
// SmsForwarder (pppscn/SmsForwarder) default template.
//
// With no custom template the app sends as `content` (MsgInfo.getContentForSend, v3.x):
//   {{FROM}}\n{{SMS}}\n{{CARD_SLOT}}\nSubId：{{CARD_SUBID}}\n{{RECEIVE_TIME}}\n{{DEVICE_NAME}}
// (Chinese tag names {{来源号码}} {{短信内容}} {{卡槽信息}} {{卡槽主键}} {{接收时间}} {{设备名称}}),
// then trims the result. The tags are replaced by values, so no label survives on the wire:
//   line 1      the sender number (the `from` field)
//   lines 2..n  the SMS itself
//   then        the SIM line `SIM1_<remark>` / `SIM2_<remark>`, or an empty line when unknown
//   then        `SubId：<subscription id>` (full-width colon; absent in v2.x)
//   then        the receive time `yyyy-MM-dd HH:mm:ss` in the phone's time zone
//   then        the device name (the line disappears in the trim when it is empty)
// ---------------------------------------------------------------------------------------------

const receiveTimeLine = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/
const subIdLine = /^SubId\s*[：:]\s*-?\d+$/i
const simLine = /^SIM(\d)_/

/** What the SmsForwarder default wrapper carried besides the SMS. */
export interface ForwarderContent {
  /** The SMS text: the wrapper's lines removed (the whole content, trimmed, when none was found). */
  readonly text: string
  /** True when the default wrapper was recognised and removed. */
  readonly wrapped: boolean
  /** 1-based SIM slot from the `SIM1_…` / `SIM2_…` line. */
  readonly simSlot?: number | undefined
  /** The receive time exactly as printed (phone-local `yyyy-MM-dd HH:mm:ss`, zone unknown). */
  readonly receiveTime?: string | undefined
  /** The device name line, when the phone has one set. */
  readonly deviceName?: string | undefined
}

const sameSender = (line: string, from: string): boolean => {
  const a = line.trim()
  const b = from.trim()
  if (a === b) return true
  const na = normalizePhone(a)
  return na !== undefined && na === normalizePhone(b)
}

// A first line that can only be a sender number (used when `from` is not known).
const looksLikeNumber = (line: string): boolean =>
  /^[+\d\s\-()#*.]+$/.test(line.trim()) && normalizePhone(line) !== undefined

/**
 * Reads SmsForwarder's default `content` wrapper. The trailer (SIM line, `SubId：` line, receive
 * time, device name) is recognised when the receive-time line is one of the last two lines and
 * the header (first line = `from`) matched, or a SIM or `SubId：` line confirms the template;
 * the header is removed when it equals `from` (or, with `from` unknown, when it is a bare number
 * and the trailer was confirmed). Content that does not look like the default template (a
 * user's custom template) comes back whole, trimmed, with `wrapped: false`.
 */
export const parseForwarderContent = (content: string, from?: string): ForwarderContent => {
  const lines = normalizeLineBreaks(content).trim().split("\n")
  const line = (i: number): string => (lines[i] ?? "").trim()
  const headerMatched = from !== undefined && lines.length > 1 && sameSender(line(0), from)
  const first = headerMatched ? 1 : 0

  let timeAt = -1
  for (const candidate of [lines.length - 1, lines.length - 2]) {
    if (candidate > first && receiveTimeLine.test(line(candidate))) {
      timeAt = candidate
      break
    }
  }

  let end = lines.length
  let simSlot: number | undefined
  if (timeAt > first) {
    let cut = timeAt
    let confirmed = false
    if (cut - 1 > first && subIdLine.test(line(cut - 1))) {
      cut--
      confirmed = true
    }
    const sim = cut - 1 > first ? simLine.exec(line(cut - 1)) : null
    if (sim !== null) {
      simSlot = Number(sim[1])
      cut--
      confirmed = true
    } else if (cut - 1 > first && line(cut - 1) === "" && (confirmed || headerMatched)) {
      // The SIM line is empty when the app could not tell the slot.
      cut--
    }
    if (confirmed || headerMatched) end = cut
  }

  const trailerFound = end !== lines.length
  const start = headerMatched ? 1 : (from === undefined && trailerFound && looksLikeNumber(line(0)) ? 1 : 0)
  if (start === 0 && !trailerFound) return { text: lines.join("\n").trim(), wrapped: false }
  const deviceName = trailerFound && timeAt === lines.length - 2 ? line(lines.length - 1) : ""
  return {
    text: lines.slice(start, end).join("\n").trim(),
    wrapped: true,
    simSlot,
    receiveTime: trailerFound ? line(timeAt) : undefined,
    deviceName: deviceName === "" ? undefined : deviceName
  }
}

/** The SMS text inside SmsForwarder's default `content` wrapper (see {@link parseForwarderContent}). */
export const stripForwarderWrapper = (content: string, from?: string): string =>
  parseForwarderContent(content, from).text

/**
 * Renders `content` the way SmsForwarder's default template does (v3.x), for tests and the
 * benchmark: sender, SMS, SIM line, `SubId：`, receive time, device name, trimmed.
 */
export const formatForwarderContent = (input: {
  readonly from: string
  readonly text: string
  readonly simInfo?: string | undefined
  readonly subId?: number | undefined
  readonly receiveTime: string
  readonly deviceName?: string | undefined
}): string =>
  [
    input.from,
    input.text,
    input.simInfo ?? "",
    `SubId：${input.subId ?? 0}`,
    input.receiveTime,
    input.deviceName ?? ""
  ].join("\n").trim()

/** A chat-bot message as stored: who sent the SMS, and its text. */
export interface ChatText {
  readonly sender: string
  readonly senderNormalized: string | undefined
  readonly text: string
}

/** The value of the `보낸사람 :` prefix {@link stripSenderPrefix} removes: the number, without its `(contact)` suffix. */
const senderFromPrefix = (text: string): string | undefined => {
  const unified = normalizeLineBreaks(text)
  const rest = stripSenderPrefix(unified)
  if (rest.length === unified.length) return undefined
  const value = unified.slice(0, unified.length - rest.length)
    .replace(/^\s*보낸\s*사람\s*[:：]/u, "")
    .replace(/\([^)\n]*\)\s*$/u, "")
    .trim()
  return value === "" ? undefined : value
}

/**
 * Sender and text of a chat message. A message pasted or relayed from a phone usually is the
 * forwarder's output: SmsForwarder's default wrapper (first line the sender number, trailer with
 * SIM, receive time, device) is removed and its first line taken as the sender; otherwise a
 * `보낸사람 : <number>` prefix names the sender (the text is kept whole, as the push endpoint
 * keeps it). Failing both, the sender is the Telegram author (`@username`) or, without one, the
 * chat id; such senders are never phone numbers, so they are never whitelisted.
 */
export const readChatText = (message: {
  readonly chatId: string
  readonly username: string | undefined
  readonly text: string | undefined
}): ChatText => {
  const raw = normalizeLineBreaks(message.text ?? "").trim()
  const wrapper = parseForwarderContent(raw)
  const header = (raw.split("\n")[0] ?? "").trim()
  const text = wrapper.wrapped ? wrapper.text : raw
  if (wrapper.wrapped && header !== "" && !text.startsWith(header) && normalizePhone(header) !== undefined) {
    return { sender: header, senderNormalized: normalizePhone(header), text }
  }
  const prefixed = senderFromPrefix(text)
  if (prefixed !== undefined) return { sender: prefixed, senderNormalized: normalizePhone(prefixed), text }
  const sender = message.username === undefined ? message.chatId : `@${message.username}`
  return { sender, senderNormalized: undefined, text }
}
