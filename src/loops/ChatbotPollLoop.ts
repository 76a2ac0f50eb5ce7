// chatbot_poll_loop: Telegram getUpdates long poll; text messages from the configured chats are
// stored as SMS of device `chatbot:<chat_id>`, with the update offset in the same transaction.
import { Context, DateTime, Duration, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type SqlConnection } from "effect/sql"
import {
  nextOffset,
  TelegramApiError,
  TelegramClient,
  type TelegramError,
  type TelegramMessage,
  TelegramUnavailable,
  type TelegramUpdate
} from "../clients/TelegramClient.ts"
import { IngestStore } from "../db/IngestStore.ts"
import { normalizePhone } from "../domain/Phone.ts"
import { normalizeLineBreaks, parseForwarderContent, stripSenderPrefix } from "../domain/SmsText.ts"
import { Kicks, type Loop, Worker } from "./Loop.ts"

/** Long-poll seconds: with the client's transport margin a pass stays well inside the 60 s TTL. */
export const POLL_TIMEOUT_S = 20
/** recon.worker_cursor row holding the next update offset (last update_id + 1). */
export const OFFSET_CURSOR = "chatbot_poll_loop.offset"
/** Session advisory lock: one worker process polls at a time (Telegram answers a second poller 409). */
const LOCK_KEY = "recon.chatbot_poll_loop"
/** After a 409 (another poller, or a webhook set on the bot) the next poll waits this long. */
const CONFLICT_PAUSE = Duration.seconds(5)
/** Longest a pass waits out a retry_after before it gives up for this pass. */
const MAX_WAIT = Duration.seconds(10)

export const chatbotDeviceId = (chatId: string): string => `chatbot:${chatId}`

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
export const readChatText = (message: Pick<TelegramMessage, "chatId" | "username" | "text">): ChatText => {
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

const Offset = Schema.Struct({ value: Schema.NumberFromString.check(Schema.isInt()) })
const decodeOffset = Schema.decodeUnknownEffect(Schema.Array(Offset))

const tryLock = (connection: SqlConnection.Connection) =>
  connection.execute("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked", [LOCK_KEY], undefined).pipe(
    Effect.map((rows) => rows[0]?.locked === true)
  )
const unlock = (connection: SqlConnection.Connection) =>
  connection.execute("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [LOCK_KEY], undefined)

export const ChatbotPollLoop: Loop = {
  name: "chatbot_poll_loop",
  ttl: "60 seconds",
  // The long poll itself waits for messages: right after one answers, the next may start.
  every: "1 second",
  start: Effect.gen(function*() {
    const { chatbot } = yield* Worker
    // Disabled: every pass succeeds at once, so the loop stays fresh (DESIGN section 8).
    if (!chatbot.enabled) return Effect.void
    const token = chatbot.token
    if (token === undefined) {
      return Effect.fail(new TelegramUnavailable({ reason: "chat-bot ingestion is on but no bot token is configured" }))
    }
    const sql = yield* SqlClient.SqlClient
    const kicks = yield* Kicks
    const store = Context.get(yield* Layer.build(IngestStore.layer), IngestStore)
    const telegram = yield* TelegramClient.make({ apiUrl: chatbot.apiUrl, token })
    const chats = new Set(chatbot.chatIds)
    // Epoch millis before which Telegram asked us not to call (429 retry_after, 409 pause).
    let notBefore = 0

    const readOffset = sql`SELECT value FROM recon.worker_cursor WHERE name = ${OFFSET_CURSOR}`.pipe(
      Effect.flatMap(decodeOffset),
      Effect.map((rows) => rows[0]?.value)
    )
    // Never moves back: a slower process can not undo a newer commit.
    const writeOffset = (offset: number) =>
      sql`INSERT INTO recon.worker_cursor (name, value, updated_at) VALUES (${OFFSET_CURSOR}, ${String(offset)}, now())
        ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
        WHERE recon.worker_cursor.value::bigint < EXCLUDED.value::bigint`

    /** The batch's SMS and the offset that confirms it, in one transaction: a crash stores neither. */
    const storeBatch = (updates: ReadonlyArray<TelegramUpdate>, offset: number) =>
      sql.withTransaction(Effect.gen(function*() {
        let stored = 0
        let fresh = 0
        for (const { message } of updates) {
          if (message === undefined || message.text === undefined || !chats.has(message.chatId)) continue
          const read = readChatText(message)
          if (read.text === "") continue
          const result = yield* store.ingest({
            deviceId: chatbotDeviceId(message.chatId),
            sender: read.sender,
            senderNormalized: read.senderNormalized,
            text: read.text,
            receivedAt: message.date,
            remoteId: String(message.messageId)
          }, { ensureDevice: true })
          stored++
          if (!result.duplicate) fresh++
        }
        yield* writeOffset(offset)
        return { stored, fresh }
      }))

    const pause = (error: TelegramError) =>
      Effect.gen(function*() {
        const now = DateTime.toEpochMillis(yield* DateTime.now)
        if (error._tag === "TelegramApiError" && error.retryAfter !== undefined) notBefore = now + error.retryAfter * 1000
        else if (error._tag === "TelegramApiError" && error.errorCode === 409) notBefore = now + Duration.toMillis(CONFLICT_PAUSE)
      })

    const waitOutPause = Effect.gen(function*() {
      const wait = notBefore - DateTime.toEpochMillis(yield* DateTime.now)
      if (wait <= 0) return
      yield* Effect.sleep(Duration.min(Duration.millis(wait), MAX_WAIT))
      const left = notBefore - DateTime.toEpochMillis(yield* DateTime.now)
      if (left > 0) {
        return yield* new TelegramApiError({
          errorCode: 429,
          description: `still waiting out Telegram's retry_after (${Math.ceil(left / 1000)} s left)`
        })
      }
    })

    return Effect.scoped(Effect.gen(function*() {
      const connection = yield* sql.reserve
      const locked = yield* Effect.acquireRelease(
        tryLock(connection),
        (locked) => locked ? Effect.ignore(unlock(connection)) : Effect.void
      )
      if (!locked) {
        yield* Effect.logDebug("another worker process polls Telegram")
        return
      }
      yield* waitOutPause
      const offset = yield* readOffset
      const updates = yield* telegram.getUpdates({ offset, timeout: POLL_TIMEOUT_S }).pipe(Effect.tapError(pause))
      const confirmed = nextOffset(updates)
      if (Option.isNone(confirmed)) return
      const { fresh, stored } = yield* storeBatch(updates, confirmed.value)
      if (fresh > 0) yield* kicks.kick("parse_loop")
      const summary = `chat-bot: ${updates.length} update(s), ${stored} stored (${fresh} new), offset ${confirmed.value}`
      yield* stored > 0 ? Effect.logInfo(summary) : Effect.logDebug(summary)
    }))
  })
}
