// webhook_delivery_loop (DESIGN section 11): the events the database wrote for the merchants'
// webhooks (migration 0014's outbox), delivered at least once, the same event id on every attempt.
// A pass claims due deliveries (SKIP LOCKED, leased, several workers share them) up to the free
// slots and starts each request in a fiber of its own; the pass never waits for a receiver. So a
// slow receiver holds at most PER_WEBHOOK slots for at most the request's time limit, never
// another receiver's deliveries and never the money path (its own loop, its own rows). Each
// finished request records its attempt (the retry time with it) and kicks the loop for more.
import { Cause, Clock, Duration, Effect } from "effect"
import * as Supervisor from "../actors/Supervisor.ts"
import { makeSender, REQUEST_TIMEOUT } from "../clients/WebhookClient.ts"
import { type Claimed, type Deliveries, deliveries } from "../db/WebhookStore.ts"
import { afterAttempt, type AttemptStatus } from "../domain/Webhooks.ts"
import { Kicks, type Loop } from "./Loop.ts"

/** Requests in flight at once in this process. */
export const CONCURRENCY = 16
/** Requests in flight at once to one webhook in this process. */
export const PER_WEBHOOK = 4
/** A claimed delivery is this process's until then: past the request's time limit, so only a dead process's is taken over. */
export const LEASE = Duration.sum(REQUEST_TIMEOUT, Duration.seconds(5))

/** One log line per change of a webhook's state (failing or answering), the rest at debug. */
const makeReport = () => {
  // Whether each webhook's last attempt failed.
  const failing = new Map<number, boolean>()
  return (d: Claimed, status: AttemptStatus, error: string | null) => {
    const wasFailing = failing.get(d.webhook_id) ?? false
    failing.set(d.webhook_id, status !== "delivered")
    if (status === "failed") {
      return Effect.logWarning(`event ${d.event_id} (${d.type}) to webhook ${d.webhook_id} given up after 24 h of retries: ${error}`)
    }
    if (status === "retrying" && !wasFailing) {
      return Effect.logWarning(`webhook ${d.webhook_id} failed: ${error}; its deliveries are retried with backoff (10 s doubling, at most 1 h, for 24 h)`)
    }
    if (status === "delivered" && wasFailing) return Effect.logInfo(`webhook ${d.webhook_id} answers again`)
    return Effect.logDebug(`event ${d.event_id} (${d.type}) to webhook ${d.webhook_id}: ${status}${error === null ? "" : ` (${error})`}`)
  }
}

/** The requests in flight in this process, in all and by webhook. */
const makeSlots = () => {
  const busy = new Map<number, number>()
  let inFlight = 0
  return {
    busy,
    free: () => CONCURRENCY - inFlight,
    take: (d: Claimed) => {
      inFlight++
      busy.set(d.webhook_id, (busy.get(d.webhook_id) ?? 0) + 1)
    },
    give: (d: Claimed) => {
      inFlight--
      const n = (busy.get(d.webhook_id) ?? 1) - 1
      if (n <= 0) busy.delete(d.webhook_id)
      else busy.set(d.webhook_id, n)
    }
  }
}

/** One delivery's request and its attempt recorded; its slot given back and the loop kicked for more. */
const deliver = (
  store: Deliveries,
  sender: Effect.Success<typeof makeSender>,
  report: ReturnType<typeof makeReport>,
  done: (d: Claimed) => Effect.Effect<void>
) => (d: Claimed) =>
  Effect.gen(function*() {
    const outcome = yield* sender.send({ url: d.url, secret: d.secret }, { id: d.event_id, type: d.type, created_at: d.created_at, data: d.data })
    const now = yield* Clock.currentTimeMillis
    const attempt = d.attempts + 1
    const next = afterAttempt({ delivered: outcome.delivered, attempt, firstAttemptAt: d.first_attempt_at.getTime(), now })
    const recorded = yield* store.record({
      deliveryId: d.id,
      attempt,
      status: next.status,
      httpStatus: outcome.httpStatus,
      error: outcome.error,
      at: new Date(now),
      nextAt: next.nextAt === null ? null : new Date(next.nextAt)
    })
    if (recorded) yield* report(d, next.status, outcome.error)
  }).pipe(
    // Interrupted mid-request (the loop stopping): due again at once; the receiver may see it twice.
    Effect.onInterrupt(() => store.release([d.id]).pipe(Effect.timeout("2 seconds"), Effect.ignore)),
    // The attempt could not be recorded (the database away): the lease runs out and it is sent again.
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logWarning(`delivery ${d.id} of event ${d.event_id}: attempt not recorded`, cause)
    ),
    Effect.ensuring(done(d))
  )

export const WebhookDeliveryLoop: Loop = {
  name: "webhook_delivery_loop",
  ttl: "60 seconds",
  every: "5 seconds",
  // recon.emit_event NOTIFYs once an event's transaction commits.
  kickedBy: ["webhook_delivery"],
  start: Effect.gen(function*() {
    const store = yield* deliveries
    const kicks = yield* Kicks
    const slots = makeSlots()
    const send = deliver(store, yield* makeSender, makeReport(), (d) =>
      Effect.sync(() => slots.give(d)).pipe(Effect.andThen(kicks.kick("webhook_delivery_loop"))))
    const scope = yield* Effect.scope
    const loop = yield* Effect.fiber

    return Effect.gen(function*() {
      const free = slots.free()
      if (free <= 0) return
      const now = yield* Clock.currentTimeMillis
      const claimed = yield* store.claim({
        now: new Date(now),
        leaseUntil: new Date(now + Duration.toMillis(LEASE)),
        limit: free,
        perWebhook: PER_WEBHOOK,
        busy: slots.busy
      })
      for (const d of claimed) {
        slots.take(d)
        yield* Supervisor.fork({ name: `webhook delivery ${d.id}`, answer: { endsOwner: loop }, lifetime: "task", scope }, send(d))
      }
    })
  })
}
