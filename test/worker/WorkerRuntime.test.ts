// The worker's runtime with its real loops on a real database: fibers interrupted and restarted,
// a pass that keeps failing going stale at its TTL, LISTEN/NOTIFY kicks, one listener per
// registration across two worker processes.
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Deferred, Effect, Fiber, Option, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loops } from "../../src/loops/index.ts"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { eventually, realWait } from "../support/time.ts"
import { buildWorker, register } from "../support/worker.ts"

const heartbeatPath = () => join(mkdtempSync(join(tmpdir(), "recon-hb-")), "worker.heartbeat")
const readHeartbeat = (path: string) => {
  try {
    return JSON.parse(readFileSync(path, "utf8"))
  } catch {
    return undefined
  }
}
const query = <A extends object>(db: string, text: string) =>
  Effect.promise(() => runSql(db, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return (yield* sql.unsafe(text)) as unknown as ReadonlyArray<A>
  })))

// Every loop of the worker, whatever loops are added.
const names = loops.map((loop) => loop.name)

describe("supervised loops", () => {
  it.effect("an interrupted loop makes readiness false in the same tick, is restarted, and readiness returns after its next success", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("rt-int"))
      const path = heartbeatPath()
      // On the TestClock: the heartbeat's 5 s tick never comes while the clock stands still, so the
      // file can say "not ready" only by the write made at once on the readiness change. One
      // restart per loop: more loops than the 5 restarts within 60 s the worker allows; each
      // restart waits 300 ms of the clock, which the test moves 50 ms at a time until it is back.
      const { registry, runtime } = yield* buildWorker(db, path, { backoff: Schedule.spaced("300 millis"), maxRestarts: names.length })
      yield* eventually("ready", registry.ready)
      const heartbeatSays = (ready: boolean) => Effect.sync(() => readHeartbeat(path)?.ready === ready)
      const readyAgain = Effect.gen(function*() {
        if (yield* registry.ready) return true
        yield* TestClock.adjust("50 millis")
        return false
      })
      for (const name of names) {
        yield* eventually(`${name}: heartbeat says ready`, heartbeatSays(true))
        const fiber = Option.getOrThrow(yield* runtime.supervisor.fiber(name))
        yield* Fiber.interrupt(fiber)
        assert.isFalse(yield* registry.ready, `${name}: ready right after its fiber exited`)
        yield* eventually(`${name}: heartbeat says not ready, the clock standing still`, heartbeatSays(false))
        yield* eventually(`${name}: ready again`, readyAgain, { everyMs: 50 })
        const loop = (yield* registry.snapshot).loops.find((l) => l.name === name)!
        assert.strictEqual(loop.restarts, 1)
        assert.strictEqual(loop.state, "running")
        assert.isTrue(Option.isSome(yield* runtime.supervisor.fiber(name)))
      }
      yield* eventually("heartbeat ready", heartbeatSays(true))
      assert.deepStrictEqual(Object.keys(readHeartbeat(path).loops).sort(), [...names].sort())
    }), 30_000)

  it.effect("a pass that keeps failing goes stale exactly at its TTL, the worker stays up, and recovers without a restart", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("rt-stale"))
      const { registry, runtime, kicks, fatal } = yield* buildWorker(db, heartbeatPath())
      yield* eventually("ready", registry.ready)
      const loop = () => Effect.map(registry.snapshot, (s) => s.loops.find((l) => l.name === "phone_whitelist_loop")!)
      const lastSuccess = Option.getOrThrow((yield* loop()).lastSuccessAt)
      // Break the loop's table: every pass fails from now on.
      yield* query(db, "ALTER TABLE recon.shooter_phone RENAME TO shooter_phone_gone")
      yield* kicks.kick("phone_whitelist_loop")
      yield* realWait(100)
      // Let time pass in steps, letting the other loops' real queries finish between steps.
      const advanceTo = (millis: number) =>
        Effect.gen(function*() {
          while (true) {
            const now = DateTime.toEpochMillis((yield* registry.snapshot).at) - DateTime.toEpochMillis(lastSuccess)
            if (now >= millis) return
            yield* TestClock.adjust(Math.min(1000, millis - now))
            yield* realWait(30)
          }
        })
      yield* advanceTo(29_999)
      assert.isTrue((yield* loop()).fresh)
      yield* advanceTo(30_000)
      assert.strictEqual((yield* loop()).state, "stale")
      assert.isFalse(yield* registry.ready)
      // Still up: its fiber is the same, no restart, the supervisor has not given up, the others are fresh.
      assert.isTrue(Option.isSome(yield* runtime.supervisor.fiber("phone_whitelist_loop")))
      assert.strictEqual((yield* loop()).restarts, 0)
      assert.isFalse(yield* Deferred.isDone(fatal))
      const others = (yield* registry.snapshot).loops.filter((l) => l.name !== "phone_whitelist_loop")
      assert.isTrue(others.every((l) => l.fresh))
      // Mended: the next retry succeeds and readiness returns.
      yield* query(db, "ALTER TABLE recon.shooter_phone_gone RENAME TO shooter_phone")
      // Its next retry comes within the backoff's cap: the loop's period (10 s), jittered by up to
      // 1.2×, after the last one. The clock moves a second at a time until it has come (a fixed
      // 41 s stopped short of a retry drawn late, and the test then waited on a clock standing still).
      for (let at = 31_000; at <= 45_000 && !(yield* registry.ready); at += 1000) yield* advanceTo(at)
      yield* eventually("ready again", registry.ready)
      assert.strictEqual((yield* loop()).restarts, 0)
    }), 30_000)
})

