// phone_whitelist_loop: moves on the need_check SMS that were held only because their sender was
// not yet whitelisted (or their device not yet trusted), once both hold.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { CHANGES_CHANNEL } from "../../db/Sms.ts"
import { reportSmsChanges } from "../../observability/SmsChanges.ts"
import { Kicks, simple } from "./Loop.ts"

const BATCH = 500

export const PhoneWhitelistLoop = simple({
  name: "phone_whitelist_loop",
  ttl: "30 seconds",
  every: "10 seconds",
  kickedBy: ["shooter_phone", "shooter_device"],
  pass: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const kicks = yield* Kicks
    let moved = 0
    while (true) {
      // An SMS an operator has already judged (check_result set) is not ours to move.
      const rows = yield* sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{ id: bigint }>`
          WITH held AS (
            SELECT s.id FROM recon.shooter_sms AS s
            JOIN recon.shooter_phone AS p ON p.phone = s.sender_normalized
            JOIN recon.shooter_device AS d ON d.device_id = s.device_id AND d.trusted
            WHERE s.status = 'need_check' AND s.check_result IS NULL
            ORDER BY s.id LIMIT ${BATCH}
            FOR UPDATE OF s SKIP LOCKED)
          UPDATE recon.shooter_sms AS s SET status = 'received', updated_at = now()
          FROM held WHERE s.id = held.id
          RETURNING s.id`
        if (rows.length > 0) yield* sql`SELECT pg_notify(${CHANGES_CHANNEL}, 'shooter_sms')`
        yield* reportSmsChanges(sql, rows.map((row) => ({ id: Number(row.id), status: "received" })))
        return rows
      }))
      moved += rows.length
      if (rows.length < BATCH) break
    }
    if (moved > 0) {
      yield* Effect.logInfo(`${moved} need_check SMS moved on: sender whitelisted and device trusted`)
      yield* kicks.kick("parse_loop")
    }
  })
})
