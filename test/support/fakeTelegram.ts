// A local Telegram Bot API for getUpdates and sendMessage: keeps an update queue, honours `offset`
// the way Telegram does (updates below it are confirmed and dropped), keeps the messages sent,
// answers at once, and can be told to fail.
import { Effect } from "effect"
import { callLog, json, serveLoopback } from "./fakeServer.ts"

export const TOKEN = "7654321098:AAH-fakeTokenForTests_0123456789abcde"

export interface GetUpdatesCall {
  readonly method: string | undefined
  /** The path with the token replaced by `<token>` (so the record itself can be printed). */
  readonly path: string
  readonly tokenMatched: boolean
  readonly body: {
    readonly offset?: number
    readonly limit?: number
    readonly timeout?: number
    readonly allowed_updates?: ReadonlyArray<string>
  }
}

export interface CannedReply {
  readonly status: number
  readonly body: string
  readonly contentType?: string
}

/** A sendMessage as the bot sent it. */
export interface SentMessage {
  readonly chat_id: string | number
  readonly text: string
}

export interface FakeTelegram {
  /** The `SVC_RECON_CHATBOT_API_URL` to use: `http://127.0.0.1:<port>` */
  readonly apiUrl: string
  readonly calls: Array<GetUpdatesCall>
  /** The messages sendMessage delivered (a failed one is not here). */
  readonly sent: Array<SentMessage>
  /** Queues updates (wire format) for the next getUpdates. */
  readonly push: (...updates: ReadonlyArray<unknown>) => void
  /** The next getUpdates gets this answer instead of the queue. */
  readonly failNext: (reply: CannedReply) => void
  readonly arrived: (n: number) => Effect.Effect<void>
}

/** Telegram's error envelope, as it sends it with the same HTTP status. */
export const apiError = (errorCode: number, description: string, retryAfter?: number): CannedReply => ({
  status: errorCode,
  body: JSON.stringify({
    ok: false,
    error_code: errorCode,
    description,
    ...(retryAfter === undefined ? {} : { parameters: { retry_after: retryAfter } })
  })
})

/** A text message update as Telegram sends it (private chat, group or channel post). */
export const textUpdate = (input: {
  readonly updateId: number
  readonly chatId: number
  readonly messageId: number
  readonly text?: string
  readonly date?: number
  readonly username?: string
  readonly channel?: boolean
}): unknown => {
  const chat = input.chatId < 0
    ? { id: input.chatId, title: "Deposits", type: input.channel ? "channel" : "supergroup" }
    : { id: input.chatId, first_name: "Ops", type: "private" }
  const message = {
    message_id: input.messageId,
    ...(input.channel
      ? { sender_chat: { id: input.chatId, title: "Deposits", type: "channel", ...(input.username ? { username: input.username } : {}) } }
      : { from: { id: 5550001, is_bot: false, first_name: "Ops", ...(input.username ? { username: input.username } : {}) } }),
    chat,
    date: input.date ?? 1_760_000_000,
    ...(input.text === undefined ? {} : { text: input.text })
  }
  return { update_id: input.updateId, [input.channel ? "channel_post" : "message"]: message }
}

export const fakeTelegram = (token: string = TOKEN) =>
  Effect.gen(function*() {
    const log = callLog<GetUpdatesCall>()
    let queue: Array<{ readonly update_id: number }> = []
    const canned: Array<CannedReply> = []
    const sent: Array<SentMessage> = []

    const apiUrl = yield* serveLoopback((req, res, text) => {
      let body: GetUpdatesCall["body"] = {}
      try {
        body = JSON.parse(text || "{}")
      } catch {
        return json(res, 400, { ok: false, error_code: 400, description: "Bad Request: can't parse JSON" })
      }
      const url = req.url ?? ""
      const match = /^\/bot([^/]+)\/(getUpdates|sendMessage)$/.exec(url)
      const tokenMatched = match?.[1] === token
      log.record({ method: req.method, path: url.replaceAll(token, "<token>"), tokenMatched, body })

      if (match === null) return json(res, 404, { ok: false, error_code: 404, description: "Not Found" })
      if (!tokenMatched) return json(res, 401, { ok: false, error_code: 401, description: "Unauthorized" })
      const reply = canned.shift()
      if (reply !== undefined) {
        return res.writeHead(reply.status, { "content-type": reply.contentType ?? "application/json" }).end(reply.body)
      }
      if (match[2] === "sendMessage") {
        const message = body as unknown as SentMessage
        if (typeof message.text !== "string" || message.text === "" || message.chat_id === undefined) {
          return json(res, 400, { ok: false, error_code: 400, description: "Bad Request: message text is empty" })
        }
        sent.push({ chat_id: message.chat_id, text: message.text })
        return json(res, 200, { ok: true, result: { message_id: sent.length, chat: { id: message.chat_id }, date: 1_760_000_000, text: message.text } })
      }
      // An offset confirms every update before it: Telegram forgets them.
      if (typeof body.offset === "number") queue = queue.filter((u) => u.update_id >= body.offset!)
      const limit = body.limit ?? 100
      return json(res, 200, { ok: true, result: queue.slice(0, limit) })
    })

    const telegram: FakeTelegram = {
      apiUrl,
      calls: log.calls,
      sent,
      push: (...updates) => {
        queue.push(...(updates as Array<{ readonly update_id: number }>))
        queue.sort((a, b) => a.update_id - b.update_id)
      },
      failNext: (reply) => void canned.push(reply),
      arrived: log.arrived
    }
    return telegram
  })
