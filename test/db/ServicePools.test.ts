// One pool per service, as `all` composes them, on a real database: a burst that takes every
// connection of the worker's pool leaves recon_service, wallet_service and admin_service answering
// on their own; pg_stat_activity names who holds what.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseUrl, POOL_BUDGETS } from "../../src/db/Database.ts"
import { adminEnv, startAdmin } from "../admin/support.ts"
import { createMigratedDatabase, poolLayer, runSql } from "../support/database.ts"
import { startRecon, serve } from "../support/recon.ts"
import { startWallet } from "../support/wallet.ts"
import { eventually } from "../support/time.ts"
import { buildWorker, pushForwarder, register, servePush, smsRows } from "../support/worker.ts"

/** Connections open on the database, by application_name. */
const connections = (db: string) =>
  Effect.promise(() => runSql(db, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ name: string; n: number }>`SELECT application_name AS name, count(*)::int AS n
      FROM pg_stat_activity WHERE datname = current_database() GROUP BY application_name`
    return Object.fromEntries(rows.map((row) => [row.name, row.n])) as Record<string, number>
  })))

/** More statements than the worker's budget, each holding its connection until `release`; returns once the pool is exhausted. */
const exhaustWorkerPool = (db: string, sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const release = yield* Deferred.make<void>()
    const hold = Effect.scoped(Effect.gen(function*() {
      yield* sql.reserve
      yield* Deferred.await(release)
    }))
    const burst = yield* Effect.forkChild(Effect.forEach(Array.from({ length: POOL_BUDGETS.recon_worker + 5 }), () => hold, { concurrency: "unbounded" }))
    yield* eventually(
      "the worker's pool exhausted",
      Effect.map(connections(db), (open) => open["recon_worker"] === POOL_BUDGETS.recon_worker)
    )
    return { release, burst }
  })

const status = (url: string, init?: RequestInit) => Effect.promise(() => fetch(url, init).then((response) => response.status))

describe("service pools", () => {
  it.live("every connection of the worker's pool taken: recon, wallet and admin still answer from their own pools", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("pools"))
      const recon = yield* serve(startRecon(db, undefined, poolLayer(db, "recon_service")))
      const wallet = yield* serve(startWallet(db, undefined, poolLayer(db, "wallet_service")))
      const admin = yield* serve(startAdmin(db, adminEnv(recon.url), poolLayer(db, "admin_service")))
      const heartbeat = join(mkdtempSync(join(tmpdir(), "recon-pools-")), "worker.heartbeat")
      const worker = yield* buildWorker(db, heartbeat, { sql: poolLayer(db, "recon_worker") })
      yield* eventually("worker ready", worker.registry.ready)

      // A burst on the worker: more statements than its budget, each holding its connection until released.
      const { release, burst } = yield* exhaustWorkerPool(db, worker.sql)

      assert.strictEqual(yield* status(`${recon.url}/health`), 200)
      assert.strictEqual(yield* status(`${wallet.url}/health`), 200)
      // Sign-in reads the operator table: answered (no such operator), not held up.
      assert.strictEqual(yield* status(`${admin.url}/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ account: "nobody", password: "whatever-password" })
      }), 401)
      const open = yield* connections(db)
      assert.strictEqual(open["recon_worker"], POOL_BUDGETS.recon_worker)
      for (const name of ["recon_service", "wallet_service", "admin_service"] as const) {
        assert.isAtLeast(open[name] ?? 0, 1, name)
        assert.isAtMost(open[name] ?? 0, POOL_BUDGETS[name], name)
      }

      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(burst)
      yield* eventually("worker ready after the burst", worker.registry.ready)
    }), 60_000)

  it.live("every connection of the worker's pool taken: a push is still stored and acknowledged, on the ingest pool of its own", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("pools-ingest"))
      const heartbeat = join(mkdtempSync(join(tmpdir(), "recon-pools-")), "worker.heartbeat")
      // As the worker command composes it: the process's database URL in context, the service's pool.
      const worker = yield* buildWorker(db, heartbeat, {
        sql: Layer.merge(poolLayer(db, "recon_worker"), DatabaseUrl.layer(Redacted.make(db))) as unknown as ReturnType<typeof poolLayer>
      })
      yield* eventually("worker ready", worker.registry.ready)
      const push = yield* servePush(worker)
      yield* Effect.promise(() => register(db, { deviceId: "phone-pools", format: "smsforwarder", secret: "pools-secret" }))

      const { release, burst } = yield* exhaustWorkerPool(db, worker.sql)

      const answer = yield* Effect.promise(() =>
        pushForwarder(push, "phone-pools", { from: "15778000", sms: "[Web발신]\n신한 11/22 09:41\n입금 50,000원\n김철수\n잔액 1,250,000", secret: "pools-secret" }))
      assert.strictEqual(answer.http, 200)
      const rows = yield* Effect.promise(() => smsRows(db, ["phone-pools"]))
      assert.strictEqual(rows.length, 1)
      const open = yield* connections(db)
      assert.strictEqual(open["recon_worker"], POOL_BUDGETS.recon_worker)
      assert.isAtLeast(open["recon_worker_ingest"] ?? 0, 1)
      assert.isAtMost(open["recon_worker_ingest"] ?? 0, POOL_BUDGETS.recon_worker_ingest)

      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(burst)
    }), 60_000)

  it.live("every pool connects with JIT off (a server built with LLVM compiled short statements for 55–70 ms each)", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("pools-jit"))
      const jit = yield* Effect.gen(function*() {
        const rows = yield* (yield* SqlClient.SqlClient)<{ jit: string }>`SELECT current_setting('jit') AS jit`
        return rows[0]!.jit
      }).pipe(Effect.provide(poolLayer(db, "recon_worker")))
      assert.strictEqual(jit, "off")
    }))
})
