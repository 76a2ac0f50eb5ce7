// What the console shows beside the counters, live: the queues' counts, the newest SMS and marks
// of what the open view depends on (pending deposits, requests for a second approval), as
// `activity` messages to the websocket clients that ask for them (`/ws/top-info?with=activity`):
// a client re-reads the page it shows when one arrives. Sent on connect, after every decision taken
// here and on every sync, and whenever a poll (every 2 s, only while someone watches) finds them
// changed: the worker's own status changes (parsed, approving, approved) reach no other signal. A
// change also refreshes top-info, so the counters move with it.
import { Context, DateTime, Duration, Effect, Layer, Schedule } from "effect"
import * as Supervisor from "../actors/Supervisor.ts"
import { ReviewStore } from "./ReviewStore.ts"
import { dieUnlessAway } from "../db/Database.ts"
import { DATABASE_AWAY } from "../api/Envelope.ts"
import { type Connection, makeClientHub, type Message } from "./ClientHub.ts"
import { TopInfoFeed } from "./TopInfoFeed.ts"

export const POLL = Duration.seconds(2)
/** The newest SMS an activity message carries. */
export const LATEST_SMS = 20

const make = Effect.gen(function*() {
  const store = yield* ReviewStore
  const topInfo = yield* TopInfoFeed
  const hub = makeClientHub()

  let seq = 0
  /** The data of the newest message read, to tell a change. */
  let last: string | undefined

  const read: Effect.Effect<{ readonly message: Message; readonly data: string | undefined }> = Effect.gen(function*() {
    const message = { seq: ++seq }
    const read = yield* Effect.result(dieUnlessAway(store.activity(LATEST_SMS)))
    const at = DateTime.formatIso(yield* DateTime.now)
    if (read._tag === "Failure") {
      return { message: { ...message, text: JSON.stringify({ type: "activity-unavailable", detail: DATABASE_AWAY, at }) }, data: undefined }
    }
    // The times an SMS has waited change every second: the client counts them from received_at.
    const { counts, latest, marks } = read.success
    const data = JSON.stringify({ counts, latest: latest.map(({ received_ms: _, ...sms }) => sms), marks })
    return { message: { ...message, text: `{"type":"activity","data":${data},"at":${JSON.stringify(at)}}` }, data }
  })

  /**
   * Reads and sends, to the clients there are. `poll`: only when something changed, and then the
   * counters too; otherwise always (a decision was just taken, and its caller refreshes top-info).
   */
  const push = (poll: boolean) =>
    Effect.suspend(() => hub.size() === 0 ? Effect.void : Effect.gen(function*() {
      const { data, message } = yield* read
      // `last` is what every client has seen since it connected (clients that joined since got newer);
      // the database being away is said once, not every poll.
      const key = data ?? "unavailable"
      const changed = key !== last
      const first = last === undefined
      last = key
      if (!poll || changed) yield* hub.broadcast(message)
      if (poll && changed && !first && data !== undefined) yield* Effect.ignore(topInfo.sync)
    }))

  yield* push(true).pipe(
    Effect.catchDefect((defect) => Effect.logError("activity push failed", defect)),
    Effect.repeat(Schedule.spaced(POLL)),
    (poll) => Supervisor.fork({ name: "activity poll", answer: "restart" }, poll)
  )

  return {
    /** Sends fresh activity to every client now. */
    refresh: push(false),
    serve: (connection: Connection, reading: Effect.Effect<void>) =>
      hub.serve(connection, Effect.map(read, (r) => r.message), reading)
  }
})

export class ActivityFeed extends Context.Service<ActivityFeed, Effect.Success<typeof make>>()("recon/admin/ActivityFeed") {
  static readonly layer = Layer.effect(ActivityFeed, make)
}
