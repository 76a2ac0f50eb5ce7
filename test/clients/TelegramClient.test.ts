// TelegramClient against a local Bot API speaking the real getUpdates wire format.
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Exit, Option, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import {
  type GetUpdatesOptions,
  nextOffset,
  TelegramApiError,
  TelegramClient,
  type TelegramError,
  type TelegramUpdate,
  TelegramUnavailable
} from "../../src/clients/TelegramClient.ts"
import { apiError, fakeTelegram, textUpdate, TOKEN } from "../support/fakeTelegram.ts"

const getUpdates = (apiUrl: string, options: GetUpdatesOptions, token = TOKEN) =>
  Effect.gen(function*() {
    const client = yield* TelegramClient.make({ apiUrl, token: Redacted.make(token) })
    return yield* client.getUpdates(options)
  }).pipe(Effect.provide(FetchHttpClient.layer))

const failure = (exit: Exit.Exit<ReadonlyArray<TelegramUpdate>, TelegramError>): TelegramError => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a Telegram error")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (reason === undefined || reason._tag !== "Fail") return assert.fail(`expected a typed failure, got ${String(exit.cause)}`)
  return reason.error
}

const noToken = (exit: Exit.Exit<unknown, unknown>, error: TelegramError) => {
  const shown = `${error.message} ${JSON.stringify(error)} ${String(exit)}`
  assert.notInclude(shown, TOKEN)
  assert.notInclude(shown, TOKEN.split(":")[1]!)
}

describe("TelegramClient", () => {
  it.effect("posts offset, timeout and allowed_updates to /bot<token>/getUpdates and decodes messages and channel posts", () =>
    Effect.gen(function*() {
      const telegram = yield* fakeTelegram()
      telegram.push(
        textUpdate({ updateId: 10, chatId: 4242, messageId: 7, text: "입금 10,000원", date: 1_760_000_123, username: "ops" }),
        textUpdate({ updateId: 11, chatId: -1001234567890, messageId: 8, text: "hello", channel: true, username: "deposits" }),
        textUpdate({ updateId: 12, chatId: 4242, messageId: 9 }), // a photo: no text
        { update_id: 13, edited_message: { message_id: 7, date: 1, chat: { id: 4242, type: "private" }, text: "x" } }
      )
      const updates = yield* getUpdates(telegram.apiUrl, { offset: 10, timeout: 20 })

      assert.strictEqual(telegram.calls.length, 1)
      const [call] = telegram.calls
      assert.strictEqual(call?.method, "POST")
      assert.strictEqual(call?.path, "/bot<token>/getUpdates")
      assert.isTrue(call?.tokenMatched)
      assert.deepStrictEqual(call?.body, { offset: 10, limit: 100, timeout: 20, allowed_updates: ["message", "channel_post"] })

      assert.deepStrictEqual(updates.map((u) => u.updateId), [10, 11, 12, 13])
      assert.deepStrictEqual(updates[0]?.message, {
        messageId: 7,
        date: DateTime.makeUnsafe(1_760_000_123_000),
        chatId: "4242",
        text: "입금 10,000원",
        username: "ops"
      })
      assert.strictEqual(updates[1]?.message?.chatId, "-1001234567890")
      assert.strictEqual(updates[1]?.message?.username, "deposits")
      assert.strictEqual(updates[2]?.message?.text, undefined)
      assert.strictEqual(updates[3]?.message, undefined)
      assert.deepStrictEqual(nextOffset(updates), Option.some(14))
      assert.deepStrictEqual(nextOffset([]), Option.none())
    }))

  it.effect("omits the offset when there is none yet", () =>
    Effect.gen(function*() {
      const telegram = yield* fakeTelegram()
      assert.deepStrictEqual(yield* getUpdates(telegram.apiUrl, { timeout: 0 }), [])
      assert.isFalse("offset" in (telegram.calls[0]?.body ?? {}))
    }))

  it.effect("409 Conflict is a TelegramApiError", () =>
    Effect.gen(function*() {
      const telegram = yield* fakeTelegram()
      telegram.failNext(apiError(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"))
      const exit = yield* Effect.exit(getUpdates(telegram.apiUrl, { timeout: 20 }))
      const error = failure(exit)
      assert.instanceOf(error, TelegramApiError)
      if (error._tag === "TelegramApiError") {
        assert.strictEqual(error.errorCode, 409)
        assert.include(error.description, "Conflict")
        assert.isUndefined(error.retryAfter)
      }
      noToken(exit, error)
    }))

  it.effect("429 carries retry_after", () =>
    Effect.gen(function*() {
      const telegram = yield* fakeTelegram()
      telegram.failNext(apiError(429, "Too Many Requests: retry after 7", 7))
      const error = failure(yield* Effect.exit(getUpdates(telegram.apiUrl, { timeout: 20 })))
      assert.instanceOf(error, TelegramApiError)
      if (error._tag === "TelegramApiError") assert.strictEqual(error.retryAfter, 7)
    }))

  it.effect("a wrong token is a 401 TelegramApiError that does not show the token", () =>
    Effect.gen(function*() {
      const telegram = yield* fakeTelegram("123:another-token")
      const exit = yield* Effect.exit(getUpdates(telegram.apiUrl, { timeout: 20 }))
      const error = failure(exit)
      assert.instanceOf(error, TelegramApiError)
      if (error._tag === "TelegramApiError") assert.strictEqual(error.errorCode, 401)
      noToken(exit, error)
    }))

  it.effect("a description that echoes the token is scrubbed", () =>
    Effect.gen(function*() {
      const telegram = yield* fakeTelegram()
      telegram.failNext(apiError(400, `Bad Request: bot${TOKEN} is weird`))
      const exit = yield* Effect.exit(getUpdates(telegram.apiUrl, { timeout: 20 }))
      const error = failure(exit)
      if (error._tag === "TelegramApiError") assert.include(error.description, "[redacted]")
      noToken(exit, error)
    }))

  it.effect("a non-Bot-API answer (proxy 502 page) is TelegramUnavailable", () =>
    Effect.gen(function*() {
      const telegram = yield* fakeTelegram()
      telegram.failNext({ status: 502, body: "<html>Bad Gateway</html>", contentType: "text/html" })
      const exit = yield* Effect.exit(getUpdates(telegram.apiUrl, { timeout: 20 }))
      const error = failure(exit)
      assert.instanceOf(error, TelegramUnavailable)
      if (error._tag === "TelegramUnavailable") assert.include(error.reason, "HTTP 502")
      noToken(exit, error)
    }))

  it.effect("an unreachable server is TelegramUnavailable without the URL", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(getUpdates("http://127.0.0.1:1", { timeout: 20 }))
      const error = failure(exit)
      assert.instanceOf(error, TelegramUnavailable)
      noToken(exit, error)
    }))
})
