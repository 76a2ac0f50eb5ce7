// sms_id_sync_loop: keeps shooter_device's last_seen_at and sms_count current, and every
// duplicate_of link pointing at the original (not at another copy) when copies arrive out of order.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { DeviceSyncStore } from "./DeviceSyncStore.ts"
import { simple } from "./Loop.ts"

export const SmsIdSyncLoop = simple({
  name: "sms_id_sync_loop",
  ttl: "30 seconds",
  every: "10 seconds",
  kickedBy: ["shooter_sms"],
  pass: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* DeviceSyncStore
    yield* sql.withTransaction(Effect.gen(function*() {
      // One process at a time; the others' passes have nothing to add.
      if (!(yield* store.trySyncLock())) return
      const since = yield* store.syncedSince()
      const now = yield* store.now()
      yield* store.recountDevices(since)
      while (true) {
        const relinked = yield* store.relinkDuplicates()
        if (relinked === 0) break
        yield* Effect.logInfo(`${relinked} duplicate links pointed at their original`)
      }
      yield* store.markSynced(now)
    }))
  })
})
