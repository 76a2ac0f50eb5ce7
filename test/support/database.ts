// A fresh database per test file on the run's PostgreSQL server (see globalSetup.ts): on that
// server a copy of the run's migrated template database, elsewhere (a server a test starts itself,
// the outage cluster's template) migrated.
import { Deferred, Effect, Fiber, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { inject } from "vitest"
import { DatabaseUrl, pgLayer, type PoolName, servicePool } from "../../src/db/Database.ts"
import { runMigrations } from "../../src/db/Migrations.ts"

const serverUrl = () => inject("databaseUrl")
/** The run's template database when `server` is the run's server (none in globalSetup, which makes it). */
const templateFor = (server: string): string | undefined => {
  try {
    return server === inject("databaseUrl") ? inject("templateDatabase") : undefined
  } catch {
    return undefined
  }
}

const withDatabaseName = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

/** Creates an empty database and answers its URL. */
export const createTestDatabase = (prefix = "t"): Promise<string> => createTestDatabaseOn(serverUrl(), prefix)

/** Creates a database and applies the migrations; answers its URL. */
export const createMigratedDatabase = (prefix = "t"): Promise<string> => createMigratedDatabaseOn(serverUrl(), prefix)

const onServer = (server: string, statement: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(pgLayer(Redacted.make(server), { maxConnections: 1 })), Effect.scoped)
  )

const createDatabaseOn = async (server: string, prefix: string, template?: string): Promise<string> => {
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await onServer(server, `CREATE DATABASE "${name}"${template === undefined ? "" : ` TEMPLATE "${template}"`}`)
  return withDatabaseName(server, name)
}

export const createTestDatabaseOn = (server: string, prefix = "t"): Promise<string> => createDatabaseOn(server, prefix)

/** Creates a database on `server` as a copy of its database `template`; answers its URL. */
export const copyDatabaseOn = (server: string, template: string, prefix = "t"): Promise<string> => createDatabaseOn(server, prefix, template)

export const createMigratedDatabaseOn = async (server: string, prefix = "t"): Promise<string> => {
  const template = templateFor(server)
  if (template !== undefined) return copyDatabaseOn(server, template, prefix)
  const url = await createTestDatabaseOn(server, prefix)
  await Effect.runPromise(runMigrations().pipe(Effect.provide(pgLayer(Redacted.make(url), { maxConnections: 1 }))))
  return url
}

export const dropDatabaseOn = (server: string, name: string): Promise<void> => onServer(server, `DROP DATABASE IF EXISTS "${name}"`)

/** SqlClient on a URL, for tests that look at or arrange the database directly. */
export const sqlLayer = (url: string) => pgLayer(Redacted.make(url), { maxConnections: 4 })

/**
 * Another session holds `table` (ACCESS EXCLUSIVE) from when this returns until `release` runs:
 * statements on it wait meanwhile; `release` ends the session's transaction.
 */
export const holdTableLock = (url: string, table: string) =>
  holdLock(url, (sql) => sql`LOCK TABLE ${sql(table)} IN ACCESS EXCLUSIVE MODE`)

/** Another session holds the rows `lock` locks (e.g. SELECT … FOR UPDATE) until released. */
export const holdLock = (url: string, lock: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.gen(function*() {
    const released = yield* Deferred.make<void>()
    const locked = yield* Deferred.make<void>()
    const holder = yield* Effect.forkDetach(Effect.promise(() => runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* lock(sql)
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(released)
      }))
    }))))
    yield* Deferred.await(locked)
    return { release: Deferred.succeed(released, undefined).pipe(Effect.andThen(Fiber.join(holder))) }
  })

/** A service's own pool on a URL, as the service commands give it (its budget, its application_name). */
export const poolLayer = (url: string, name: PoolName) => servicePool(name).pipe(Layer.provide(DatabaseUrl.layer(Redacted.make(url))), Layer.orDie)

/**
 * The test's own client of each database, shared by the calls of `runSql` that follow one another
 * (a check polled every 25 ms, say) and closed once none has used it for SHARED_IDLE_MS: a pool per
 * call opened a connection each time, ~3,000 in a run, each a server process forked and
 * authenticated (~30 ms of CPU, a sixth of the suite's). Named `recon_test` in pg_stat_activity,
 * apart from every pool a test counts. A connection the server closed meanwhile (a restart, a
 * terminated backend) is replaced by the pool at its next use.
 */
const shared = new Map<string, { readonly runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, never>; busy: number; idle?: ReturnType<typeof setTimeout> }>()
const SHARED_IDLE_MS = 1_000

/**
 * `effect` on a client of its own, closed after: for statements that change their session for good
 * (a dump's `set_config('search_path', '', false)`), which would leak into the shared client's next callers.
 */
export const runSqlAlone = <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>): Promise<A> =>
  Effect.runPromise(effect.pipe(Effect.provide(sqlLayer(url))))

export const runSql = async <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>): Promise<A> => {
  let client = shared.get(url)
  if (client === undefined) {
    client = { runtime: ManagedRuntime.make(Layer.orDie(pgLayer(Redacted.make(url), { maxConnections: 20, applicationName: "recon_test" }))), busy: 0 }
    shared.set(url, client)
  }
  const used = client
  clearTimeout(used.idle)
  used.busy++
  try {
    return await used.runtime.runPromise(effect)
  } finally {
    if (--used.busy === 0) {
      used.idle = setTimeout(() => {
        if (used.busy > 0 || shared.get(url) !== used) return
        shared.delete(url)
        void used.runtime.dispose()
      }, SHARED_IDLE_MS)
      used.idle.unref()
    }
  }
}

/** Runs `f` with a client of the database at `url` (a test's own queries); a failure is a defect. */
export const sql = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  runSql(url, Effect.gen(function*() {
    return yield* f(yield* SqlClient.SqlClient)
  }).pipe(Effect.orDie))

export const layerFor = (url: string): Layer.Layer<SqlClient.SqlClient> => Layer.orDie(sqlLayer(url))