describe("LISTEN/NOTIFY", () => {
  it.effect("work written by another process reaches the loops at once, without waiting for their schedule", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("rt-notify"))
      const { registry } = yield* buildWorker(db, heartbeatPath())
      yield* eventually("ready", registry.ready)
      // The clock never moves in this test: only a NOTIFY can trigger these passes.
      yield* query(db, `WITH d AS (INSERT INTO recon.shooter_device (device_id) VALUES ('late-phone') RETURNING 1)
        INSERT INTO recon.shooter_push (device_id, format) VALUES ('late-phone', 'smsforwarder')`)
      yield* query(db, "SELECT pg_notify('recon_changes', 'shooter_push')")
      yield* eventually("listener started", Effect.map(
        query<{ listener_status: string }>(db, "SELECT listener_status FROM recon.shooter_push WHERE device_id = 'late-phone'"),
        (rows) => rows[0]?.listener_status === "listening"
      ), 5000)

      yield* query(db, "UPDATE recon.shooter_device SET trusted = true WHERE device_id = 'late-phone'")
      yield* query(db, `INSERT INTO recon.shooter_sms (device_id, sender, sender_normalized, body, normalized_body, received_at, status)
        VALUES ('late-phone', '1588-9999', '15889999', 'x', 'x', now(), 'need_check')`)
      yield* query(db, "INSERT INTO recon.shooter_phone (phone) VALUES ('15889999')")
      yield* query(db, "SELECT pg_notify('recon_changes', 'shooter_phone')")
      // Moved on to received, and then read by parse_loop (ignored: "x" is no deposit).
      yield* eventually("held SMS moved on", Effect.map(
        query<{ status: string }>(db, "SELECT status FROM recon.shooter_sms WHERE device_id = 'late-phone'"),
        (rows) => rows[0] !== undefined && rows[0].status !== "need_check"
      ), 5000)
    }), 30_000)
})

describe("several worker processes", () => {
  it.effect("each registration's listener runs in one process; the other takes over when it stops", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("rt-two"))
      for (const deviceId of ["p-1", "p-2", "p-3"]) {
        yield* Effect.promise(() => register(db, { deviceId, format: "smsforwarder" }))
      }
      const advisoryHolders = query<{ pid: number; n: bigint }>(db,
        `SELECT l.pid, count(*) AS n FROM pg_locks AS l
         JOIN (SELECT hashtextextended('recon.listener:' || d, 0) AS k FROM unnest(ARRAY['p-1', 'p-2', 'p-3']) AS d) AS keys
           ON l.classid::bigint = (keys.k >> 32) & 4294967295 AND l.objid::bigint = keys.k & 4294967295
         WHERE l.locktype = 'advisory' AND l.granted GROUP BY l.pid`)
      const a = yield* Effect.scoped(Effect.gen(function*() {
        const first = yield* buildWorker(db, heartbeatPath())
        yield* eventually("first ready", first.registry.ready)
        const second = yield* Effect.forkDetach(Effect.scoped(Effect.gen(function*() {
          const worker = yield* buildWorker(db, heartbeatPath())
          yield* eventually("second ready", worker.registry.ready)
          return yield* Effect.never
        })))
        yield* realWait(500)
        const holders = yield* advisoryHolders
        // Three listeners, three locks, all in one session.
        assert.strictEqual(holders.length, 1)
        assert.strictEqual(Number(holders[0]!.n), 3)
        return { second, firstPid: holders[0]!.pid }
      }))
      // The first worker is gone (its scope closed): the second takes the listeners at its next pass.
      yield* TestClock.adjust("6 seconds")
      yield* eventually("the second worker holds every listener", Effect.map(advisoryHolders, (holders) =>
        holders.length === 1 && Number(holders[0]!.n) === 3 && holders[0]!.pid !== a.firstPid), 5000)
      // Each listener writes its status once it has taken the lock: soon after, not with it.
      yield* eventually("every registration listening", Effect.map(
        query<{ listener_status: string }>(db, "SELECT listener_status FROM recon.shooter_push"),
        (statuses) => statuses.length === 3 && statuses.every((row) => row.listener_status === "listening")), 5000)
      yield* Fiber.interrupt(a.second)
    }), 30_000)
})
