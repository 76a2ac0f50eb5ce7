// The PostgreSQL clients of a process: DATABASE_URL, or the embedded server under ./.data/pg
// (the demo's under ./.data/demo) started with the process and stopped with it, after everything
// that uses it; one pool per service, each with its own budget.
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Redacted } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { resolve } from "node:path"
import { CommandFailed } from "../config/CommandFailed.ts"
import { startEmbeddedPostgres } from "./EmbeddedPostgres.ts"

/** Where the embedded server keeps its data, relative to the working directory. */
export const EMBEDDED_DATA_DIR = ".data/pg"
/** The demo's own (`all --demo`), never the real one. */
export const DEMO_DATA_DIR = ".data/demo"

export class DatabaseUrl extends Context.Service<DatabaseUrl, {
  readonly url: Redacted.Redacted<string>
  readonly embedded: boolean
}>()("recon/db/Database/DatabaseUrl") {
  /**
   * DATABASE_URL when set; else start (or reuse) the embedded cluster in `dataDir` (./.data/pg).
   * Released last: the pool built on it is closed first, then the embedded server stops (one line each).
   */
  static readonly layer = (databaseUrl: Redacted.Redacted<string> | undefined, dataDir = EMBEDDED_DATA_DIR) =>
    Layer.effect(
      DatabaseUrl,
      Effect.gen(function*() {
        if (databaseUrl !== undefined) {
          return { url: databaseUrl, embedded: false }
        }
        const cluster = yield* Effect.acquireRelease(
          Effect.tryPromise({
            try: () => startEmbeddedPostgres({ dir: resolve(dataDir), persistent: true }),
            catch: (cause) => new CommandFailed({ message: `embedded PostgreSQL did not start: ${cause instanceof Error ? cause.message : String(cause)}` })
          }),
          (cluster) => cluster.reused
            ? Effect.logInfo("embedded PostgreSQL left running (another process runs it)")
            : Effect.promise(() => cluster.stop()).pipe(Effect.andThen(Effect.logInfo("embedded PostgreSQL stopped")))
        )
        yield* Effect.logInfo(`embedded PostgreSQL on 127.0.0.1:${cluster.port} (data in ${dataDir}, its password in ${dataDir}.password${cluster.reused ? "; already run by another process" : ""})`)
        return { url: Redacted.make(cluster.url), embedded: true }
      })
    )
}

/** A database URL as it may be shown: without its password. */
export const shownUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    parsed.password = ""
    return parsed.toString()
  } catch {
    return "(DATABASE_URL, not a URL)"
  }
}

/** The innermost message of an error chain: what actually failed (`connect ECONNREFUSED …`). */
const rootMessage = (error: unknown): string => {
  let current: unknown = error
  let message = String(error)
  for (let depth = 0; depth < 10 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error && current.message !== "") message = current.message
    current = (current as { cause?: unknown }).cause
  }
  return message
}

/**
 * SQLSTATEs of a server that is away or cannot take us now (besides class 08, connection
 * exception): shut down by an administrator or a crash, starting up, terminated by
 * pg_terminate_backend (57P01), out of connections or resources (class 53).
 */
const AWAY_STATES = new Set(["57P01", "57P02", "57P03", "57P05", "53000", "53100", "53200", "53300", "53400"])

/**
 * The database being away (503, retry later) rather than a query or schema that is wrong: the
 * driver's ConnectionError (refused, reset, closed, class 08), or a server error whose SQLSTATE
 * says it is going or cannot take the connection. The one place this is decided.
 */
export const isDatabaseAway = (error: SqlError.SqlError): boolean => {
  if (error.reason instanceof SqlError.ConnectionError) return true
  const code = (error.reason.cause as { readonly code?: unknown } | undefined)?.code
  return typeof code === "string" && (code.startsWith("08") || AWAY_STATES.has(code))
}

/**
 * The SqlError of the database being away stays a failure; any other is a defect (the query or
 * the schema is wrong), so nothing of it reaches a caller.
 */
export const dieUnlessAway = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchIf(effect, (error) => SqlError.isSqlError(error) && !isDatabaseAway(error), Effect.die)

/** Whether the database answers a query within 3 s (the services' GET /health). */
export const databaseAnswers = (sql: SqlClient.SqlClient): Effect.Effect<boolean> =>
  sql`SELECT 1`.pipe(Effect.timeout("3 seconds"), Effect.as(true), Effect.orElseSucceed(() => false))

