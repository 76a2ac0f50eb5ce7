// Numbered, forward-only migrations applied in one transaction under a transaction-scoped
// advisory lock, so several processes starting together on a fresh database are safe.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { migrations } from "./migrations/index.ts"

const MIGRATION_LOCK = 727_001

export interface Migration {
  readonly id: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

/** Applies the pending migrations; answers the ones it applied, e.g. `["0001_recon_tables"]`. */
export const runMigrations = Effect.fn("runMigrations")(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
    yield* sql`CREATE SCHEMA IF NOT EXISTS recon`
    yield* sql`CREATE TABLE IF NOT EXISTS recon.schema_migrations (
      id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`
    const done = yield* sql<{ id: number }>`SELECT id FROM recon.schema_migrations`
    const applied = new Set(done.map((row) => Number(row.id)))
    const names: Array<string> = []
    for (const migration of migrations) {
      if (applied.has(migration.id)) continue
      for (const statement of migration.statements) yield* sql.unsafe(statement)
      yield* sql`INSERT INTO recon.schema_migrations (id, name) VALUES (${migration.id}, ${migration.name})`
      names.push(`${String(migration.id).padStart(4, "0")}_${migration.name}`)
    }
    return names
  }))
})
