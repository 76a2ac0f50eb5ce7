// Telegram Bot API for the chat-bot: `getUpdates` (long polling) for ingestion and `sendMessage`
// for the operators' alert chat. The bot token is part of every Bot API URL, so no URL, transport
// error text or token ever leaves this module.
import { Context, DateTime, Duration, Effect, Option, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { callJson, clip, scrubber } from "./Upstream.ts"

/** Telegram answered `{"ok": false, …}` (409 another getUpdates or a webhook is active, 429 flood wait, 401 bad token…). */
export class TelegramApiError extends Schema.TaggedError<TelegramApiError>()("TelegramApiError", {
  errorCode: Schema.Int,
  description: Schema.String,
  /** Seconds to wait before the next request (429 `parameters.retry_after`). */
  retryAfter: Schema.optionalKey(Schema.Int)
}) {}

/** No usable answer: unreachable, timed out, or a body that is not the Bot API's. */
export class TelegramUnavailable extends Schema.TaggedError<TelegramUnavailable>()("TelegramUnavailable", {
  reason: Schema.String
}) {}

export type TelegramError = TelegramApiError | TelegramUnavailable

export interface TelegramSettings {
  /** `https://api.telegram.org` or a Bot API server of one's own. */
  readonly apiUrl: string
  readonly token: Redacted.Redacted<string>
}

/** A text-bearing message (`message` or `channel_post`) as far as ingestion needs it. */
export interface TelegramMessage {
  readonly messageId: number
  readonly date: DateTime.Utc
  readonly chatId: string
  readonly text: string | undefined
  /** `from.username` (users), else `sender_chat.username` (channels), when there is one. */
  readonly username: string | undefined
}

export interface TelegramUpdate {
  readonly updateId: number
  /** Absent for every other kind of update (edits, reactions, members…): skipped, offset advanced. */
  readonly message: TelegramMessage | undefined
}

export interface GetUpdatesOptions {
  /** Last update_id + 1: confirms everything before it on Telegram's side. */
  readonly offset?: number | undefined
  /** Long-poll seconds. */
  readonly timeout: number
  readonly limit?: number | undefined
}

/** The Bot API's limit on a message's text. */
export const MAX_MESSAGE_LENGTH = 4096

/** Time the HTTP call may take beyond the long-poll timeout before it is given up (and a sendMessage's whole time). */
export const TRANSPORT_MARGIN = Duration.seconds(10)

const ALLOWED_UPDATES = ["message", "channel_post"] as const

const Chat = Schema.Struct({ id: Schema.Int, username: Schema.optionalKey(Schema.String) })

const Message = Schema.Struct({
  message_id: Schema.Int,
  date: Schema.Int,
  chat: Chat,
  text: Schema.optionalKey(Schema.String),
  from: Schema.optionalKey(Schema.Struct({ id: Schema.Int, username: Schema.optionalKey(Schema.String) })),
  sender_chat: Schema.optionalKey(Chat)
})

const Envelope = Schema.Struct({
  ok: Schema.Boolean,
  result: Schema.optionalKey(Schema.Unknown),
  error_code: Schema.optionalKey(Schema.Int),
  description: Schema.optionalKey(Schema.String),
  parameters: Schema.optionalKey(Schema.Struct({ retry_after: Schema.optionalKey(Schema.Int) }))
})

const UpdateHead = Schema.Struct({
  update_id: Schema.Int,
  message: Schema.optionalKey(Schema.Unknown),
  channel_post: Schema.optionalKey(Schema.Unknown)
})

const EnvelopeBody = Schema.fromJsonString(Envelope)
const decodeUpdates = Schema.decodeUnknownOption(Schema.Array(UpdateHead))
const decodeMessage = Schema.decodeUnknownOption(Message)

/** One update: a message whose shape we do not know is treated as a non-text update, never as a stuck batch. */
const toUpdate = (head: typeof UpdateHead.Type): TelegramUpdate => {
  const raw = head.message ?? head.channel_post
  const message = raw === undefined ? Option.none() : decodeMessage(raw)
  return {
    updateId: head.update_id,
    message: Option.match(message, {
      onNone: () => undefined,
      onSome: (m) => ({
        messageId: m.message_id,
        date: DateTime.makeUnsafe(m.date * 1000),
        chatId: String(m.chat.id),
        text: m.text,
        username: m.from?.username ?? m.sender_chat?.username
      })
    })
  }
}

export class TelegramClient extends Context.Service<TelegramClient, {
  readonly getUpdates: (options: GetUpdatesOptions) => Effect.Effect<ReadonlyArray<TelegramUpdate>, TelegramError>
  /** Posts a plain-text message to a chat (the operators' alert chat). */
  readonly sendMessage: (chatId: string, text: string) => Effect.Effect<void, TelegramError>
}>()("recon/clients/TelegramClient") {
  /**
   * A client for one bot, on the HttpClient of the layer graph. Every status is decoded: the Bot
   * API answers its errors (401, 409, 429…) as `{"ok": false, …}` bodies that say what to do.
   */
  static readonly make = (settings: TelegramSettings) =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const token = Redacted.value(settings.token)
      const base = `${settings.apiUrl.replace(/\/+$/, "")}/bot${token}`
      // Belt and braces: a proxy or Bot API server might echo the path back.
      const scrub = scrubber(token)

      /** One Bot API method: its `result`, or the API's refusal, or why there was no usable answer. */
      const call = (method: string, body: unknown, timeout: Duration.Input): Effect.Effect<unknown, TelegramError> =>
        HttpClientRequest.post(`${base}/${method}`).pipe(
          HttpClientRequest.acceptJson,
          HttpClientRequest.bodyJsonUnsafe(body),
          (request) => callJson(client, request, { body: EnvelopeBody, timeout }),
          Effect.catchTags({
            UpstreamTimeout: () => Effect.fail(new TelegramUnavailable({ reason: `${method} did not answer in time` })),
            // The transport error's text carries the URL, hence the token: keep only its kind.
            UpstreamUnreachable: ({ kind }) => Effect.fail(new TelegramUnavailable({ reason: `Bot API unreachable (${kind})` })),
            UpstreamMalformed: ({ status }) =>
              Effect.fail(new TelegramUnavailable({ reason: `Bot API answered HTTP ${status} without a Bot API body` })),
            // Not filtered by status: every answer is decoded above.
            UpstreamStatus: ({ status }) => Effect.fail(new TelegramUnavailable({ reason: `Bot API answered HTTP ${status}` }))
          }),
          Effect.flatMap(({ body: answer, status }): Effect.Effect<unknown, TelegramError> => {
            if (answer.ok) return Effect.succeed(answer.result)
            const retryAfter = answer.parameters?.retry_after
            return Effect.fail(
              new TelegramApiError({
                errorCode: answer.error_code ?? status,
                description: scrub(clip(answer.description ?? `HTTP ${status}`, 200)),
                ...(retryAfter === undefined ? {} : { retryAfter })
              })
            )
          }),
          // Client spans would record the URL, token included.
          Effect.provideService(HttpClient.TracerDisabledWhen, () => true)
        )

      const getUpdates = (options: GetUpdatesOptions): Effect.Effect<ReadonlyArray<TelegramUpdate>, TelegramError> =>
        call("getUpdates", {
          ...(options.offset === undefined ? {} : { offset: options.offset }),
          limit: options.limit ?? 100,
          timeout: options.timeout,
          allowed_updates: ALLOWED_UPDATES
        }, Duration.sum(Duration.seconds(options.timeout), TRANSPORT_MARGIN)).pipe(
          Effect.flatMap((result) =>
            Option.match(decodeUpdates(result), {
              onNone: () => Effect.fail(new TelegramUnavailable({ reason: "getUpdates result is not a list of updates" })),
              onSome: (heads) => Effect.succeed(heads.map(toUpdate))
            })
          )
        )

      const sendMessage = (chatId: string, text: string): Effect.Effect<void, TelegramError> =>
        Effect.asVoid(call("sendMessage", { chat_id: chatId, text: clip(text, MAX_MESSAGE_LENGTH - 1), disable_web_page_preview: true }, TRANSPORT_MARGIN))

      return TelegramClient.of({ getUpdates, sendMessage })
    })
}

/** The offset that confirms a batch: its highest update_id + 1 (none for an empty batch). */
export const nextOffset = (updates: ReadonlyArray<TelegramUpdate>): Option.Option<number> =>
  updates.length === 0 ? Option.none() : Option.some(Math.max(...updates.map((u) => u.updateId)) + 1)
