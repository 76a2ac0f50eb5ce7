// Migration 0021: the top-info counters (recon.sms_status_count) are exact, and a transaction that
// counts an SMS does not make another backend's count wait for its commit (a duplicate stored by
// one worker's ingest used to hold every other ingest until it committed).
import { Deferred, Effect, Fiber, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { assert, beforeAll, describe, it } from "vitest"
import { pgLayer } from "../../src/db/Database.ts"
import { createMigratedDatabase, sql } from "../support/database.ts"

let db: string
beforeAll(async () => {
  db = await createMigratedDatabase("status_counts")
}, 60_000)

const insertSms = (s: SqlClient.SqlClient, status: string, count = 1) =>
  s`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
    SELECT 'counts', '15778000', 'sms ' || g || ' ' || random(), 'sms ' || g, now(), ${status} FROM generate_series(1, ${count}) AS g`

const counts = () =>
  sql(db, (s) => Effect.map(s<{ status: string; n: string }>`SELECT status, n::text FROM recon.sms_status_count ORDER BY status`,
    (rows) => Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]))))

describe("SMS status counts", () => {
  it("a backend counting an SMS inside an open transaction does not hold up another backend's count", async () => {
    const one = (effect: Effect.Effect<unknown, unknown, SqlClient.SqlClient>) => Effect.provide(effect, pgLayer(Redacted.make(db), { maxConnections: 1 }))
    const pid = Effect.flatMap(SqlClient.SqlClient, (s) => Effect.map(s<{ pid: number }>`SELECT pg_backend_pid() AS pid`, (rows) => rows[0]!.pid))
    const duplicate = (s: SqlClient.SqlClient, body: string) =>
      s`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status) VALUES ('counts', '1', ${body}, ${body}, now(), 'duplicate')`
    await Effect.runPromise(Effect.gen(function*() {
      const counted = yield* Deferred.make<number>()
      const release = yield* Deferred.make<void>()
      // The first session counts a duplicate and keeps its transaction open.
      const first = yield* Effect.forkChild(one(Effect.flatMap(SqlClient.SqlClient, (s) => s.withTransaction(Effect.gen(function*() {
        yield* duplicate(s, "open")
        yield* Deferred.succeed(counted, yield* pid)
        yield* Deferred.await(release)
      })))))
      const firstPid = yield* Deferred.await(counted)
      // A session whose count lands on another slot (the slot is the backend's pid mod 16) counts
      // one too: without the slots it waited for the first's commit, and its timeout failed it.
      let done = false
      for (let tries = 0; !done; tries++) {
        assert.isBelow(tries, 40, "no backend on another slot")
        done = yield* one(Effect.gen(function*() {
          const s = yield* SqlClient.SqlClient
          if ((yield* pid) % 16 === firstPid % 16) return false
          yield* s`SET statement_timeout = '3s'`
          yield* duplicate(s, "other")
          return true
        })) as Effect.Effect<boolean>
      }
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
    }))
    assert.strictEqual((await counts()).duplicate, 2)
  })

  it("the counts equal the SMS by status after concurrent inserts, status changes and deletes", async () => {
    await sql(db, (s) => Effect.gen(function*() {
      yield* Effect.all(Array.from({ length: 8 }, (_, k) => insertSms(s, ["unmatched", "parse_failed", "need_check", "duplicate"][k % 4]!, 50)), { concurrency: 8 })
      yield* Effect.all(Array.from({ length: 4 }, () => s`UPDATE recon.shooter_sms SET status = 'parse_failed'
        WHERE id IN (SELECT id FROM recon.shooter_sms WHERE status = 'need_check' ORDER BY random() LIMIT 20 FOR UPDATE SKIP LOCKED)`), { concurrency: 4 })
      yield* s`DELETE FROM recon.shooter_sms WHERE id IN (SELECT id FROM recon.shooter_sms WHERE status = 'unmatched' LIMIT 30)`
    }))
    const actual = await sql(db, (s) => Effect.map(s<{ status: string; n: string }>`SELECT status, count(*)::text AS n FROM recon.shooter_sms
      WHERE status IN ('need_check', 'parse_failed', 'unmatched', 'duplicate') GROUP BY status`, (rows) => Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]))))
    const counted = await counts()
    for (const status of ["need_check", "parse_failed", "unmatched", "duplicate"]) assert.strictEqual(counted[status] ?? 0, actual[status] ?? 0, status)
  })
})
