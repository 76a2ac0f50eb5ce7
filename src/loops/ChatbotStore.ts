// The queries of chatbot_poll_loop: the Telegram update offset in recon.worker_cursor (it never
// moves back), and the session advisory lock that lets one worker process poll at a time
// (Telegram answers a second poller 409). The SMS themselves are stored through IngestStore.
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { sqlFailures } from "../db/Codecs.ts"

/** recon.worker_cursor row holding the next update offset (last update_id + 1). */
export const OFFSET_CURSOR = "chatbot_poll_loop.offset"
/** Session advisory lock: one worker process polls at a time. */
const LOCK_KEY = "recon.chatbot_poll_loop"

export class ChatbotStore extends Context.Service<ChatbotStore, {
  /**
   * True when this process holds the poller's lock until the scope closes (on a connection
   * reserved as long); false when another process polls.
   */
  pollLock(): Effect.Effect<boolean, SqlError.SqlError, Scope.Scope>
  /** The next update offset, if one was ever confirmed. */
  readOffset(): Effect.Effect<number | undefined, SqlError.SqlError>
  /** The next update offset, never moved back: a slower process can not undo a newer commit. */
  writeOffset(offset: number): Effect.Effect<void, SqlError.SqlError>
}>()("recon/loops/ChatbotStore") {
  static readonly layer = Layer.effect(ChatbotStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findOffset = SqlSchema.findOneOption({
      Request: Schema.Void,
      Result: Schema.Struct({ value: Schema.NumberFromString.check(Schema.isInt()) }),
      execute: () => sql`SELECT value FROM recon.worker_cursor WHERE name = ${OFFSET_CURSOR}`
    })

    return ChatbotStore.of({
      pollLock: Effect.fn("ChatbotStore.pollLock")(function*() {
        const connection = yield* sql.reserve
        return yield* Effect.acquireRelease(
          connection.execute("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked", [LOCK_KEY], undefined).pipe(
            Effect.map((rows) => rows[0]?.locked === true)
          ),
          (locked) =>
            locked ? Effect.ignore(connection.execute("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [LOCK_KEY], undefined)) : Effect.void
        )
      }),
      readOffset: Effect.fn("ChatbotStore.readOffset")(function*() {
        const row = yield* sqlFailures(findOffset(undefined))
        return row._tag === "Some" ? row.value.value : undefined
      }),
      writeOffset: Effect.fn("ChatbotStore.writeOffset")(function*(offset: number) {
        yield* sql`INSERT INTO recon.worker_cursor (name, value, updated_at) VALUES (${OFFSET_CURSOR}, ${String(offset)}, now())
        ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
        WHERE recon.worker_cursor.value::bigint < EXCLUDED.value::bigint`
      })
    })
  }))
}
