// chatbot_poll_loop: Telegram getUpdates long poll; text messages from the configured chats are
// stored as SMS of device `chatbot:<chat_id>`, with the update offset in the same transaction.
import { DateTime, Duration, Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import {
  nextOffset,
  TelegramApiError,
  TelegramClient,
  type TelegramError,
  TelegramUnavailable,
  type TelegramUpdate
} from "../clients/TelegramClient.ts"
import { ChatbotStore } from "./ChatbotStore.ts"
import { IngestStore, type NewSms } from "./IngestStore.ts"
import { readChatText } from "../domain/SmsText.ts"
import { Kicks, type Loop, type LoopServices, Worker } from "./Loop.ts"

/** Long-poll seconds: with the client's transport margin a pass stays well inside the 60 s TTL. */
export const POLL_TIMEOUT_S = 20
/** After a 409 (another poller, or a webhook set on the bot) the next poll waits this long. */
const CONFLICT_PAUSE = Duration.seconds(5)
/** Longest a pass waits out a retry_after before it gives up for this pass. */
const MAX_WAIT = Duration.seconds(10)

export const chatbotDeviceId = (chatId: string): string => `chatbot:${chatId}`

/** The update's message as an SMS to store, if it is text from one of `chats`. */
const smsOf = (chats: ReadonlySet<string>, { message }: TelegramUpdate): Omit<NewSms, "signature"> | undefined => {
  if (message === undefined || message.text === undefined || !chats.has(message.chatId)) return undefined
  const read = readChatText(message)
  if (read.text === "") return undefined
  return {
    deviceId: chatbotDeviceId(message.chatId),
    sender: read.sender,
    senderNormalized: read.senderNormalized,
    text: read.text,
    receivedAt: message.date,
    remoteId: String(message.messageId)
  }
}

/** The batch's SMS and the offset that confirms it, in one transaction: a crash stores neither. */
const storeBatch = (chats: ReadonlySet<string>, updates: ReadonlyArray<TelegramUpdate>, offset: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ingest = yield* IngestStore
    const store = yield* ChatbotStore
    return yield* sql.withTransaction(Effect.gen(function*() {
      let stored = 0
      let fresh = 0
      for (const update of updates) {
        const sms = smsOf(chats, update)
        if (sms === undefined) continue
        const result = yield* ingest.ingest(sms, { ensureDevice: true })
        stored++
        if (!result.duplicate) fresh++
      }
      yield* store.writeOffset(offset)
      return { stored, fresh }
    }))
  })

/** When Telegram lets us call again: after a 429's retry_after, or a pause after a 409. */
const makePause = Effect.sync(() => {
  // Epoch millis before which Telegram asked us not to call.
  let notBefore = 0
  const after = (error: TelegramError) =>
    Effect.gen(function*() {
      const now = DateTime.toEpochMillis(yield* DateTime.now)
      if (error instanceof TelegramApiError && error.retryAfter !== undefined) notBefore = now + error.retryAfter * 1000
      else if (error instanceof TelegramApiError && error.errorCode === 409) notBefore = now + Duration.toMillis(CONFLICT_PAUSE)
    })
  const waitOut = Effect.gen(function*() {
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
  return { after, waitOut }
})

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
    const store = yield* ChatbotStore
    const kicks = yield* Kicks
    const telegram = yield* TelegramClient.make({ apiUrl: chatbot.apiUrl, token })
    const chats = new Set(chatbot.chatIds)
    const pause = yield* makePause
    // What the batch's transaction needs, from the loop's context.
    const context = yield* Effect.context<SqlClient.SqlClient | IngestStore | ChatbotStore>()

    return Effect.scoped(Effect.gen(function*() {
      if (!(yield* store.pollLock())) {
        yield* Effect.logDebug("another worker process polls Telegram")
        return
      }
      yield* pause.waitOut
      const offset = yield* store.readOffset()
      const updates = yield* telegram.getUpdates({ offset, timeout: POLL_TIMEOUT_S }).pipe(Effect.tapError(pause.after))
      const confirmed = nextOffset(updates)
      if (Option.isNone(confirmed)) return
      const { fresh, stored } = yield* storeBatch(chats, updates, confirmed.value).pipe(Effect.provideContext(context))
      if (fresh > 0) yield* kicks.kick("parse_loop")
      const summary = `chat-bot: ${updates.length} update(s), ${stored} stored (${fresh} new), offset ${confirmed.value}`
      yield* stored > 0 ? Effect.logInfo(summary) : Effect.logDebug(summary)
    }))
  })
}
