// What every benchmark starts with: a fresh, migrated database on DATABASE_URL (the user needs
// CREATE DATABASE) or on a throw-away embedded server, and a way to run queries on it.
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pgLayer } from "../src/db/Database.ts"
import { startEmbeddedPostgres } from "../src/db/EmbeddedPostgres.ts"
import { runMigrations } from "../src/db/Migrations.ts"

export interface BenchDatabase {
  /** The migrated benchmark database. */
  readonly url: string
  /** A temporary directory for the benchmark's own files. */
  readonly dir: string
  readonly embedded: boolean
  readonly run: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>
  /** Drops the database, stops the embedded server, removes the directory. */
  readonly close: () => Promise<void>
}

const runOn = <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.runPromise(effect.pipe(Effect.provide(Layer.orDie(pgLayer(Redacted.make(url), { maxConnections: 4 })))))

export const benchDatabase = async (name: string): Promise<BenchDatabase> => {
  const dir = mkdtempSync(join(tmpdir(), `recon-bench-${name}-`))
  chmodSync(dir, 0o755) // the embedded server runs as the unprivileged user "postgres" when we are root
  const external = process.env.DATABASE_URL
  const cluster = external ? undefined : await startEmbeddedPostgres({ dir: join(dir, "data"), persistent: false })
  const serverUrl = external ?? cluster!.url
  const dbName = `bench_${name}_${Date.now().toString(36)}`
  await runOn(serverUrl, Effect.gen(function*() { yield* (yield* SqlClient.SqlClient).unsafe(`CREATE DATABASE ${dbName}`) }))
  const parsed = new URL(serverUrl)
  parsed.pathname = `/${dbName}`
  const url = parsed.toString()
  await runOn(url, runMigrations())
  return {
    url,
    dir,
    embedded: cluster !== undefined,
    run: (effect) => runOn(url, effect),
    close: async () => {
      await runOn(serverUrl, Effect.gen(function*() { yield* (yield* SqlClient.SqlClient).unsafe(`DROP DATABASE ${dbName} WITH (FORCE)`) })).catch(() => {})
      await cluster?.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
