// The doctor's database operations: audit, the five checklist queries, repair plan, apply in one
// transaction with a before-image log (schema `meta_doctor`), and exact undo of a run.
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { INTERFACE_COMPONENT, NUMBER_COMPONENTS, RULE_INTERFACES, SYNC_FROM, TYPE_INTERFACES, WRONG_INTERFACES } from "./MetadataRules.ts"
import { type Change, type Finding, type MetaColumn, type MetaTable, reviewSnapshot, type Skipped } from "./Review.ts"
import { loadSnapshot, requireMetadataTables } from "./Snapshot.ts"

/** Where the repair log lives: outside the NocoBase schema, created on demand. */
export const LOG_SCHEMA = "meta_doctor"
const DOCTOR_LOCK = 727_101

export class RepairConflict extends Schema.TaggedError<RepairConflict>()("RepairConflict", {
  table: Schema.String,
  keys: Schema.Array(Schema.String)
}) {
  override get message() {
    return `rows of ${this.table} changed while repairing (${this.keys.slice(0, 5).join(", ")}${this.keys.length > 5 ? ", …" : ""}); nothing was changed, run it again`
  }
}

export class UndoFailed extends Schema.TaggedError<UndoFailed>()("UndoFailed", {
  runId: Schema.String,
  reason: Schema.Literals(["not-found", "already-undone", "changed-since"]),
  keys: Schema.Array(Schema.String)
}) {
  override get message() {
    switch (this.reason) {
      case "not-found":
        return `run ${this.runId} not found in ${LOG_SCHEMA}.repair_run`
      case "already-undone":
        return `run ${this.runId} was already undone`
      case "changed-since":
        return `run ${this.runId}: rows changed after the run (${this.keys.slice(0, 5).join(", ")}${this.keys.length > 5 ? ", …" : ""}); nothing was restored`
    }
  }
}

/** Findings of `schema` (default `svc`), optionally only about one collection, and what was left alone as NocoBase's own. */
export const auditReport = Effect.fn("meta.auditReport")(function*(schema: string, collection?: string) {
  const snapshot = yield* loadSnapshot(schema)
  const { findings, skipped } = reviewSnapshot(snapshot)
  const only: Skipped = collection === undefined ? skipped : {
    platform: skipped.platform.filter((item) => item.collection === collection),
    systemFields: skipped.systemFields.filter((subject) => subject.startsWith(`${collection}.`))
  }
  return {
    findings: collection === undefined ? findings : findings.filter((finding) => finding.collection === collection),
    skipped: only
  }
})

/** Findings of `schema` (default `svc`), optionally only about one collection. */
export const audit = Effect.fn("meta.audit")(function*(schema: string, collection?: string) {
  return (yield* auditReport(schema, collection)).findings
})

/** Whether `schema` has a collection named `name`. */
export const collectionExists = Effect.fn("meta.collectionExists")(function*(schema: string, name: string) {
  const sql = yield* SqlClient.SqlClient
  yield* requireMetadataTables(schema)
  const rows = yield* sql`SELECT 1 AS one FROM ${sql(`${schema}.collections`)} WHERE name = ${name}`
  return rows.length > 0
})

export interface ChecklistItem {
  readonly item: 1 | 2 | 3 | 4 | 5
  readonly title: string
  /** What the query returned (`collection.field` or collection names); must be empty. */
  readonly rows: ReadonlyArray<string>
}

const SubjectRow = Schema.Struct({ subject: Schema.String })
const subjects = <E, R>(effect: Effect.Effect<ReadonlyArray<object>, E, R>) =>
  effect.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(SubjectRow))),
    Effect.map((rows) => rows.map((row) => row.subject))
  )

