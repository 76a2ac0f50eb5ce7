// sms_id_sync_loop: keeps shooter_device's last_seen_at and sms_count current, and every
// duplicate_of link pointing at the original (not at another copy) when copies arrive out of order.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { simple } from "./Loop.ts"

const CURSOR = "sms_id_sync_loop.since"

export const SmsIdSyncLoop = simple({
  name: "sms_id_sync_loop",
  ttl: "30 seconds",
  every: "10 seconds",
  kickedBy: ["shooter_sms"],
  pass: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      // One process at a time; the others' passes have nothing to add.
      const [lock] = yield* sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended('recon.sms_id_sync_loop', 0)) AS locked`
      if (lock?.locked !== true) return
      const [cursor] = yield* sql<{ value: string }>`SELECT value FROM recon.worker_cursor WHERE name = ${CURSOR}`
      const since = cursor === undefined ? new Date(0) : new Date(cursor.value)
      const [now] = yield* sql<{ at: Date }>`SELECT now() AS at`
      // Recount the devices that received SMS since the last pass (2 minutes of overlap: an SMS
      // becomes visible at its commit, a moment after its created_at), exactly, not incrementally.
      yield* sql`
        UPDATE recon.shooter_device AS d SET sms_count = c.n, last_seen_at = c.last_at
        FROM (
          SELECT device_id, count(*) AS n, max(received_at) AS last_at FROM recon.shooter_sms
          WHERE device_id IN (SELECT DISTINCT device_id FROM recon.shooter_sms
                              WHERE created_at > ${since}::timestamptz - interval '2 minutes')
          GROUP BY device_id
        ) AS c
        WHERE d.device_id = c.device_id AND (d.sms_count, d.last_seen_at) IS DISTINCT FROM (c.n, c.last_at)`
      // A copy marked as the duplicate of another copy points at that copy's original instead.
      while (true) {
        const relinked = yield* sql`
          UPDATE recon.shooter_sms AS copy SET duplicate_of = o.duplicate_of, updated_at = now()
          FROM recon.shooter_sms AS o
          WHERE copy.duplicate_of = o.id AND o.status = 'duplicate' AND o.duplicate_of IS NOT NULL
            AND o.duplicate_of <> copy.id
          RETURNING copy.id`
        if (relinked.length === 0) break
        yield* Effect.logInfo(`${relinked.length} duplicate links pointed at their original`)
      }
      yield* sql`INSERT INTO recon.worker_cursor (name, value, updated_at) VALUES (${CURSOR}, ${now!.at.toISOString()}, now())
        ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = now()`
    }))
  })
})
