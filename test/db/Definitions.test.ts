// Repeatable definitions (src/db/sql/): applied by runMigrations after the numbered migrations
// whenever the text of their file is not the one recorded (recon.schema_definition), and only then;
// never over a higher version (a newer release's text, seen by an older release's process). Each
// version is one text: test/db/fixtures/definitions.json.
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { definitionChecksum, runMigrations } from "../../src/db/Migrations.ts"
import { definitions } from "../../src/db/sql/index.ts"
import { createMigratedDatabase, runSql, sql } from "../support/database.ts"

const versions = JSON.parse(readFileSync(new URL("fixtures/definitions.json", import.meta.url), "utf8")) as ReadonlyArray<
  { readonly name: string; readonly version: number; readonly checksum: string }
>

const leaseDue = definitions.find((d) => d.name === "recon.lease_due_sms")!
const STUB = `CREATE OR REPLACE FUNCTION recon.lease_due_sms(p_now timestamptz, p_until timestamptz, p_limit integer, p_owners integer[])
  RETURNS jsonb LANGUAGE sql VOLATILE AS $fn$ SELECT '[]'::jsonb $fn$`

const state = (db: string) =>
  sql(db, (client) => client<{ version: number; checksum: string; stub: boolean }>`
    SELECT d.version, d.checksum, p.prosrc LIKE '%''[]''::jsonb%' AND p.prosrc NOT LIKE '%UPDATE SKIP LOCKED%' AS stub
    FROM recon.schema_definition AS d, pg_proc AS p
    WHERE d.name = 'recon.lease_due_sms' AND p.oid = 'recon.lease_due_sms(timestamptz, timestamptz, integer, integer[])'::regprocedure`)

describe("repeatable definitions", () => {
  it("are applied when their recorded checksum is not their file's, left alone when it is or when a higher version is recorded", async () => {
    const db = await createMigratedDatabase("definitions")
    assert.deepStrictEqual(await state(db), [{ version: leaseDue.version, checksum: definitionChecksum(leaseDue), stub: false }])

    // Replaced behind the runner's back, the checksum still the file's: left as it is.
    await sql(db, (client) => client.unsafe(STUB))
    assert.deepStrictEqual(await runSql(db, runMigrations()), [])
    assert.deepStrictEqual(await state(db), [{ version: leaseDue.version, checksum: definitionChecksum(leaseDue), stub: true }])

    // Recorded with another text (an older file): the file's text is applied and recorded.
    await sql(db, (client) => client`UPDATE recon.schema_definition SET checksum = 'an older text' WHERE name = 'recon.lease_due_sms'`)
    assert.deepStrictEqual(await runSql(db, runMigrations()), [])
    assert.deepStrictEqual(await state(db), [{ version: leaseDue.version, checksum: definitionChecksum(leaseDue), stub: false }])

    // A newer release's text (its version higher) is left alone by this release's runner.
    await sql(db, (client) => client.unsafe(STUB))
    await sql(db, (client) => client`UPDATE recon.schema_definition SET version = version + 1, checksum = 'a newer text' WHERE name = 'recon.lease_due_sms'`)
    assert.deepStrictEqual(await runSql(db, runMigrations()), [])
    assert.deepStrictEqual(await state(db), [{ version: leaseDue.version + 1, checksum: "a newer text", stub: true }])
  })

  it("are every function of recon and wallet but the trigger functions, the name keys (src/db/sql/index.ts says why) and the earlier release's signatures migration 0025 keeps", async () => {
    const db = await createMigratedDatabase("definitions_all")
    const found = await sql(db, (client) => client<{ name: string }>`
      SELECT n.nspname || '.' || p.proname AS name FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
      WHERE n.nspname IN ('recon', 'wallet') AND p.prorettype <> 'trigger'::regtype
        AND p.oid NOT IN ('recon.name_key'::regproc, 'recon.loose_name_key'::regproc,
          'recon.lease_due_sms(timestamptz, timestamptz, integer)'::regprocedure,
          'recon.match_pass(timestamptz, timestamptz, integer, integer, interval)'::regprocedure)
      ORDER BY 1`)
    assert.deepStrictEqual(found.map((row) => row.name), definitions.map((d) => d.name).sort())
  })

  it("keep one text per version: a changed text raises its version", () => {
    for (const definition of definitions) {
      const known = versions.find((v) => v.name === definition.name && v.version === definition.version)
      if (known !== undefined) {
        assert.strictEqual(definitionChecksum(definition), known.checksum,
          `${definition.name} v${definition.version} changed: raise its version in src/db/sql/index.ts and add it to test/db/fixtures/definitions.json`)
      }
    }
    assert.deepStrictEqual(definitions.filter((d) => !versions.some((v) => v.name === d.name && v.version === d.version)).map((d) => d.name), [],
      "every definition's version is in test/db/fixtures/definitions.json")
  })
})
