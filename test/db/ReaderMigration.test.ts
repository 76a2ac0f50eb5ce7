// Migration 0012 on a database that ran 0007's built-ins: the kept templates keep their ids, the
// guessed ones give way to real layouts in place, the dropped ones are deleted, and an operator's
// template is untouched.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../../src/db/Migrations.ts"
import { builtins0007, builtins0012, builtinUpsert } from "../../src/db/BuiltinTemplates.ts"
import { createTestDatabase, runSql } from "../support/database.ts"

interface Row {
  readonly id: number
  readonly key: string | null
  readonly rule: string
  readonly rule_source: string
}

const templates = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<Row>`SELECT id::int AS id, builtin_key AS key, rule, rule_source FROM recon.shooter_template_recharge ORDER BY id`
})

describe("migration 0012", () => {
  it("replaces and drops built-ins by key, ids kept, operator templates untouched", async () => {
    const url = await createTestDatabase()
    await runSql(url, runMigrations())
    // Back to the state 0007 left: its built-ins, an operator's template, 0012 not applied.
    await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const statement of builtinUpsert(builtins0007)) yield* sql.unsafe(statement)
      yield* sql`INSERT INTO recon.shooter_template_recharge (bank, sender, sample, rule, rule_source)
        VALUES ('운영자', NULL, 'sample', '(?P<name>\\S+) (?P<amount>\\d+)', 'manual')`
      yield* sql`DELETE FROM recon.schema_migrations WHERE id = 12`
    }))
    const before = await runSql(url, templates)
    assert.deepStrictEqual(await runSql(url, runMigrations()), ["0012_reader"])
    const after = await runSql(url, templates)

    assert.deepStrictEqual(after.filter((t) => t.rule_source === "builtin").map((t) => t.key).sort(), builtins0012.map((t) => t.key).sort())
    for (const t of after.filter((row) => row.key !== null)) assert.strictEqual(t.id, before.find((b) => b.key === t.key)!.id, t.key!)
    assert.include(after.find((t) => t.key === "mg")!.rule, "<(?:MG)?새마을금고>")
    assert.isUndefined(after.find((t) => t.key === "generic_amount_name"))
    assert.deepStrictEqual(after.filter((t) => t.rule_source === "manual"), before.filter((t) => t.rule_source === "manual"))
  })
})
