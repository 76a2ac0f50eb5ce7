// The queries of pushsvc_listener_supervisor: the enabled registrations, each listener's status
// and last_event_at, and the session advisory locks that keep a registration's listener in one
// worker process at a time (held on one reserved connection, the session).
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { sqlFailures } from "../db/Codecs.ts"

const lockKey = "hashtextextended('recon.listener:' || $1, 0)"

/** The reserved connection holding this process's listener locks. */
export interface ListenerSession {
  /** True when this process now holds the device's lock (false: another process runs its listener). */
  tryLock(deviceId: string): Effect.Effect<boolean, SqlError.SqlError>
  unlock(deviceId: string): Effect.Effect<void, SqlError.SqlError>
  /** Every lock of the session let go, before the connection goes back to the pool. */
  unlockAll(): Effect.Effect<void, SqlError.SqlError>
}

export class ListenerStore extends Context.Service<ListenerStore, {
  /** The enabled registrations' devices, in order. */
  enabledDevices(): Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
  /** A connection reserved until the scope closes, for the session's locks. */
  session(): Effect.Effect<ListenerSession, SqlError.SqlError, Scope.Scope>
  /** The registration's listener started (if it is still enabled). */
  markListening(deviceId: string): Effect.Effect<void, SqlError.SqlError>
  /** `last_event_at` moved up to the newest SMS stored for the device (by any process). */
  touch(deviceId: string): Effect.Effect<void, SqlError.SqlError>
  markStopped(deviceId: string): Effect.Effect<void, SqlError.SqlError>
  /** Disabled registrations not yet marked stopped, marked. */
  markDisabledStopped(): Effect.Effect<void, SqlError.SqlError>
}>()("recon/loops/ListenerStore") {
  static readonly layer = Layer.effect(ListenerStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const enabled = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ device_id: Schema.String }),
      execute: () => sql`SELECT device_id FROM recon.shooter_push WHERE enabled ORDER BY device_id`
    })

    const session = Effect.fn("ListenerStore.session")(function*() {
      const connection = yield* sql.reserve
      return {
        tryLock: Effect.fn("ListenerStore.tryLock")(function*(deviceId: string) {
          const [row] = yield* connection.execute(`SELECT pg_try_advisory_lock(${lockKey}) AS locked`, [deviceId], undefined)
          return row?.locked === true
        }),
        unlock: Effect.fn("ListenerStore.unlock")(function*(deviceId: string) {
          yield* connection.executeRaw(`SELECT pg_advisory_unlock(${lockKey})`, [deviceId])
        }),
        unlockAll: Effect.fn("ListenerStore.unlockAll")(function*() {
          yield* connection.executeRaw("SELECT pg_advisory_unlock_all()", [])
        })
      }
    })

    return ListenerStore.of({
      enabledDevices: Effect.fn("ListenerStore.enabledDevices")(function*() {
        return (yield* sqlFailures(enabled(undefined))).map((row) => row.device_id)
      }),
      session,
      markListening: Effect.fn("ListenerStore.markListening")(function*(deviceId: string) {
        yield* sql`UPDATE recon.shooter_push SET listener_status = 'listening'
      WHERE device_id = ${deviceId} AND enabled AND listener_status <> 'listening'`
      }),
      touch: Effect.fn("ListenerStore.touch")(function*(deviceId: string) {
        yield* sql`UPDATE recon.shooter_push AS p SET last_event_at = s.at, listener_status = 'listening'
        FROM (SELECT max(created_at) AS at FROM recon.shooter_sms WHERE device_id = ${deviceId}) AS s
        WHERE p.device_id = ${deviceId} AND s.at IS NOT NULL AND (p.last_event_at IS NULL OR p.last_event_at < s.at)`
      }),
      markStopped: Effect.fn("ListenerStore.markStopped")(function*(deviceId: string) {
        yield* sql`UPDATE recon.shooter_push SET listener_status = 'stopped' WHERE device_id = ${deviceId}`
      }),
      markDisabledStopped: Effect.fn("ListenerStore.markDisabledStopped")(function*() {
        yield* sql`UPDATE recon.shooter_push SET listener_status = 'stopped' WHERE NOT enabled AND listener_status <> 'stopped'`
      })
    })
  }))
}
