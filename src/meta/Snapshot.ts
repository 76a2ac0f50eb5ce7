// Reads the NocoBase metadata tables of one schema (collections, fields, uiSchemas and their tree
// paths) plus the real columns of the tables they describe, as one in-memory snapshot.
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { isJsonObject, type JsonObject, parseJson } from "./Json.ts"
import { isCustomComponentsPlugin } from "./MetadataRules.ts"

export interface CollectionRow {
  readonly key: string
  readonly name: string
  /** The options object ({} when the column is NULL or not an object; see `optionsValid`). */
  readonly options: JsonObject
  /** The column text exactly as stored, NULL as null: the before-image of a repair. */
  readonly optionsText: string | null
  readonly optionsValid: boolean
}

export interface FieldRow {
  readonly key: string
  readonly name: string
  readonly type: string | null
  readonly interface: string | null
  readonly collectionName: string | null
  readonly options: JsonObject
  readonly optionsText: string | null
  readonly optionsValid: boolean
}

/** One `uiSchemas` row: a single node without its children. */
export interface UiNode {
  readonly uid: string
  readonly name: string | null
  readonly schema: JsonObject
  readonly schemaText: string | null
  readonly schemaValid: boolean
}

export interface Snapshot {
  /** The PostgreSQL schema that holds the metadata tables (`svc`). */
  readonly schema: string
  readonly collections: ReadonlyArray<CollectionRow>
  readonly fields: ReadonlyArray<FieldRow>
  readonly nodes: ReadonlyArray<UiNode>
  /** The ancestors of each node, nearest first (from `uiSchemaTreePath`). */
  readonly ancestors: ReadonlyMap<string, ReadonlyArray<string>>
  /** The real columns of every table in the schemas the collections point at, keyed `schema.table`. */
  readonly tables: ReadonlyMap<string, ReadonlySet<string>>
  /**
   * Whether plugin-svc-preset-actions (which registers SvcPrettyField, SvcPostAction, SvcPatchAction)
   * is enabled on the server, from NocoBase's `applicationPlugins` table; `unknown` when the schema has none.
   */
  readonly customComponentsPlugin: "enabled" | "absent" | "unknown"
}

export class MetaTablesMissing extends Schema.TaggedError<MetaTablesMissing>()("MetaTablesMissing", {
  schema: Schema.String,
  missing: Schema.Array(Schema.String)
}) {
  override get message() {
    return `schema ${this.schema} has no NocoBase metadata table ${this.missing.join(", ")} (check --schema)`
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
/** Schema names we accept on the command line: plain identifiers. */
export const isSchemaName = (name: string): boolean => IDENTIFIER.test(name) && name.length <= 63

const CollectionSql = Schema.Struct({ key: Schema.String, name: Schema.String, options_text: Schema.NullOr(Schema.String) })
const FieldSql = Schema.Struct({
  key: Schema.String,
  name: Schema.String,
  type: Schema.NullOr(Schema.String),
  interface: Schema.NullOr(Schema.String),
  collection_name: Schema.NullOr(Schema.String),
  options_text: Schema.NullOr(Schema.String)
})
const NodeSql = Schema.Struct({ uid: Schema.String, name: Schema.NullOr(Schema.String), schema_text: Schema.NullOr(Schema.String) })
const PathSql = Schema.Struct({ ancestor: Schema.String, descendant: Schema.String })
const ColumnSql = Schema.Struct({ table_schema: Schema.String, table_name: Schema.String, column_name: Schema.String })
const RegSql = Schema.Struct({ name: Schema.String, present: Schema.Boolean })
const PluginSql = Schema.Struct({ name: Schema.NullOr(Schema.String), package_name: Schema.NullOr(Schema.String), enabled: Schema.NullOr(Schema.Boolean) })

const readObject = (text: string | null): { readonly value: JsonObject; readonly valid: boolean } => {
  if (text === null) return { value: {}, valid: true }
  const value = parseJson(text)
  return isJsonObject(value) ? { value, valid: true } : { value: {}, valid: false }
}

export const METADATA_TABLES = ["collections", "fields", "uiSchemas", "uiSchemaTreePath"] as const

/** Fails with MetaTablesMissing when one of the four tables is absent from `schema`. */
export const requireMetadataTables = Effect.fn("requireMetadataTables")(function*(schema: string) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`SELECT t.name, to_regclass(quote_ident(${schema}) || '.' || quote_ident(t.name)) IS NOT NULL AS present
    FROM unnest(ARRAY['collections', 'fields', 'uiSchemas', 'uiSchemaTreePath']) AS t(name)`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(RegSql)))
  )
  const missing = rows.filter((row) => !row.present).map((row) => row.name)
  if (missing.length > 0) return yield* new MetaTablesMissing({ schema, missing })
})

