// The query of phone_whitelist_loop: need_check SMS whose sender is now whitelisted and whose
// device is now trusted, moved on to `received` a batch at a time (SKIP LOCKED, NOTIFY with it).
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { CHANGES_CHANNEL } from "../db/Sms.ts"
import { DbId } from "../domain/PgValues.ts"
import { reportSmsChanges } from "../observability/SmsChanges.ts"
import { sqlFailures } from "../db/Codecs.ts"

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
      execute: (limit) =>
        sql`
          WITH held AS (
            SELECT s.id FROM recon.shooter_sms AS s
            JOIN recon.shooter_phone AS p ON p.phone = s.sender_normalized
            JOIN recon.shooter_device AS d ON d.device_id = s.device_id AND d.trusted
            WHERE s.status = 'need_check' AND s.check_result IS NULL
            ORDER BY s.id LIMIT ${limit}
            FOR UPDATE OF s SKIP LOCKED)
          UPDATE recon.shooter_sms AS s SET status = 'received', updated_at = now()
          FROM held WHERE s.id = held.id
          RETURNING s.id`
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
