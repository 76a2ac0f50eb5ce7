// Numbered, forward-only migrations applied in one transaction under a transaction-scoped
// advisory lock, so several processes starting together on a fresh database are safe; then, in the
// same transaction, the repeatable definitions (src/db/sql/) whose text changed since last applied
// (none of a version lower than the one recorded: an older release's process during an upgrade).
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { migrations } from "./migrations/index.ts"
import { type Definition, definitions } from "./sql/index.ts"

const MIGRATION_LOCK = 727_001

export interface Migration {
  readonly id: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

/** What recon.schema_definition records of a definition's text: its SHA-256, hex. */
export const definitionChecksum = (definition: Definition): string => createHash("sha256").update(definition.statement).digest("hex")

/** Applies the pending migrations, then the changed definitions; answers the migrations it applied, e.g. `["0001_recon_tables"]`. */
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
    // recon.schema_definition is migration 0024's.
    const recorded = new Map((yield* sql<{ name: string; version: number; checksum: string }>`
      SELECT name, version, checksum FROM recon.schema_definition`).map((row) => [row.name, row]))
    const redefined: Array<string> = []
    for (const definition of definitions) {
      const checksum = definitionChecksum(definition)
      const last = recorded.get(definition.name)
      if (last !== undefined && (last.checksum === checksum || Number(last.version) > definition.version)) continue
      yield* sql.unsafe(definition.statement)
      yield* sql`INSERT INTO recon.schema_definition (name, version, checksum) VALUES (${definition.name}, ${definition.version}, ${checksum})
        ON CONFLICT (name) DO UPDATE SET version = excluded.version, checksum = excluded.checksum, applied_at = now()`
      redefined.push(`${definition.name} v${definition.version}`)
    }
    if (redefined.length > 0) yield* Effect.logInfo(`definitions applied: ${redefined.join(", ")}`)
    return names
  }))
})