/** The pooled client for a URL; queries fail with a ConnectionError while the server is away and recover by themselves. */
export const pgLayer = (url: Redacted.Redacted<string>, options?: { readonly maxConnections?: number; readonly applicationName?: string }) =>
  PgClient.layer({
    url,
    maxConnections: options?.maxConnections ?? 10,
    connectTimeout: Duration.seconds(5),
    idleTimeout: Duration.seconds(60),
    applicationName: options?.applicationName ?? "recon",
    // Every statement of recon is a short one: a server built with LLVM (Debian's, most packaged
    // ones) would compile any whose estimate passes jit_above_cost, e.g. the balance window over
    // jsonb_to_recordset's default estimate of 100 rows: 55–70 ms of compiling for a 1 ms query.
    startupParameters: { jit: "off" }
  })

/**
 * Each service's own pool (docs/CONFIGURATION.md "Database connections"): under `all` a burst on one service can
 * not take the connections another needs for its health checks. Opened lazily, closed after 60 s
 * idle; the sum (48) fits PostgreSQL's default max_connections (100, 3 kept for superusers) twice.
 * The worker's: 5 held for long (listener locks, LISTEN, chatbot_poll_loop's lock and its
 * transaction, order_match_loop's lease owner), one statement per loop (8), and room for the push
 * listeners and webhook attempts being recorded.
 */
export const POOL_BUDGETS = {
  recon_service: 8,
  recon_worker: 20,
  /**
   * The worker's push endpoint and chat-bot ingest, apart from its loops: the acknowledgement of an
   * SMS never waits for a connection that parsing, matching, a wallet call or balance placement
   * holds (4 batchers and the registration look-ups).
   */
  recon_worker_ingest: 6,
  admin_service: 4,
  wallet_service: 8,
  /** Start-up of a service command: the reachability check, the migrations, the demo's data. */
  recon_startup: 2
} as const
export type PoolName = keyof typeof POOL_BUDGETS

/** The pool of one service on the process's database, named in pg_stat_activity (`application_name`). */
export const servicePool = (name: PoolName) =>
  Layer.unwrap(DatabaseUrl.useSync(({ url }) => pgLayer(url, { maxConnections: POOL_BUDGETS[name], applicationName: name })))

/**
 * The pool of the worker's ingest (POOL_BUDGETS.recon_worker_ingest) on the process's database; where
 * no database URL is in context (a test that hands the worker its own SqlClient), that client.
 */
export const ingestPool = Layer.unwrap(
  Effect.map(Effect.serviceOption(DatabaseUrl), (found) =>
    found._tag === "Some"
      ? pgLayer(found.value.url, { maxConnections: POOL_BUDGETS.recon_worker_ingest, applicationName: "recon_worker_ingest" })
      : Layer.effect(SqlClient.SqlClient, SqlClient.SqlClient))
)

/** One query at start-up: a database the command cannot use is one readable line and exit 1, not a stack. */
const reachable = (url: Redacted.Redacted<string>) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`SELECT 1`.pipe(
      Effect.mapError((error) => new CommandFailed({ message: `database ${shownUrl(Redacted.value(url))} is unreachable: ${rootMessage(error)}` }))
    )
  }))

/** SqlClient + PgClient on DATABASE_URL or the embedded server; `pool` names it and sets its size (default `recon`, 10). */
export const DatabaseLive = (databaseUrl: Redacted.Redacted<string> | undefined, dataDir?: string, pool?: PoolName) => {
  let connected = false
  return Layer.unwrap(Effect.gen(function*() {
    const { url } = yield* DatabaseUrl
    // Registered before the pool is built, so it runs once the pool has closed.
    yield* Effect.addFinalizer(() => connected ? Effect.logInfo("database connections closed") : Effect.void)
    return reachable(url).pipe(
      Layer.tap(() => Effect.sync(() => (connected = true))),
      Layer.provideMerge(pgLayer(url, pool === undefined ? undefined : { maxConnections: POOL_BUDGETS[pool], applicationName: pool }))
    )
  })).pipe(
    Layer.provideMerge(DatabaseUrl.layer(databaseUrl, dataDir))
  )
}
