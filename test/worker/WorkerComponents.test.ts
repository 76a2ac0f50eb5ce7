// The worker's fibers that are not loops (LISTEN, the heartbeat writer, the ingest batchers, the memory trim) on a
// real database with the real push port: each killed makes GET /health/ready 503 at once, naming
// it; it is restarted and readiness returns; a batch caught by the batchers' death is answered, and
// the SMS after it are stored by the restarted batchers.
import { assert, describe, it } from "@effect/vitest"
import { inject } from "vitest"
import { Effect, Fiber, Option, Schedule } from "effect"
import { TestClock } from "effect/testing"
import { SqlClient } from "effect/sql"
import { mkdtempSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { PhoneWhitelistLoop } from "../../src/loops/PhoneWhitelistLoop.ts"
import { createMigratedDatabase, holdTableLock, runSql, sql } from "../support/database.ts"
import { eventually } from "../support/time.ts"
import { buildWorker, getReady, pushForwarder, register, sayFault, servePush, smsRows } from "../support/worker.ts"

const COMPONENTS = ["change_listener", "heartbeat_writer", "ingest_batchers", "memory_trim"] as const

const readHeartbeat = (path: string) => {
  try {
    return JSON.parse(readFileSync(path, "utf8"))
  } catch {
    return undefined
  }
}

/** A worker with one loop, and its push port serving the worker's own store, kicks and registry. */
const setUp = (prefix: string) =>
  Effect.gen(function*() {
    const db = yield* Effect.promise(() => createMigratedDatabase(prefix))
    yield* Effect.promise(() => register(db, { deviceId: "phone-1", format: "smsforwarder" }))
    const heartbeat = join(mkdtempSync(join(inject("scratchDir"), "components-")), "worker.heartbeat")
    const worker = yield* buildWorker(db, heartbeat, { loops: [PhoneWhitelistLoop], backoff: Schedule.spaced("20 millis") })
    const push = yield* servePush(worker)
    yield* eventually("ready", worker.registry.ready)
    return { ...worker, db, heartbeat, push }
  })

describe("the worker's components", () => {
  it.effect("each one killed: /health/ready is 503 at once naming it, it is restarted, and readiness returns", () =>
    Effect.gen(function*() {
      const { registry, runtime, push, heartbeat, db } = yield* setUp("components-kill")
      const ready = yield* getReady(push)
      assert.strictEqual(ready.http, 200)
      assert.deepStrictEqual(Object.keys(ready.body.components).sort(), [...COMPONENTS])
      for (const name of COMPONENTS) {
        const fiber = Option.getOrThrow(yield* runtime.components.fiber(name))
        yield* Fiber.interrupt(fiber)
        assert.isFalse(yield* registry.ready, `${name}: ready right after its fiber exited`)
        // The restart waits for its backoff on the test clock: the port says so meanwhile.
        const down = yield* getReady(push)
        assert.strictEqual(down.http, 503, name)
        assert.isFalse(down.body.ready)
        assert.include(["exited", "restarting"], down.body.components[name].state, name)
        // The loops are untouched: only the component is down.
        assert.isTrue(Object.values(down.body.loops).every((loop: any) => loop.fresh))

        yield* eventually(`${name}: ready again`, TestClock.adjust("20 millis").pipe(Effect.andThen(registry.ready)))
        const back = yield* getReady(push)
        assert.strictEqual(back.http, 200)
        assert.deepInclude(back.body.components[name], { state: "running", restarts: 1 })
        assert.notStrictEqual(Option.getOrThrow(yield* runtime.components.fiber(name)), fiber)
      }
      // The restarted writer writes again, and the restarted batchers store.
      yield* eventually("heartbeat ready", Effect.sync(() => readHeartbeat(heartbeat)?.ready === true), 6000)
      const stored = yield* Effect.promise(() => pushForwarder(push, "phone-1", { from: "01012345678", sms: "입금 1,000원 홍길동" }))
      assert.strictEqual(stored.http, 200, JSON.stringify(stored.body))
      assert.strictEqual((yield* Effect.promise(() => smsRows(db))).length, 1)
    }), 30_000)

  it.effect("the LISTEN connection killed (pg_terminate_backend): /health/ready is 503 naming change_listener until it listens again, then NOTIFY kicks again", () =>
    Effect.gen(function*() {
      const { registry, push, db } = yield* setUp("components-listen")
      const run = (text: string) => Effect.promise(() => sql(db, (client) => client.unsafe<{ pid: number }>(text)))
      const listeners = () => sql(db, (client) =>
        client<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`)
      yield* eventually("listening", Effect.map(Effect.promise(listeners), (rows) => rows.length === 1))
      const [{ pid }] = (yield* Effect.promise(listeners)) as [{ pid: number }]
      assert.strictEqual((yield* getReady(push)).body.components.change_listener.state, "running")
      yield* run(`SELECT pg_terminate_backend(${pid})`)
      // The loss is seen as the connection closes; the clock stands still, so the resubscription waits for it.
      yield* eventually("not ready", Effect.map(registry.ready, (ready) => !ready))
      const down = yield* getReady(push)
      assert.strictEqual(down.http, 503)
      assert.strictEqual(down.body.components.change_listener.state, "restarting")
      assert.isTrue(Object.values(down.body.loops).every((loop: any) => loop.fresh), "only the listener is down")
      yield* eventually("listening again", TestClock.adjust("500 millis").pipe(Effect.andThen(registry.ready)))
      const back = yield* getReady(push)
      assert.strictEqual(back.http, 200)
      assert.deepStrictEqual(back.body.components.change_listener, { state: "running", restarts: 1 })
      const [again] = (yield* Effect.promise(listeners)) as [{ pid: number }]
      assert.notStrictEqual(again.pid, pid, "a new LISTEN connection")
      // Work flows again: a NOTIFY from another process kicks phone_whitelist_loop (the clock stands still).
      yield* run("UPDATE recon.shooter_device SET trusted = true WHERE device_id = 'phone-1'")
      yield* run(`INSERT INTO recon.shooter_sms (device_id, sender, sender_normalized, body, normalized_body, received_at, status)
        VALUES ('phone-1', '1588-9999', '15889999', 'x', 'x', now(), 'need_check')`)
      yield* run("INSERT INTO recon.shooter_phone (phone) VALUES ('15889999')")
      yield* run("SELECT pg_notify('recon_changes', 'shooter_phone')")
      yield* eventually("held SMS moved on", Effect.map(Effect.promise(() => smsRows(db)), (rows: any) => rows[0]?.status === "received"), 5000)
    }), 30_000)

  it.live("the batchers killed while their batch waits on the database: its request is answered, later SMS are stored after the restart", () =>
    Effect.gen(function*() {
      const { registry, runtime, push, db } = yield* setUp("components-batch")
      // Another session holds recon.shooter_sms until released: the batch's statement waits.
      const lock = yield* holdTableLock(db, "recon.shooter_sms")
      const waiting = yield* Effect.forkChild(Effect.promise(() =>
        pushForwarder(push, "phone-1", { from: "01012345678", sms: "입금 2,000원 홍길동", timestamp: Date.now() - 1000 })
      ))
      yield* eventually("the batch waits on the lock", Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%ingest_sms_batch%'`
        return rows[0]!.n > 0
      }))))

      yield* Fiber.interrupt(Option.getOrThrow(yield* runtime.components.fiber("ingest_batchers")))
      assert.isFalse(yield* registry.ready)
      // Answered, not left hanging: the forwarder sees a failure and sends the SMS again.
      const answer = yield* Fiber.join(waiting)
      assert.strictEqual(answer.http, 500)

      yield* lock.release
      yield* eventually("ready again", registry.ready)
      const resent = yield* Effect.promise(() =>
        pushForwarder(push, "phone-1", { from: "01012345678", sms: "입금 2,000원 홍길동", timestamp: Date.now() })
      )
      assert.strictEqual(resent.http, 200, JSON.stringify(resent.body))
      assert.strictEqual((yield* Effect.promise(() => smsRows(db))).length, 1)
    }), 30_000)

  it.effect("the database away during an ingest batch (its statement stuck, then its connection terminated): 503 naming ingest_batchers once stale, the request answered 503, ready again at once, the SMS stored when sent again", () =>
    Effect.gen(function*() {
      const { registry, push, db } = yield* setUp("components-ingest-away")
      const lock = yield* holdTableLock(db, "recon.shooter_sms")
      // Released on any failure too, so the worker's teardown never waits on it.
      yield* Effect.addFinalizer(() => lock.release)
      const waiting = yield* Effect.forkChild(Effect.promise(() =>
        pushForwarder(push, "phone-1", { from: "01012345678", sms: "입금 3,000원 홍길동", timestamp: Date.now() - 1000 })
      ))
      const batch = () => sql(db, (client) => client<{ pid: number }>`SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%ingest_sms_batch%'`)
      yield* eventually("the batch waits on the database", Effect.map(Effect.promise(batch), (rows) => rows.length > 0))
      // Queued work, recent: still ready.
      assert.strictEqual((yield* getReady(push)).http, 200)
      yield* TestClock.adjust("10 seconds")
      yield* eventually("not ready", Effect.map(registry.ready, (ready) => !ready))
      const down = yield* getReady(push)
      assert.strictEqual(down.http, 503)
      assert.strictEqual(down.body.ready, false)
      assert.deepInclude(down.body.components.ingest_batchers, { state: "stale", waiting: true, stale_after_s: 10 })
      assert.isTrue(Object.values(down.body.loops).every((loop: any) => loop.fresh), "only the batchers are behind")
      yield* sayFault(`ingest batch stuck: ${down.http} ${JSON.stringify({ ready: down.body.ready, ingest_batchers: down.body.components.ingest_batchers })}`)

      // The connection lost: the request is answered (the forwarder sends it again), nothing waits, ready again.
      yield* Effect.promise(async () => {
        for (const { pid } of await batch()) await sql(db, (client) => client`SELECT pg_terminate_backend(${pid})`)
      })
      const answer = yield* Fiber.join(waiting)
      assert.strictEqual(answer.http, 503, JSON.stringify(answer.body))
      yield* eventually("ready again", registry.ready)
      const back = yield* getReady(push)
      assert.strictEqual(back.http, 200)
      assert.deepInclude(back.body.components.ingest_batchers, { state: "running", waiting: false })
      yield* sayFault(`ingest connection terminated: request ${answer.http}; then ${back.http} ${JSON.stringify({ ingest_batchers: back.body.components.ingest_batchers })}`)

      yield* lock.release
      const resent = yield* Effect.promise(() =>
        pushForwarder(push, "phone-1", { from: "01012345678", sms: "입금 3,000원 홍길동", timestamp: Date.now() })
      )
      assert.strictEqual(resent.http, 200, JSON.stringify(resent.body))
      assert.strictEqual((yield* Effect.promise(() => smsRows(db))).length, 1)
    }), 30_000)
})
