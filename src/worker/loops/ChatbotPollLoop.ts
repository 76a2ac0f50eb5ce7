// chatbot_poll_loop: Telegram getUpdates long poll; text messages from the configured chats are
// stored as SMS of device `chatbot:<chat_id>`, with the update offset in the same transaction.
import { DateTime, Duration, Effect, Option, Schema } from "effect"
import { SqlClient, type SqlConnection } from "effect/sql"
import {
  nextOffset,
  TelegramApiError,
  TelegramClient,
  type TelegramError,
  TelegramUnavailable,
  type TelegramUpdate
} from "../../clients/TelegramClient.ts"
import { IngestStore } from "../IngestStore.ts"
import { readChatText } from "../../domain/SmsText.ts"
import { Kicks, type Loop, type LoopServices, Worker } from "./Loop.ts"

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

const Offset = Schema.Struct({ value: Schema.NumberFromString.check(Schema.isInt()) })
const decodeOffset = Schema.decodeUnknownEffect(Schema.Array(Offset))

const tryLock = (connection: SqlConnection.Connection) =>
  connection.execute("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked", [LOCK_KEY], undefined).pipe(
    Effect.map((rows) => rows[0]?.locked === true)
  )
const unlock = (connection: SqlConnection.Connection) =>
  connection.execute("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [LOCK_KEY], undefined)

export const ChatbotPollLoop: Loop<LoopServices | IngestStore> = {
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
    // The worker's own store: its batchers are a supervised component, not rebuilt at every restart.
    const store = yield* IngestStore
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
