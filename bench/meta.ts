// Benchmark of the metadata doctor: audit and repair of 500 synchronised collections × 40 fields and
// 5,000 page nodes (target: under 5 s each). `node bench/meta.ts`; uses DATABASE_URL when set, else
// an embedded PostgreSQL in a temporary directory. Prints figures, asserts nothing.
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pgLayer } from "../src/db/Database.ts"
import { startEmbeddedPostgres } from "../src/db/EmbeddedPostgres.ts"
import { applyRepairs, audit, checklist, planRepairs, undoRepairs } from "../src/meta/Doctor.ts"

const COLLECTIONS = 500
const FIELDS_PER_COLLECTION = 40
const NODES_PER_COLLECTION = 10 // 5,000 page nodes

const KINDS = [
  { type: "string", iface: "input", wrong: "string", component: "Input", sqlType: "varchar(255)" },
  { type: "bigInt", iface: "integer", wrong: "bigInt", component: "InputNumber", bad: "Integer", sqlType: "bigint" },
  { type: "decimal", iface: "number", wrong: "decimal", component: "InputNumber", bad: "Number", sqlType: "numeric(18,2)" },
  { type: "float", iface: "number", wrong: "float", component: "InputNumber", bad: "Number", sqlType: "double precision" },
  { type: "integer", iface: "integer", component: "InputNumber", bad: "Integer", sqlType: "integer" },
  { type: "text", iface: "textarea", component: "Input.TextArea", sqlType: "text" },
  { type: "boolean", iface: "checkbox", component: "Checkbox", sqlType: "boolean" },
  { type: "datetimeNoTz", iface: "datetimeNoTz", component: "DatePicker", sqlType: "timestamp" },
  { type: "json", iface: "json", component: "Input.JSON", sqlType: "json" }
] as const

