// The doctor's judgement of a snapshot: every finding (audit) and, for the findings a rule of
// section 2 can fix, the exact edits (repair plan), composed from the rules of `ReviewRules.ts`.
// Pure: the same snapshot gives the same answer, and a snapshot with the plan applied gives no repairable finding.
import { getPath, type Json, type JsonObject, jsonEquals, type Path, setPath, stringifyJson } from "./Json.ts"
import {
  belongsTo,
  collectionOptions,
  fieldIncomplete,
  fieldMismatch,
  filterTargetKeyArray,
  invalidJson,
  makeIndex,
  missingFilterTargetKey,
  missingSchema,
  nodeCollection,
  numberComponent,
  type Outcome,
  pageNumberComponent,
  rowKey,
  svcMeta,
  unregisteredFieldComponent,
  unregisteredPageComponent,
  type Verdict,
  wrongInterface
} from "./ReviewRules.ts"
import { isSystemField, platformOrigin } from "./Rules.ts"
import type { Snapshot } from "./Snapshot.ts"

export type CheckId =
  | "wrong-interface"
  | "number-component"
  | "missing-filter-target-key"
  | "missing-schema"
  | "field-mismatch"
  | "filter-target-key-array"
  | "collection-options"
  | "field-incomplete"
  | "row-key"
  | "page-number-component"
  | "unregistered-component"
  | "belongs-to"
  | "svc-meta"
  | "invalid-json"

export type MetaTable = "collections" | "fields" | "uiSchemas"
export type MetaColumn = "options" | "interface" | "schema"

export interface Finding {
  readonly check: CheckId
  /** The item of the document's verification checklist (§7) this finding fails, if any. */
  readonly checklist: 1 | 2 | 3 | 4 | 5 | null
  readonly table: MetaTable
  /** Primary key of the row (`key`, or `x-uid` for uiSchemas). */
  readonly key: string
  readonly collection: string | null
  /** `orders`, `orders.amount`, or `uiSchema <x-uid>`. */
  readonly subject: string
  readonly detail: string
  /** `auto`: `meta repair --apply` fixes it; `person`: someone has to decide. */
  readonly repair: "auto" | "person"
}

export interface Diff {
  readonly path: Path
  readonly before: Json | undefined
  readonly after: Json
}

export interface ColumnChange {
  readonly column: MetaColumn
  /** Exact column text before and after (NULL as null). */
  readonly before: string | null
  readonly after: string
  readonly diffs: ReadonlyArray<Diff>
}

export interface Change {
  readonly table: MetaTable
  readonly key: string
  readonly collection: string | null
  readonly subject: string
  readonly rules: ReadonlyArray<CheckId>
  readonly columns: ReadonlyArray<ColumnChange>
}

/** What the doctor left alone because NocoBase itself defines it (not findings). */
export interface Skipped {
  /** Platform-internal collections (with their fields and page nodes) and the package that defines each. */
  readonly platform: ReadonlyArray<{ readonly collection: string; readonly origin: string }>
  /** NocoBase system fields of the other collections, `collection.field`. */
  readonly systemFields: ReadonlyArray<string>
}

export interface Review {
  readonly findings: ReadonlyArray<Finding>
  readonly changes: ReadonlyArray<Change>
  readonly skipped: Skipped
}

// ---------------------------------------------------------------------------------------------
// edits of one row

class RowEdit {
  readonly diffs: Array<Diff> = []
  readonly rules = new Set<CheckId>()
  readonly initial: JsonObject
  value: JsonObject
  constructor(initial: JsonObject) {
    this.initial = initial
    this.value = initial
  }
  set(rule: CheckId, path: Path, after: Json): void {
    const before = getPath(this.value, path)
    if (jsonEquals(before, after)) return
    this.value = setPath(this.value, path, after)
    this.diffs.push({ path, before: getPath(this.initial, path), after })
    this.rules.add(rule)
  }
}

/** Applies the rules' edits to the row in their order and collects their findings. */
const applyOutcomes = (edit: RowEdit, outcomes: ReadonlyArray<Outcome>): Array<Verdict> =>
  outcomes.flatMap((outcome) => {
    for (const change of outcome.edits) edit.set(change.rule, change.path, change.value)
    return outcome.findings
  })

interface Row {
  readonly table: MetaTable
  readonly key: string
  readonly collection: string | null
  readonly subject: string
}

/** The findings of one row (in the key order `audit --json` prints). */
const findingsOf = (row: Row, verdicts: ReadonlyArray<Verdict>): Array<Finding> =>
  verdicts.map(({ check, checklist, detail, repair }) => ({
    check,
    checklist,
    table: row.table,
    key: row.key,
    collection: row.collection,
    subject: row.subject,
    detail,
    repair
  }))

/** The change of a row's JSON column, when the rules edited it. */
const columnChange = (column: MetaColumn, before: string | null, edit: RowEdit): ColumnChange | undefined =>
  edit.diffs.length === 0 ? undefined : { column, before, after: stringifyJson(edit.value), diffs: edit.diffs }

// ---------------------------------------------------------------------------------------------

