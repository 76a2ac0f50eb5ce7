// pushsvc_listener_supervisor: one listener actor per enabled push registration, kept in step with
// the table; a registration's listener runs in one worker process at a time (session advisory lock).
import { Duration, Effect, Exit, Scope } from "effect"
import * as DynamicSupervisor from "../actors/DynamicSupervisor.ts"
import { type ListenerSession, ListenerStore } from "./ListenerStore.ts"
import type { Loop } from "./Loop.ts"

/** How often a listener refreshes its registration's `last_event_at` from the stored SMS. */
export const LISTENER_TICK = Duration.seconds(5)

/**
 * One registration's listener: marks it `listening`, keeps `last_event_at` at the newest SMS the
 * push endpoint stored for the device (any process may store them), and marks it `stopped` when
 * it is stopped. A database error ends it; the next reconcile starts it again.
 */
const listener = (store: ListenerStore["Service"], deviceId: string) =>
  Effect.gen(function*() {
    yield* store.markListening(deviceId)
    yield* Effect.logInfo(`listener for ${deviceId} started`)
    while (true) {
      yield* store.touch(deviceId)
      yield* Effect.sleep(LISTENER_TICK)
    }
  }).pipe(
    Effect.onInterrupt(() => store.markStopped(deviceId).pipe(Effect.ignore)),
    Effect.annotateLogs({ device_id: deviceId })
  )

/**
 * The session that holds this process's listener locks: one reserved connection, kept between
 * passes; losing it loses the locks, so every listener stops with it (`stopAll`).
 */
const lockSession = (store: ListenerStore["Service"], stopAll: Effect.Effect<unknown>) =>
  Effect.gen(function*() {
    let session: { readonly scope: Scope.Closeable; readonly locks: ListenerSession } | undefined
    const held = new Set<string>()
    const connect = Effect.gen(function*() {
      if (session !== undefined) return session.locks
      const scope = yield* Scope.make()
      const locks = yield* Scope.provide(store.session(), scope).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
      session = { scope, locks }
      return locks
    })
    const disconnect = Effect.gen(function*() {
      held.clear()
      yield* stopAll
      if (session === undefined) return
      const { locks, scope } = session
      session = undefined
      // The connection goes back to the pool: it must not take our locks with it.
      yield* locks.unlockAll().pipe(Effect.timeout("2 seconds"), Effect.ignore)
      yield* Scope.close(scope, Exit.void)
    })
    yield* Effect.addFinalizer(() => disconnect)

    /** The locks of the `wanted` devices this process can take, and no others; answers those held. */
    const holdOnly = (wanted: ReadonlySet<string>) =>
      Effect.gen(function*() {
        const locks = yield* connect
        for (const deviceId of [...held]) {
          if (wanted.has(deviceId)) continue
          yield* locks.unlock(deviceId)
          held.delete(deviceId)
        }
        for (const deviceId of wanted) {
          if (held.has(deviceId)) continue
          // Not locked: another worker process runs this listener.
          if (yield* locks.tryLock(deviceId)) held.add(deviceId)
        }
        return [...held]
      })
    return { holdOnly, disconnect }
  })

export const PushsvcListenerSupervisor: Loop = {
  name: "pushsvc_listener_supervisor",
  ttl: "20 seconds",
  every: "5 seconds",
  kickedBy: ["shooter_push", "shooter_device"],
  start: Effect.gen(function*() {
    const store = yield* ListenerStore
    const listeners = yield* DynamicSupervisor.make({ run: (deviceId: string) => listener(store, deviceId), isSame: () => true })
    const locks = yield* lockSession(store, listeners.reconcile(new Map()))

    return Effect.gen(function*() {
      const held = yield* locks.holdOnly(new Set(yield* store.enabledDevices()))
      const result = yield* listeners.reconcile(new Map(held.map((deviceId) => [deviceId, deviceId])))
      if (result.restarted.length > 0) yield* Effect.logWarning(`listeners restarted: ${result.restarted.join(", ")}`)
      if (result.stopped.length > 0) yield* Effect.logInfo(`listeners stopped: ${result.stopped.join(", ")}`)
      yield* store.markDisabledStopped()
    }).pipe(Effect.onError(() => locks.disconnect))
  })
}