/** The five queries of the verification checklist (§7), run in SQL; each must return no row. */
export const checklist = Effect.fn("meta.checklist")(function*(schema: string) {
  const sql = yield* SqlClient.SqlClient
  yield* requireMetadataTables(schema)
  const collections = sql(`${schema}.collections`)
  const fields = sql(`${schema}.fields`)
  const from = [...SYNC_FROM]
  const expected = JSON.stringify(
    Object.entries(TYPE_INTERFACES).flatMap(([type, interfaces]) =>
      interfaces.map((iface) => ({ type, interface: iface, component: INTERFACE_COMPONENT[iface] ?? null }))
    )
  )
  // NocoBase's own (see Rules.platformOrigin, Rules.isSystemField) is left out of every item, as from the audit
  const known = [...RULE_INTERFACES]
  const one = yield* subjects(sql`SELECT f."collectionName" || '.' || f.name AS subject FROM ${fields} f
    WHERE f.interface IN ${sql.in(Object.keys(WRONG_INTERFACES))}
      AND NOT EXISTS (SELECT 1 FROM ${collections} p WHERE p.name = f."collectionName" AND coalesce(p.options::jsonb ->> 'origin', '') <> '')
    ORDER BY 1`)
  const two = yield* subjects(sql`SELECT f."collectionName" || '.' || f.name AS subject FROM ${fields} f
    WHERE f.options::jsonb #>> '{uiSchema,x-component}' IN ${sql.in([...NUMBER_COMPONENTS])}
      AND NOT EXISTS (SELECT 1 FROM ${collections} p WHERE p.name = f."collectionName" AND coalesce(p.options::jsonb ->> 'origin', '') <> '')
      AND NOT (f.interface NOT IN ${sql.in(known)} AND f.options::jsonb #> '{uiSchema,x-read-pretty}' = 'true'::jsonb)
    ORDER BY 1`)
  // platform-internal tables (no guid field, an id field) keep id as their key and may appear: left out
  const three = yield* subjects(sql`SELECT c.name AS subject FROM ${collections} c
    WHERE c.options::jsonb ->> 'from' IN ${sql.in(from)}
      AND c.options::jsonb -> 'autoGenId' = 'false'::jsonb
      AND NOT coalesce(c.options::jsonb ? 'filterTargetKey', false)
      AND coalesce(c.options::jsonb ->> 'origin', '') = ''
      AND NOT (NOT EXISTS (SELECT 1 FROM ${fields} f WHERE f."collectionName" = c.name AND f.name = 'guid')
               AND EXISTS (SELECT 1 FROM ${fields} f WHERE f."collectionName" = c.name AND f.name = 'id'))
    ORDER BY 1`)
  const four = yield* subjects(sql`SELECT c.name AS subject FROM ${collections} c
    WHERE c.options::jsonb ->> 'from' IN ${sql.in(from)} AND NOT coalesce(c.options::jsonb ? 'schema', false)
      AND coalesce(c.options::jsonb ->> 'origin', '') = '' ORDER BY 1`)
  const five = yield* subjects(sql`SELECT f."collectionName" || '.' || f.name AS subject FROM ${fields} f
    WHERE f.interface IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM ${collections} p WHERE p.name = f."collectionName" AND coalesce(p.options::jsonb ->> 'origin', '') <> '')
      AND NOT (f.interface NOT IN ${sql.in(known)} AND f.options::jsonb #> '{uiSchema,x-read-pretty}' = 'true'::jsonb)
      AND f.type IN (SELECT e.type FROM json_to_recordset(${expected}::json) AS e(type text, interface text, component text))
      AND NOT EXISTS (
        SELECT 1 FROM json_to_recordset(${expected}::json) AS e(type text, interface text, component text)
        WHERE e.type = f.type AND e.interface = f.interface
          AND e.component IS NOT DISTINCT FROM f.options::jsonb #>> '{uiSchema,x-component}')
    ORDER BY 1`)
  const items: ReadonlyArray<ChecklistItem> = [
    { item: 1, title: "no field with interface string, bigInt, decimal or float", rows: one },
    { item: 2, title: "no field with x-component Integer or Number", rows: two },
    { item: 3, title: "no synchronised collection with autoGenId false lacking filterTargetKey", rows: three },
    { item: 4, title: "no synchronised collection lacking schema", rows: four },
    { item: 5, title: "every field has the interface and x-component of its type", rows: five }
  ]
  return items
})

/** What `meta repair --apply` would change now (nothing is written). */
export const planRepairs = Effect.fn("meta.planRepairs")(function*(schema: string) {
  const snapshot = yield* loadSnapshot(schema)
  return reviewSnapshot(snapshot).changes
})

const LOG_DDL = [
  `CREATE SCHEMA IF NOT EXISTS ${LOG_SCHEMA}`,
  `CREATE TABLE IF NOT EXISTS ${LOG_SCHEMA}.repair_run (
    id bigserial PRIMARY KEY,
    meta_schema text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    undone_at timestamptz,
    row_changes integer NOT NULL,
    page_changes integer NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${LOG_SCHEMA}.repair_row (
    run_id bigint NOT NULL REFERENCES ${LOG_SCHEMA}.repair_run (id),
    seq integer NOT NULL,
    table_name text NOT NULL,
    row_key text NOT NULL,
    column_name text NOT NULL,
    collection text,
    before_text text,
    after_text text NOT NULL,
    rules text NOT NULL,
    PRIMARY KEY (run_id, seq))`
] as const

const ensureLog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of LOG_DDL) yield* sql.unsafe(statement)
})

const keyColumn = (table: MetaTable) => table === "uiSchemas" ? "x-uid" : "key"

interface RowWrite {
  readonly key: string
  /** The guard: the column must still hold this text. */
  readonly expect: string | null
  readonly value: string | null
}