const build = (schema: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE SCHEMA ${schema}`)
    yield* sql.unsafe(`CREATE TABLE ${schema}.collections (key varchar(255) PRIMARY KEY, name varchar(255) UNIQUE, title varchar(255),
      inherit boolean DEFAULT false, hidden boolean DEFAULT false, options json DEFAULT '{}', description varchar(255), sort bigint)`)
    yield* sql.unsafe(`CREATE TABLE ${schema}.fields (key varchar(255) PRIMARY KEY, name varchar(255), type varchar(255), interface varchar(255),
      description varchar(255), "collectionName" varchar(255), "parentKey" varchar(255), "reverseKey" varchar(255),
      options json DEFAULT '{}', sort bigint, UNIQUE ("collectionName", name))`)
    yield* sql.unsafe(`CREATE TABLE ${schema}."uiSchemas" ("x-uid" varchar(255) PRIMARY KEY, name varchar(255), schema json DEFAULT '{}')`)
    yield* sql.unsafe(`CREATE TABLE ${schema}."uiSchemaTreePath" (ancestor varchar(255), descendant varchar(255), depth integer,
      async boolean, type varchar(255), sort integer, PRIMARY KEY (ancestor, descendant))`)

    const collections: Array<object> = []
    const fields: Array<object> = []
    const nodes: Array<object> = []
    const paths: Array<object> = []
    let sort = 0
    for (let c = 0; c < COLLECTIONS; c++) {
      const name = `biz_${c}`
      const base = { from: "db2cm", autoGenId: false, timestamps: false, createdBy: false, updatedBy: false }
      const options = c % 4 === 0
        ? base
        : c % 4 === 1
        ? { ...base, schema, tableName: name, underscored: false }
        : c % 4 === 2
        ? { ...base, schema, tableName: name, underscored: false, filterTargetKey: ["guid"] }
        : { ...base, schema, tableName: name, underscored: false, filterTargetKey: "guid" }
      collections.push({ key: `c${c}`, name, options: JSON.stringify(options, null, 2), sort: ++sort })
      const columns = ["guid varchar(36) PRIMARY KEY", "ref_guid varchar(36)"]
      fields.push({
        key: `c${c}_guid`, name: "guid", type: "string", interface: "input", collection: name, sort: ++sort,
        options: JSON.stringify({ field: "guid", primaryKey: true, rawType: "VARCHAR(36)", uiSchema: { title: "guid", "x-component": "Input" } })
      })
      fields.push({
        key: `c${c}_ref`, name: "ref", type: "belongsTo", interface: "m2o", collection: name, sort: ++sort,
        options: JSON.stringify({ target: `biz_${(c + 1) % COLLECTIONS}`, targetKey: "guid", foreignKey: "ref_guid", uiSchema: { "x-component": "AssociationField", "x-component-props": { fieldNames: { value: "guid", label: "guid" } } } })
      })
      fields.push({
        key: `c${c}_ref_guid`, name: "ref_guid", type: "string", interface: "input", collection: name, sort: ++sort,
        options: JSON.stringify({ field: "ref_guid", isForeignKey: true, uiSchema: { "x-component": "Input" } })
      })
      for (let f = 3; f < FIELDS_PER_COLLECTION; f++) {
        const kind = KINDS[f % KINDS.length]!
        const fieldName = `col_${f}`
        columns.push(`${fieldName} ${kind.sqlType}`)
        const wrongInterface = "wrong" in kind && f % 3 === 0
        const badComponent = "bad" in kind && f % 5 === 0
        const uiSchema = { title: fieldName, type: "string", "x-component": badComponent ? kind.bad : kind.component }
        const fieldOptions = f % 2 === 0 ? { uiSchema } : { field: fieldName, rawType: kind.sqlType, possibleTypes: [kind.type], primaryKey: false, unique: false, uiSchema }
        fields.push({
          key: `c${c}_${fieldName}`, name: fieldName, type: kind.type, interface: wrongInterface ? kind.wrong : kind.iface,
          collection: name, sort: ++sort, options: JSON.stringify(fieldOptions, null, wrongInterface ? 2 : undefined)
        })
      }
      yield* sql.unsafe(`CREATE TABLE ${schema}.${name} (${columns.join(", ")})`)
      // one table block per collection: provider → TableV2 → 4 columns → 4 field nodes
      const block = `b${c}`
      const table = `t${c}`
      nodes.push({ uid: block, schema: JSON.stringify({ type: "void", "x-decorator": "TableBlockProvider", "x-decorator-props": { collection: name, dataSource: "main", action: "list", rowKey: "id" }, "x-component": "CardItem" }) })
      nodes.push({ uid: table, schema: JSON.stringify({ type: "array", "x-component": "TableV2", "x-component-props": { rowKey: c % 2 === 0 ? "id" : "guid" } }) })
      paths.push({ ancestor: block, descendant: block, depth: 0 }, { ancestor: table, descendant: table, depth: 0 }, { ancestor: block, descendant: table, depth: 1 })
      for (let k = 0; k < (NODES_PER_COLLECTION - 2) / 2; k++) {
        const column = `k${c}_${k}`
        const field = `v${c}_${k}`
        nodes.push({ uid: column, schema: JSON.stringify({ type: "void", "x-decorator": "TableV2.Column.Decorator", "x-component": "TableV2.Column" }) })
        nodes.push({ uid: field, schema: JSON.stringify({ type: "string", "x-collection-field": `${name}.col_${k + 3}`, "x-component": k === 1 ? "Number" : "CollectionField", "x-read-pretty": true }) })
        paths.push(
          { ancestor: column, descendant: column, depth: 0 }, { ancestor: table, descendant: column, depth: 1 }, { ancestor: block, descendant: column, depth: 2 },
          { ancestor: field, descendant: field, depth: 0 }, { ancestor: column, descendant: field, depth: 1 }, { ancestor: table, descendant: field, depth: 2 }, { ancestor: block, descendant: field, depth: 3 }
        )
      }
    }
    const t = (name: string) => sql(`${schema}.${name}`)
    yield* sql`INSERT INTO ${t("collections")} (key, name, title, options, sort)
      SELECT v.key, v.name, v.name, v.options::json, v.sort FROM json_to_recordset(${JSON.stringify(collections)}::json) AS v(key text, name text, options text, sort bigint)`
    yield* sql`INSERT INTO ${t("fields")} (key, name, type, interface, "collectionName", options, sort)
      SELECT v.key, v.name, v.type, v.interface, v.collection, v.options::json, v.sort
      FROM json_to_recordset(${JSON.stringify(fields)}::json) AS v(key text, name text, type text, interface text, collection text, options text, sort bigint)`
    yield* sql`INSERT INTO ${t("uiSchemas")} ("x-uid", name, schema)
      SELECT v.uid, v.uid, v.schema::json FROM json_to_recordset(${JSON.stringify(nodes)}::json) AS v(uid text, schema text)`
    yield* sql`INSERT INTO ${t("uiSchemaTreePath")} (ancestor, descendant, depth, async, type, sort)
      SELECT v.ancestor, v.descendant, v.depth, false, 'properties', 1 FROM json_to_recordset(${JSON.stringify(paths)}::json) AS v(ancestor text, descendant text, depth integer)`
    return { collections: collections.length, fields: fields.length, nodes: nodes.length }
  })

const timed = async <A>(label: string, run: () => Promise<A>, describe: (a: A) => string): Promise<A> => {
  const started = performance.now()
  const result = await run()
  const ms = performance.now() - started
  console.log(`${label.padEnd(28)} ${(ms / 1000).toFixed(2).padStart(6)} s   ${describe(result)}`)
  return result
}

const main = async () => {
  let url = process.env["DATABASE_URL"]
  let cleanup = async () => {}
  if (url === undefined || url === "") {
    const dir = mkdtempSync(join(tmpdir(), "recon-meta-bench-"))
    chmodSync(dir, 0o755) // the embedded server runs as the unprivileged user "postgres" when we are root
    const cluster = await startEmbeddedPostgres({ dir: join(dir, "data"), persistent: false })
    url = cluster.url
    cleanup = async () => {
      await cluster.stop()
      rmSync(dir, { recursive: true, force: true })
    }
    console.log(`embedded PostgreSQL on 127.0.0.1:${cluster.port}`)
  }
  const schema = `bench_${Date.now().toString(36)}`
  const layer = pgLayer(Redacted.make(url), { maxConnections: 4 })
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.provide(effect, layer))
  try {
    const size = await timed("build fixture", () => run(build(schema)), (s) => `${s.collections} collections, ${s.fields} fields, ${s.nodes} page nodes`)
    await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`ANALYZE ${schema}.fields`)
    }))
    void size
    await timed("audit", () => run(audit(schema)), (f) => `${f.length} findings (${f.filter((x) => x.repair === "auto").length} repairable)`)
    await timed("checklist (5 queries)", () => run(checklist(schema)), (items) => items.map((i) => `${i.item}:${i.rows.length}`).join(" "))
    await timed("repair dry run (plan)", () => run(planRepairs(schema)), (c) => `${c.length} rows would change`)
    const applied = await timed("repair --apply", () => run(applyRepairs(schema)), (a) => `${a.changes.length} rows changed, run ${a.runId}`)
    await timed("audit after repair", () => run(audit(schema)), (f) => `${f.length} findings`)
    await timed("repair --apply again", () => run(applyRepairs(schema)), (a) => `${a.changes.length} rows changed`)
    await timed("repair --undo", () => run(undoRepairs(applied.runId)), (u) => `${u.restored} column values restored`)
  } finally {
    await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      yield* sql.unsafe(`DELETE FROM meta_doctor.repair_row WHERE run_id IN (SELECT id FROM meta_doctor.repair_run WHERE meta_schema = '${schema}')`)
      yield* sql.unsafe(`DELETE FROM meta_doctor.repair_run WHERE meta_schema = '${schema}'`)
    })).catch(() => undefined)
    await cleanup()
  }
}

await main()
