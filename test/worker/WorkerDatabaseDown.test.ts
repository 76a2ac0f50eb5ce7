// PostgreSQL stopped for longer than the loops' TTLs under a running worker: readiness goes false,
// webhooks are refused (never acknowledged), and once the server is back everything recovers
// without a restart and no SMS is lost. On the run's outage cluster (test/support/outage.ts), which
// it may stop.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import { join } from "node:path"
import { type OutageCluster, takeOutageCluster } from "../support/outage.ts"
import type { Running } from "../support/recon.ts"
import { eventually, realWait } from "../support/time.ts"
import { buildWorker, pushForwarder, register, smsRows, startPushServer } from "../support/worker.ts"

let cluster: OutageCluster
let db: string
let push: Running

beforeAll(async () => {
  cluster = await takeOutageCluster("down")
  db = cluster.url
  await register(db, { deviceId: "down-1", format: "smsforwarder" })
  push = await startPushServer(db)
})
afterAll(async () => {
  await push.close()
  await cluster.release()
})

const sms = (i: number) => `[Web발신]\n우리 11/22 13:${String(i).padStart(2, "0")}\n입금 ${30_000 + i}원\n이영희\n잔액 ${7_000_000 + i}`

describe("the database goes away", () => {
  it.effect("readiness false past the TTL, webhooks refused, then recovery without a restart and nothing lost", () =>
    Effect.gen(function*() {
      const { registry, fatal } = yield* buildWorker(db, join(cluster.dir, "worker.heartbeat"))
      yield* eventually("ready", registry.ready)
      const stamp = Date.now()
      const send = (i: number) => Effect.promise(() => pushForwarder(push.url, "down-1", { from: "15885000", sms: sms(i), timestamp: stamp + i }))
      const before = yield* Effect.forEach([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], send)
      assert.isTrue(before.every((answer) => answer.http === 200))

      yield* Effect.promise(() => cluster.stop())
      const during = yield* Effect.forEach([10, 11, 12, 13, 14], send)
      // Refused, so the forwarder keeps it and retries: never a 200 for an SMS that is not stored.
      assert.isTrue(during.every((answer) => answer.http === 503), JSON.stringify(during.map((a) => a.http)))
      assert.isTrue(during.every((answer) => answer.body.msg === "unavailable"))

      // Longer than the longest TTL (30 s here), in steps so the failing passes really run.
      for (let second = 0; second < 32; second++) {
        yield* TestClock.adjust("1 second")
        yield* realWait(15)
      }
      assert.isFalse(yield* registry.ready)
      // Every loop that needs the database and whose TTL has passed is stale.
      const loops = (yield* registry.snapshot).loops
      const shortLived = loops.filter((loop) => Duration.toSeconds(loop.ttl) <= 30 && loop.name !== "chatbot_poll_loop")
      assert.isTrue(shortLived.length >= 3 && shortLived.every((loop) => loop.state === "stale"), JSON.stringify(loops.map((l) => [l.name, l.state])))

      yield* Effect.promise(() => cluster.start())
      // The loops' retries are due on the TestClock, their queries are real: a second at a time.
      yield* eventually("ready again once the database is back", Effect.gen(function*() {
        if (yield* registry.ready) return true
        yield* TestClock.adjust("1 second")
        return false
      }), { timeoutMs: 20_000, everyMs: 50 })
      assert.isTrue(yield* registry.ready, "ready again once the database is back")
      // Recovered by the loops' own retries: no fiber was restarted and the supervisor never gave up.
      assert.isTrue((yield* registry.snapshot).loops.every((loop) => loop.restarts === 0))
      assert.isFalse(yield* Deferred.isDone(fatal))

      // The forwarders resend everything: the refused SMS are stored now, the others are duplicates.
      const resent = yield* Effect.forEach([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14], send)
      assert.isTrue(resent.every((answer) => answer.http === 200))
      assert.deepStrictEqual(resent.map((answer) => answer.body.data.duplicate), [...Array(10).fill(true), ...Array(5).fill(false)])
      const rows = yield* Effect.promise(() => smsRows(db, ["down-1"]))
      assert.strictEqual(rows.filter((row) => row.status !== "duplicate").length, 15)
      for (const [i, answer] of before.entries()) {
        assert.strictEqual(rows.find((row) => row.id === answer.body.data.sms_id)?.body, sms(i))
      }
    }), 90_000)
})
