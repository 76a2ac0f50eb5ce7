// What the /ws/top-info clients receive and when: a fresh snapshot on connect, on every sync and
// every 10 s. Syncs that arrive while a read is running share the next read, so a burst of them
// costs two reads, and each caller still gets counters read after it asked.
import { Context, DateTime, Deferred, Duration, Effect, Exit, Layer, Schedule } from "effect"
import * as Supervisor from "../actors/Supervisor.ts"
import type { SqlError } from "effect/sql"
import { dieUnlessAway } from "../db/Database.ts"
import { DATABASE_AWAY } from "../api/Envelope.ts"
import { type Connection, makeClientHub, type Message } from "./ClientHub.ts"
import { TopInfo } from "./TopInfo.ts"

export const TICK = Duration.seconds(10)

type Refreshed = Deferred.Deferred<number, SqlError.SqlError>

const make = Effect.gen(function*() {
  const topInfo = yield* TopInfo
  const scope = yield* Effect.scope
  const hub = makeClientHub()

  let seq = 0
  /** One read as the message every client gets: `top-info`, or `unavailable` while the database is away. */
  const snapshot = Effect.gen(function*() {
    const message = { seq: ++seq }
    const read = yield* Effect.result(dieUnlessAway(topInfo.read))
    const at = DateTime.formatIso(yield* DateTime.now)
    return read._tag === "Success"
      ? { message: { ...message, text: JSON.stringify({ type: "top-info", data: read.success, at }) }, failure: undefined }
      : {
        message: { ...message, text: JSON.stringify({ type: "unavailable", detail: DATABASE_AWAY, at }) },
        failure: read.failure
      }
  })

  let running: Refreshed | undefined
  let queued: Refreshed | undefined
  const run = (done: Refreshed): Effect.Effect<void> =>
    snapshot.pipe(
      Effect.flatMap(({ failure, message }) =>
        Effect.map(hub.broadcast(message), (clients) => failure === undefined ? Exit.succeed(clients) : Exit.fail(failure))
      ),
      Effect.flatMap((exit) => Deferred.done(done, exit)),
      // A defect reaches the callers waiting (not the scope): the refresh itself never fails.
      Effect.catchCause((cause) => Deferred.failCause(done, cause)),
      Effect.asVoid,
      Effect.ensuring(Effect.suspend(() => {
        // The queued refresh starts only now, so it reads after every caller that joined it.
        running = queued
        queued = undefined
        return running === undefined ? Effect.void : Effect.asVoid(refreshing(running))
      }))
    )
  // Off the caller's fiber, so a caller that goes away cancels nobody's refresh.
  const refreshing = (done: Refreshed) => Supervisor.fork({ name: "top-info refresh", answer: "restart", lifetime: "task", scope }, run(done))
  const refresh: Effect.Effect<number, SqlError.SqlError> = Effect.suspend(() => {
    if (running === undefined) {
      const done = (running = Deferred.makeUnsafe())
      return Effect.andThen(refreshing(done), Deferred.await(done))
    }
    queued ??= Deferred.makeUnsafe()
    return Deferred.await(queued)
  })

  // The periodic push; nobody connected, nothing read. A database outage is already in the
  // message the clients get; a defect is logged, and the next tick comes all the same.
  const tick = refresh.pipe(Effect.ignore, Effect.catchDefect((defect) => Effect.logError("top-info push failed", defect)))
  yield* Effect.suspend(() => hub.size() > 0 ? tick : Effect.void).pipe(
    Effect.repeat(Schedule.spaced(TICK)),
    (tick) => Supervisor.fork({ name: "top-info tick", answer: "restart" }, tick)
  )

  return {
    sync: refresh,
    closeAll: hub.closeAll,
    serve: (connection: Connection, reading: Effect.Effect<void>) =>
      hub.serve(connection, Effect.map(snapshot, (s): Message => s.message), reading)
  }
})

export class TopInfoFeed extends Context.Service<TopInfoFeed, Effect.Success<typeof make>>()("recon/admin/TopInfoFeed") {
  static readonly layer = Layer.effect(TopInfoFeed, make)
}