const KeyRow = Schema.Struct({ key: Schema.String })

/** Writes one column of many rows in one statement; fails (and so rolls back) when a row no longer holds `expect`. */
const writeColumn = (schema: string, table: MetaTable, column: MetaColumn, rows: ReadonlyArray<RowWrite>) =>
  Effect.gen(function*() {
    if (rows.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const target = sql(`${schema}.${table}`)
    const key = sql(keyColumn(table))
    const col = sql(column)
    const payload = JSON.stringify(rows)
    const updated = yield* (column === "interface"
      ? sql`UPDATE ${target} AS t SET ${col} = v.value
          FROM json_to_recordset(${payload}::json) AS v(key text, expect text, value text)
          WHERE t.${key} = v.key AND t.${col} IS NOT DISTINCT FROM v.expect
          RETURNING t.${key} AS key`
      : sql`UPDATE ${target} AS t SET ${col} = v.value::json
          FROM json_to_recordset(${payload}::json) AS v(key text, expect text, value text)
          WHERE t.${key} = v.key AND t.${col}::text IS NOT DISTINCT FROM v.expect
          RETURNING t.${key} AS key`).pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(KeyRow))))
    if (updated.length !== rows.length) {
      const done = new Set(updated.map((row) => row.key))
      return yield* new RepairConflict({ table, keys: rows.filter((row) => !done.has(row.key)).map((row) => row.key) })
    }
  })

const groupWrites = <A>(
  items: ReadonlyArray<A>,
  pick: (item: A) => { readonly table: MetaTable; readonly column: MetaColumn; readonly write: RowWrite }
) => {
  const groups = new Map<string, { table: MetaTable; column: MetaColumn; rows: Array<RowWrite> }>()
  for (const item of items) {
    const { column, table, write } = pick(item)
    const id = `${table}.${column}`
    const group = groups.get(id)
    if (group === undefined) groups.set(id, { table, column, rows: [write] })
    else group.rows.push(write)
  }
  return [...groups.values()]
}

const RunRow = Schema.Struct({ id: Schema.String })

export interface AppliedRun {
  readonly runId: string
  readonly changes: ReadonlyArray<Change>
}

/**
 * Applies every repair in one transaction (planned inside it, under an advisory lock) and logs the
 * before-image of each changed column; answers the run id. A run with no change is still logged.
 */
export const applyRepairs = Effect.fn("meta.applyRepairs")(function*(schema: string) {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${DOCTOR_LOCK})`
    yield* ensureLog
    const snapshot = yield* loadSnapshot(schema)
    const { changes } = reviewSnapshot(snapshot)
    const columns = changes.flatMap((change) => change.columns.map((column) => ({ change, column })))
    const pageChanges = changes.filter((change) => change.table === "uiSchemas").length
    const [run] = yield* sql`INSERT INTO ${sql(`${LOG_SCHEMA}.repair_run`)} (meta_schema, row_changes, page_changes)
      VALUES (${schema}, ${changes.length}, ${pageChanges}) RETURNING id::text AS id`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(RunRow)))
    )
    const runId = run!.id
    for (const group of groupWrites(columns, ({ change, column }) => ({
      table: change.table,
      column: column.column,
      write: { key: change.key, expect: column.before, value: column.after }
    }))) {
      yield* writeColumn(schema, group.table, group.column, group.rows)
    }
    if (columns.length > 0) {
      const log = JSON.stringify(columns.map(({ change, column }, seq) => ({
        seq,
        table_name: change.table,
        row_key: change.key,
        column_name: column.column,
        collection: change.collection,
        before_text: column.before,
        after_text: column.after,
        rules: change.rules.join(",")
      })))
      yield* sql`INSERT INTO ${sql(`${LOG_SCHEMA}.repair_row`)}
          (run_id, seq, table_name, row_key, column_name, collection, before_text, after_text, rules)
        SELECT ${runId}::bigint, v.seq, v.table_name, v.row_key, v.column_name, v.collection, v.before_text, v.after_text, v.rules
        FROM json_to_recordset(${log}::json) AS v(seq integer, table_name text, row_key text, column_name text,
          collection text, before_text text, after_text text, rules text)`
    }
    const applied: AppliedRun = { runId, changes }
    return applied
  }))
})

const LogRow = Schema.Struct({
  table_name: Schema.Literals(["collections", "fields", "uiSchemas"]),
  row_key: Schema.String,
  column_name: Schema.Literals(["options", "interface", "schema"]),
  before_text: Schema.NullOr(Schema.String),
  after_text: Schema.String
})
const RunInfo = Schema.Struct({ meta_schema: Schema.String, undone: Schema.Boolean })

const logExists = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ present: boolean }>`SELECT to_regclass(${`${LOG_SCHEMA}.repair_run`}) IS NOT NULL AS present`
  return row?.present === true
})

/** Restores every row of a run to its exact before-image, in one transaction; refuses when a row changed since. */
export const undoRepairs = Effect.fn("meta.undoRepairs")(function*(runId: string) {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${DOCTOR_LOCK})`
    if (!(yield* logExists) || !/^[0-9]{1,18}$/.test(runId)) {
      return yield* new UndoFailed({ runId, reason: "not-found", keys: [] })
    }
    const [run] = yield* sql`SELECT meta_schema, undone_at IS NOT NULL AS undone FROM ${sql(`${LOG_SCHEMA}.repair_run`)}
      WHERE id = ${runId}::bigint FOR UPDATE`.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(RunInfo))))
    if (run === undefined) return yield* new UndoFailed({ runId, reason: "not-found", keys: [] })
    if (run.undone) return yield* new UndoFailed({ runId, reason: "already-undone", keys: [] })
    const rows = yield* sql`SELECT table_name, row_key, column_name, before_text, after_text FROM ${sql(`${LOG_SCHEMA}.repair_row`)}
      WHERE run_id = ${runId}::bigint ORDER BY seq`.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(LogRow))))
    for (const group of groupWrites(rows, (row) => ({
      table: row.table_name,
      column: row.column_name,
      write: { key: row.row_key, expect: row.after_text, value: row.before_text }
    }))) {
      yield* writeColumn(run.meta_schema, group.table, group.column, group.rows).pipe(
        Effect.catchTag("RepairConflict", (conflict) => Effect.fail(new UndoFailed({ runId, reason: "changed-since", keys: conflict.keys })))
      )
    }
    yield* sql`UPDATE ${sql(`${LOG_SCHEMA}.repair_run`)} SET undone_at = now() WHERE id = ${runId}::bigint`
    return { runId, schema: run.meta_schema, restored: rows.length }
  }))
})

