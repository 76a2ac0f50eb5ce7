// The worker's heartbeat file: the health snapshot as JSON, replaced atomically every few seconds
// and at once whenever readiness changes, for `probe` (and, as the same JSON, `GET /health/ready`).
import { DateTime, Duration, Effect, FileSystem, Layer, Option, Stream } from "effect"
import { Components } from "./Components.ts"
import { HeartbeatJson } from "../domain/HeartbeatJson.ts"
import { HealthRegistry } from "./HealthRegistry.ts"
import type { HealthSnapshot } from "./HealthRegistry.ts"
import { isStopping, onStopping } from "./Stopping.ts"
import { renameSync, writeFileSync } from "node:fs"

export const defaultPath = "/tmp/recon-worker.heartbeat"

/** The contract's JSON for a snapshot; `written_at` is the snapshot's time. */
export const toHeartbeatJson = (snapshot: HealthSnapshot, pid: number = process.pid): HeartbeatJson => ({
  ready: snapshot.ready,
  pid,
  written_at: DateTime.formatIso(snapshot.at),
  loops: Object.fromEntries(snapshot.loops.map((loop) => [loop.name, {
    state: loop.state,
    last_success_at: Option.match(loop.lastSuccessAt, { onNone: () => null, onSome: DateTime.formatIso }),
    ttl_s: Duration.toSeconds(loop.ttl),
    fresh: loop.fresh,
    restarts: loop.restarts
  }])),
  ...(snapshot.components === undefined || snapshot.components.length === 0 ? {} : {
    components: Object.fromEntries(snapshot.components.map((component) => [component.name, {
      state: component.state,
      restarts: component.restarts,
      ...(component.work === undefined ? {} : {
        waiting: component.work.waiting,
        stale_after_s: Duration.toSeconds(component.work.staleAfter),
        last_progress_at: Option.match(component.work.lastProgressAt, { onNone: () => null, onSome: DateTime.formatIso })
      })
    }]))
  })
})

/** Write-then-rename in the same directory, so a reader never sees a half-written file. */
export const writeAtomically = Effect.fnUntraced(function*(path: string, text: string) {
  const fs = yield* FileSystem.FileSystem
  const temp = `${path}.${process.pid}.tmp`
  yield* fs.writeFileString(temp, text)
  yield* fs.rename(temp, path).pipe(Effect.tapError(() => Effect.ignore(fs.remove(temp, { force: true }))))
})

export interface HeartbeatOptions {
  /** The lead passes SVC_WORKER_HEARTBEAT_FILE here. */
  readonly path?: string | undefined
  readonly every?: Duration.Input | undefined
}

/** Writes the heartbeat at start, every `every` (5 s) and on each readiness change; never returns. */
export const run = Effect.fnUntraced(function*(options: HeartbeatOptions = {}) {
  const registry = yield* HealthRegistry
  const path = options.path ?? defaultPath
  let last: HeartbeatJson | undefined
  // At the stop signal, before any other step of the shutdown: written synchronously, so neither
  // the teardown's order nor a forced exit can skip it.
  const writeStoppedNow = () => {
    const json = { ...(last ?? { pid: process.pid, loops: {} }), ready: false, written_at: new Date().toISOString() }
    const temp = `${path}.${process.pid}.stop.tmp`
    writeFileSync(temp, JSON.stringify(json))
    renameSync(temp, path)
  }
  const writeWith = (ready: (snapshot: HealthSnapshot) => boolean) => registry.snapshot.pipe(
    Effect.flatMap((snapshot) => {
      const json = toHeartbeatJson({ ...snapshot, ready: ready(snapshot) && !isStopping() })
      last = json
      // A write begun before the signal must not leave `ready: true` behind after it.
      return writeAtomically(path, JSON.stringify(json)).pipe(Effect.tap(() => json.ready && isStopping() ? Effect.sync(writeStoppedNow) : Effect.void))
    }),
    // A failed write is retried on the next tick; the file going old is what makes the probe fail.
    Effect.catch((error) => Effect.logWarning(`heartbeat write to ${path} failed`, error))
  )
  const write = writeWith((snapshot) => snapshot.ready)
  // Both sources fire at start (the readiness stream replays its current value): one extra write
  // is cheaper than a window where a change could slip between the first write and the subscription.
  const triggers = Stream.tick(options.every ?? "5 seconds").pipe(Stream.merge(registry.readiness))
  // One consumer: writes never overlap, so they can share the temp file.
  // A stopping worker says so at once, rather than passing the probe until the file is 15 s old.
  yield* Effect.scoped(Effect.andThen(
    onStopping(() => writeStoppedNow()),
    Stream.runForEach(triggers, () => write).pipe(Effect.ensuring(writeWith(() => false)))
  ))
  return yield* Effect.never
})

/** The heartbeat writer as the worker's component `heartbeat_writer`: restarted, and readiness false while it is down. */
export const layer = (options: HeartbeatOptions = {}): Layer.Layer<never, never, HealthRegistry | Components | FileSystem.FileSystem> =>
  Layer.effectDiscard(Components.use((components) => components.run("heartbeat_writer", run(options))))
