// Repeatable definitions (src/db/sql/): applied by runMigrations after the numbered migrations
// whenever the text of their file is not the one recorded (recon.schema_definition), and only then.
import { assert, describe, it } from "@effect/vitest"
import { definitionChecksum, runMigrations } from "../../src/db/Migrations.ts"
import { definitions } from "../../src/db/sql/index.ts"
import { createMigratedDatabase, runSql, sql } from "../support/database.ts"

const leaseDue = definitions.find((d) => d.name === "recon.lease_due_sms")!
const STUB = `CREATE OR REPLACE FUNCTION recon.lease_due_sms(p_now timestamptz, p_until timestamptz, p_limit integer)
  RETURNS jsonb LANGUAGE sql VOLATILE AS $fn$ SELECT '[]'::jsonb $fn$`

const state = (db: string) =>
  sql(db, (client) => client<{ checksum: string; stub: boolean }>`
    SELECT d.checksum, p.prosrc LIKE '%''[]''::jsonb%' AND p.prosrc NOT LIKE '%FOR UPDATE SKIP LOCKED%' AS stub
    FROM recon.schema_definition AS d, pg_proc AS p
    WHERE d.name = 'recon.lease_due_sms' AND p.oid = 'recon.lease_due_sms'::regproc`)

describe("repeatable definitions", () => {
  it("are applied when their recorded checksum is not their file's, and left alone when it is", async () => {
    const db = await createMigratedDatabase("definitions")
    assert.deepStrictEqual(await state(db), [{ checksum: definitionChecksum(leaseDue), stub: false }])

    // Replaced behind the runner's back, the checksum still the file's: left as it is.
    await sql(db, (client) => client.unsafe(STUB))
    assert.deepStrictEqual(await runSql(db, runMigrations()), [])
    assert.deepStrictEqual(await state(db), [{ checksum: definitionChecksum(leaseDue), stub: true }])

    // Recorded with another text (an older file): the file's text is applied and recorded.
    await sql(db, (client) => client`UPDATE recon.schema_definition SET checksum = 'an older text' WHERE name = 'recon.lease_due_sms'`)
    assert.deepStrictEqual(await runSql(db, runMigrations()), [])
    assert.deepStrictEqual(await state(db), [{ checksum: definitionChecksum(leaseDue), stub: false }])
  })
})