/** Audit findings and repair plan of a snapshot: every rule of `ReviewRules.ts`, row by row. */
export const reviewSnapshot = (snapshot: Snapshot): Review => {
  const findings: Array<Finding> = []
  const changes: Array<Change> = []
  const platform = new Map<string, string>()
  for (const collection of snapshot.collections) {
    const origin = collection.optionsValid ? platformOrigin(collection.options) : undefined
    if (origin !== undefined) platform.set(collection.name, origin)
  }
  const systemFields: Array<string> = []

  // collections first: the field and page rules read the repaired options (filterTargetKey)
  const collectionIndex = makeIndex(snapshot)
  const repairedOptions = new Map<string, JsonObject>()
  for (const collection of snapshot.collections) {
    const row: Row = { table: "collections", key: collection.key, collection: collection.name, subject: collection.name }
    const invalid = invalidJson("options", collection.optionsValid)
    if (invalid.findings.length > 0) {
      findings.push(...findingsOf(row, invalid.findings))
      continue
    }
    if (platform.has(collection.name)) continue
    const edit = new RowEdit(collection.options)
    const verdicts = applyOutcomes(edit, [
      missingSchema(collection, snapshot.schema),
      collectionOptions(collection),
      missingFilterTargetKey(collection, collectionIndex),
      filterTargetKeyArray(collection)
    ])
    findings.push(...findingsOf(row, verdicts))
    repairedOptions.set(collection.name, edit.value)
    const options = columnChange("options", collection.optionsText, edit)
    if (options !== undefined) changes.push({ ...row, rules: [...edit.rules], columns: [options] })
  }
  const index = makeIndex(snapshot, repairedOptions)

  for (const field of snapshot.fields) {
    const collectionName = field.collectionName
    const collection = collectionName === null ? undefined : index.collections.get(collectionName)
    const row: Row = { table: "fields", key: field.key, collection: collectionName, subject: `${collectionName ?? "?"}.${field.name}` }
    if (collectionName !== null && platform.has(collectionName)) continue
    const invalid = invalidJson("options", field.optionsValid)
    if (invalid.findings.length > 0) {
      findings.push(...findingsOf(row, invalid.findings))
      continue
    }
    if (isSystemField(field.interface, field.options)) {
      systemFields.push(row.subject)
      continue
    }
    const edit = new RowEdit(field.options)
    const wrong = wrongInterface(field)
    const repaired = applyOutcomes(edit, [wrong, numberComponent(field), unregisteredFieldComponent(field), fieldIncomplete(field, collection)])
    const iface = wrong.interface ?? field.interface
    const verdicts = [
      ...repaired,
      ...applyOutcomes(edit, [fieldMismatch(field, { interface: iface, options: edit.value }), belongsTo(field, collection, index), svcMeta(field)])
    ]
    findings.push(...findingsOf(row, verdicts))
    const columns: Array<ColumnChange> = []
    if (wrong.interface !== undefined) {
      columns.push({ column: "interface", before: field.interface, after: wrong.interface, diffs: [{ path: [], before: field.interface, after: wrong.interface }] })
    }
    const options = columnChange("options", field.optionsText, edit)
    if (options !== undefined) columns.push(options)
    if (columns.length > 0) {
      const rules = new Set<CheckId>(wrong.interface === undefined ? [] : ["wrong-interface"])
      for (const rule of edit.rules) rules.add(rule)
      changes.push({ ...row, rules: [...rules], columns })
    }
  }

  for (const node of snapshot.nodes) {
    const owner = nodeCollection(index.nodes, snapshot.ancestors, node.uid)
    const collectionName = owner?.collection ?? null
    if (collectionName !== null && platform.has(collectionName) && (owner?.dataSource === undefined || owner.dataSource === "main")) continue
    const row: Row = { table: "uiSchemas", key: node.uid, collection: collectionName, subject: `uiSchema ${node.uid}` }
    const edit = new RowEdit(node.schema)
    const verdicts = node.schemaValid
      ? applyOutcomes(edit, [pageNumberComponent(node, owner), unregisteredPageComponent(node, owner), rowKey(node, owner, index)])
      : invalidJson("schema", false).findings
    findings.push(...findingsOf(row, verdicts))
    const schema = columnChange("schema", node.schemaText, edit)
    if (schema !== undefined) changes.push({ ...row, rules: [...edit.rules], columns: [schema] })
  }

  const skipped: Skipped = {
    platform: [...platform].map(([collection, origin]) => ({ collection, origin })),
    systemFields
  }
  return { findings, changes, skipped }
}

/** The findings of a snapshot, optionally only those about one collection. */
export const auditSnapshot = (snapshot: Snapshot, options?: { readonly collection?: string | undefined }): ReadonlyArray<Finding> => {
  const { findings } = reviewSnapshot(snapshot)
  const only = options?.collection
  return only === undefined ? findings : findings.filter((finding) => finding.collection === only)
}

/** The repair plan of a snapshot. */
export const planSnapshot = (snapshot: Snapshot): ReadonlyArray<Change> => reviewSnapshot(snapshot).changes
