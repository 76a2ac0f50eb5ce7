// The moment a signal asks the process to stop. What must come before any other step of the
// shutdown (readiness false in the heartbeat file, the servers closing their doors) runs here,
// synchronously from the signal handler, so no teardown order or forced exit can delay or skip it.
import { Effect } from "effect"

const callbacks = new Set<() => void>()
let stopping = false

/** Called once by the runner at SIGTERM/SIGINT, before the program is interrupted. */
export const beginStopping = (): void => {
  if (stopping) return
  stopping = true
  for (const callback of [...callbacks]) {
    try {
      callback()
    } catch (error) {
      process.stderr.write(`stopping: ${String(error)}\n`)
    }
  }
}

/** True once a signal asked the process to stop. */
export const isStopping = (): boolean => stopping

/** Runs `callback` when the process starts stopping (at once if it has), while the scope is open. */
export const onStopping = (callback: () => void) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      callbacks.add(callback)
      if (stopping) callback()
    }),
    () => Effect.sync(() => callbacks.delete(callback))
  )
