// pushsvc_listener_supervisor: one listener actor per enabled push registration, kept in step with
// the table; a registration's listener runs in one worker process at a time (session advisory lock).
import { Duration, Effect, Exit, Scope } from "effect"
import { SqlClient, type SqlConnection } from "effect/sql"
import * as DynamicSupervisor from "../../actors/DynamicSupervisor.ts"
import type { Loop } from "./Loop.ts"

/** How often a listener refreshes its registration's `last_event_at` from the stored SMS. */
export const LISTENER_TICK = Duration.seconds(5)

const lockKey = "hashtextextended('recon.listener:' || $1, 0)"

/**
 * One registration's listener: marks it `listening`, keeps `last_event_at` at the newest SMS the
 * push endpoint stored for the device (any process may store them), and marks it `stopped` when
 * it is stopped. A database error ends it; the next reconcile starts it again.
 */
const listener = (sql: SqlClient.SqlClient, deviceId: string) =>
  Effect.gen(function*() {
    yield* sql`UPDATE recon.shooter_push SET listener_status = 'listening'
      WHERE device_id = ${deviceId} AND enabled AND listener_status <> 'listening'`
    yield* Effect.logInfo(`listener for ${deviceId} started`)
    while (true) {
      yield* sql`UPDATE recon.shooter_push AS p SET last_event_at = s.at, listener_status = 'listening'
        FROM (SELECT max(created_at) AS at FROM recon.shooter_sms WHERE device_id = ${deviceId}) AS s
        WHERE p.device_id = ${deviceId} AND s.at IS NOT NULL AND (p.last_event_at IS NULL OR p.last_event_at < s.at)`
      yield* Effect.sleep(LISTENER_TICK)
    }
  }).pipe(
    Effect.onInterrupt(() =>
      sql`UPDATE recon.shooter_push SET listener_status = 'stopped' WHERE device_id = ${deviceId}`.pipe(Effect.ignore)
    ),
    Effect.annotateLogs({ device_id: deviceId })
  )

export const PushsvcListenerSupervisor: Loop = {
  name: "pushsvc_listener_supervisor",
  ttl: "20 seconds",
  every: "5 seconds",
  kickedBy: ["shooter_push", "shooter_device"],
  start: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listeners = yield* DynamicSupervisor.make({ run: (deviceId: string) => listener(sql, deviceId), isSame: () => true })

    // The session that holds this process's listener locks: one reserved connection, kept
    // between passes; losing it loses the locks, so every listener stops with it.
    let session: { readonly scope: Scope.Closeable; readonly connection: SqlConnection.Connection } | undefined
    const held = new Set<string>()
    const connect = Effect.gen(function*() {
      if (session !== undefined) return session.connection
      const scope = yield* Scope.make()
      const connection = yield* Scope.provide(sql.reserve, scope).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
      session = { scope, connection }
      return connection
    })
    const disconnect = Effect.gen(function*() {
      held.clear()
      yield* listeners.reconcile(new Map())
      if (session === undefined) return
      const { scope, connection } = session
      session = undefined
      // The connection goes back to the pool: it must not take our locks with it.
      yield* connection.executeRaw("SELECT pg_advisory_unlock_all()", []).pipe(Effect.timeout("2 seconds"), Effect.ignore)
      yield* Scope.close(scope, Exit.void)
    })
    yield* Effect.addFinalizer(() => disconnect)

    const pass = Effect.gen(function*() {
      const rows = yield* sql<{ device_id: string }>`SELECT device_id FROM recon.shooter_push WHERE enabled ORDER BY device_id`
      const wanted = new Set(rows.map((row) => row.device_id))
      const connection = yield* connect
      for (const deviceId of [...held]) {
        if (wanted.has(deviceId)) continue
        yield* connection.executeRaw(`SELECT pg_advisory_unlock(${lockKey})`, [deviceId])
        held.delete(deviceId)
      }
      for (const deviceId of wanted) {
        if (held.has(deviceId)) continue
        const [row] = yield* connection.execute(`SELECT pg_try_advisory_lock(${lockKey}) AS locked`, [deviceId], undefined)
        // Not locked: another worker process runs this listener.
        if (row?.locked === true) held.add(deviceId)
      }
      const result = yield* listeners.reconcile(new Map([...held].map((deviceId) => [deviceId, deviceId])))
      if (result.restarted.length > 0) yield* Effect.logWarning(`listeners restarted: ${result.restarted.join(", ")}`)
      if (result.stopped.length > 0) yield* Effect.logInfo(`listeners stopped: ${result.stopped.join(", ")}`)
      yield* sql`UPDATE recon.shooter_push SET listener_status = 'stopped' WHERE NOT enabled AND listener_status <> 'stopped'`
    }).pipe(Effect.onError(() => disconnect))
    return pass
  })
}