const LatestRun = Schema.Struct({ id: Schema.String })
const RunRowSql = Schema.Struct({
  table_name: Schema.Literals(["collections", "fields", "uiSchemas"]),
  row_key: Schema.String,
  column_name: Schema.Literals(["options", "interface", "schema"]),
  collection: Schema.NullOr(Schema.String),
  before_text: Schema.NullOr(Schema.String),
  after_text: Schema.String
})

/** One column value a repair run changed: what `meta refresh` checks the running server serves. */
export interface RepairedColumn {
  readonly table: MetaTable
  /** `collections.key`, `fields.key` or the `x-uid`. */
  readonly key: string
  readonly collection: string | null
  readonly column: MetaColumn
  /** The exact column text before and after (the before-image of the log). */
  readonly before: string | null
  readonly after: string
}

export interface RepairRun {
  readonly runId: string
  readonly rows: ReadonlyArray<RepairedColumn>
  /** The top-most ancestor (the page a user opens) of each repaired page node, from uiSchemaTreePath. */
  readonly pageRoots: Readonly<Record<string, string>>
}

const RootRow = Schema.Struct({ uid: Schema.String, root: Schema.String })

/** The latest applied, not undone run on `schema` that changed something, with every column value it changed. */
export const latestRun = Effect.fn("meta.latestRun")(function*(schema: string) {
  const sql = yield* SqlClient.SqlClient
  if (!(yield* logExists)) return undefined
  const [run] = yield* sql`SELECT id::text AS id FROM ${sql(`${LOG_SCHEMA}.repair_run`)}
    WHERE meta_schema = ${schema} AND undone_at IS NULL AND row_changes > 0 ORDER BY id DESC LIMIT 1`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(LatestRun)))
  )
  if (run === undefined) return undefined
  const rows = yield* sql`SELECT table_name, row_key, column_name, collection, before_text, after_text
    FROM ${sql(`${LOG_SCHEMA}.repair_row`)} WHERE run_id = ${run.id}::bigint ORDER BY seq`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(RunRowSql)))
  )
  const pageUids = [...new Set(rows.filter((row) => row.table_name === "uiSchemas").map((row) => row.row_key))]
  const roots = pageUids.length === 0 ? [] : yield* sql`SELECT DISTINCT ON (descendant) descendant AS uid, ancestor AS root
    FROM ${sql(`${schema}.uiSchemaTreePath`)} WHERE descendant IN ${sql.in(pageUids)} ORDER BY descendant, depth DESC`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(RootRow)))
  )
  const latest: RepairRun = {
    runId: run.id,
    pageRoots: Object.fromEntries(roots.map((row) => [row.uid, row.root])),
    rows: rows.map((row) => ({
      table: row.table_name,
      key: row.row_key,
      collection: row.collection,
      column: row.column_name,
      before: row.before_text,
      after: row.after_text
    }))
  }
  return latest
})

export type { Change, Finding }
