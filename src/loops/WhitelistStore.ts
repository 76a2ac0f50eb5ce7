// The query of phone_whitelist_loop: need_check SMS whose sender is now whitelisted and whose
// device is now trusted, moved on to `received` a batch at a time (SKIP LOCKED, NOTIFY with it).
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { CHANGES_CHANNEL } from "../db/Sms.ts"
import { DbId } from "../domain/PgValues.ts"
import { reportSmsChanges } from "../observability/SmsChanges.ts"
import { sqlFailures } from "../db/Codecs.ts"
import { sourceText } from "../db/SourceText.ts"

const MOVED = sourceText(import.meta.url, "./WhitelistStore.moved.sql")

export class WhitelistStore extends Context.Service<WhitelistStore, {
  /**
   * Up to `limit` held SMS moved on to `received` in one transaction, parse_loops told through
   * NOTIFY; answers how many. An SMS an operator has already judged (check_result set) is not ours to move.
   */
  moveOn(limit: number): Effect.Effect<number, SqlError.SqlError>
}>()("recon/loops/WhitelistStore") {
  static readonly layer = Layer.effect(WhitelistStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const moved = SqlSchema.findAll({
      Request: Schema.Int,
      Result: Schema.Struct({ id: DbId }),
      execute: (limit) => sql.unsafe(MOVED, [limit])
    })

    const moveOn = Effect.fn("WhitelistStore.moveOn")(function*(limit: number) {
      return yield* sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sqlFailures(moved(limit))
        if (rows.length > 0) yield* sql`SELECT pg_notify(${CHANGES_CHANNEL}, 'shooter_sms')`
        yield* reportSmsChanges(sql, rows.map((row) => ({ id: row.id, status: "received" })))
        return rows.length
      }))
    })

    return WhitelistStore.of({ moveOn })
  }))
}
