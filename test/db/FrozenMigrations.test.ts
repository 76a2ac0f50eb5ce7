// Released migrations never change: a database that ran one must end as a fresh one does. Each
// released migration is held to the checksums of its source (its files in src/db/migrations/,
// NNNN_*, e.g. 0024's .ts and .sql) and of the statements it runs (which also covers what it
// loads from elsewhere: the built-in templates' JSON, db/BuiltinTemplates.ts's statements).
// test/db/fixtures/released-migrations.json is the list; a migration joins it when it is released.
import { assert, describe, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { migrations } from "../../src/db/migrations/index.ts"

const dir = new URL("../../src/db/migrations/", import.meta.url)
const released = JSON.parse(readFileSync(new URL("fixtures/released-migrations.json", import.meta.url), "utf8")) as ReadonlyArray<
  { readonly id: number; readonly name: string; readonly source: string; readonly statements: string }
>
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

const checksums = (id: number) => {
  const prefix = `${String(id).padStart(4, "0")}_`
  const files = readdirSync(dir).filter((file) => file.startsWith(prefix)).sort()
  const migration = migrations.find((m) => m.id === id)
  return {
    id,
    name: migration?.name,
    source: sha256(files.map((file) => `${file}\n${readFileSync(new URL(file, dir), "utf8")}`).join("\n")),
    statements: sha256(JSON.stringify(migration?.statements ?? null))
  }
}

describe("released migrations", () => {
  it("are frozen: their source and their statements keep their checksums", () => {
    assert.isAbove(released.length, 0)
    for (const frozen of released) {
      assert.deepStrictEqual(checksums(frozen.id), frozen, `migration ${frozen.id} (${frozen.name}) changed: released migrations are frozen: add a new one`)
    }
  })

  it("are the first migrations of the list, in order", () => {
    assert.deepStrictEqual(migrations.slice(0, released.length).map((m) => m.id), released.map((r) => r.id))
  })
})