/** Loads the snapshot of `schema`. */
export const loadSnapshot = Effect.fn("loadSnapshot")(function*(schema: string) {
  const sql = yield* SqlClient.SqlClient
  yield* requireMetadataTables(schema)
  const table = (name: string) => sql(`${schema}.${name}`)
  const [collectionRows, fieldRows, nodeRows, pathRows] = yield* Effect.all([
    sql`SELECT key, name, options::text AS options_text FROM ${table("collections")} ORDER BY sort NULLS LAST, name`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(CollectionSql)))
    ),
    sql`SELECT key, name, type, interface, "collectionName" AS collection_name, options::text AS options_text
      FROM ${table("fields")} ORDER BY "collectionName", sort NULLS LAST, name`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(FieldSql)))
    ),
    sql`SELECT "x-uid" AS uid, name, schema::text AS schema_text FROM ${table("uiSchemas")} ORDER BY "x-uid"`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(NodeSql)))
    ),
    sql`SELECT ancestor, descendant FROM ${table("uiSchemaTreePath")} WHERE depth > 0 ORDER BY descendant, depth`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(PathSql)))
    )
  ], { concurrency: 1 })

  const collections: Array<CollectionRow> = collectionRows.map((row) => {
    const options = readObject(row.options_text)
    return { key: row.key, name: row.name, options: options.value, optionsText: row.options_text, optionsValid: options.valid }
  })
  const fields: Array<FieldRow> = fieldRows.map((row) => {
    const options = readObject(row.options_text)
    return {
      key: row.key,
      name: row.name,
      type: row.type,
      interface: row.interface,
      collectionName: row.collection_name,
      options: options.value,
      optionsText: row.options_text,
      optionsValid: options.valid
    }
  })
  const nodes: Array<UiNode> = nodeRows.map((row) => {
    const node = readObject(row.schema_text)
    return { uid: row.uid, name: row.name, schema: node.value, schemaText: row.schema_text, schemaValid: node.valid }
  })
  const ancestors = new Map<string, Array<string>>()
  for (const row of pathRows) {
    const list = ancestors.get(row.descendant)
    if (list === undefined) ancestors.set(row.descendant, [row.ancestor])
    else list.push(row.ancestor)
  }

  const schemas = new Set<string>([schema])
  for (const collection of collections) {
    const own = collection.options["schema"]
    if (typeof own === "string" && own !== "") schemas.add(own)
  }
  const columnRows = yield* sql`SELECT table_schema, table_name, column_name FROM information_schema.columns
    WHERE table_schema IN ${sql.in([...schemas])}`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(ColumnSql)))
  )
  const tables = new Map<string, Set<string>>()
  for (const row of columnRows) {
    const name = `${row.table_schema}.${row.table_name}`
    const columns = tables.get(name)
    if (columns === undefined) tables.set(name, new Set([row.column_name]))
    else columns.add(row.column_name)
  }
  const customComponentsPlugin = yield* pluginState(schema)
  const snapshot: Snapshot = { schema, collections, fields, nodes, ancestors, tables, customComponentsPlugin }
  return snapshot
})

/** Whether `schema`'s NocoBase has plugin-svc-preset-actions enabled (see `Snapshot.customComponentsPlugin`). */
export const pluginState = Effect.fn("pluginState")(function*(schema: string) {
  const sql = yield* SqlClient.SqlClient
  const [table] = yield* sql`SELECT to_regclass(quote_ident(${schema}) || '."applicationPlugins"') IS NOT NULL AS present`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ present: Schema.Boolean }))))
  )
  if (table?.present !== true) return "unknown" as const
  const rows = yield* sql`SELECT name, "packageName" AS package_name, enabled FROM ${sql(`${schema}.applicationPlugins`)}`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(PluginSql)))
  )
  return rows.some((row) => row.enabled === true && isCustomComponentsPlugin(row.name, row.package_name)) ? "enabled" as const : "absent" as const
})
