// The one PostgreSQL client of a process: DATABASE_URL, or the embedded server under ./.data/pg
// (the demo's under ./.data/demo) started with the process and stopped with it.
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Redacted } from "effect"
import { resolve } from "node:path"
import { startEmbeddedPostgres } from "./EmbeddedPostgres.ts"

/** Where the embedded server keeps its data, relative to the working directory. */
export const EMBEDDED_DATA_DIR = ".data/pg"
/** The demo's own (`all --demo`), never the real one. */
export const DEMO_DATA_DIR = ".data/demo"

export class DatabaseUrl extends Context.Service<DatabaseUrl, {
  readonly url: Redacted.Redacted<string>
  readonly embedded: boolean
}>()("recon/db/Database/DatabaseUrl") {
  /** DATABASE_URL when set; else start (or reuse) the embedded cluster in `dataDir` (./.data/pg). */
  static readonly layer = (databaseUrl: string | undefined, dataDir = EMBEDDED_DATA_DIR) =>
    Layer.effect(
      DatabaseUrl,
      databaseUrl !== undefined && databaseUrl !== ""
        ? Effect.succeed({ url: Redacted.make(databaseUrl), embedded: false })
        : Effect.acquireRelease(
          Effect.tryPromise({
            try: () => startEmbeddedPostgres({ dir: resolve(dataDir), persistent: true }),
            catch: (cause) => new Error(`embedded PostgreSQL did not start: ${String(cause)}`)
          }).pipe(
            Effect.tap((cluster) => Effect.logInfo(`embedded PostgreSQL on 127.0.0.1:${cluster.port} (data in ${dataDir})`)),
            Effect.orDie
          ),
          (cluster) => Effect.promise(() => cluster.stop()).pipe(Effect.ignore)
        ).pipe(Effect.map((cluster) => ({ url: Redacted.make(cluster.url), embedded: true })))
    )
}

/** The pooled client for a URL; queries fail with a ConnectionError while the server is away and recover by themselves. */
export const pgLayer = (url: Redacted.Redacted<string>, options?: { readonly maxConnections?: number }) =>
  PgClient.layer({
    url,
    maxConnections: options?.maxConnections ?? 10,
    connectTimeout: Duration.seconds(5),
    idleTimeout: Duration.seconds(60),
    applicationName: "recon"
  })

/** SqlClient + PgClient on DATABASE_URL or the embedded server. */
export const DatabaseLive = (databaseUrl: string | undefined, dataDir?: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const { url } = yield* DatabaseUrl
    return pgLayer(url)
  })).pipe(
    Layer.provideMerge(DatabaseUrl.layer(databaseUrl, dataDir))
  )
