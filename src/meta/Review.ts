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
  type Index,
  invalidJson,
  makeIndex,
  missingFilterTargetKey,
  missingSchema,
  nodeCollection,
  type NodeOwner,
  numberComponent,
  type Outcome,
  pageNumberComponent,
  rowKey,
  svcMeta,
  unregisteredFieldComponent,
  unregisteredPageComponent,
  customComponentWithoutPlugin,
  type Verdict,
  wrongInterface
} from "./ReviewRules.ts"
import { isSystemField, platformOrigin } from "./MetadataRules.ts"
import type { CollectionRow, FieldRow, Snapshot, UiNode } from "./Snapshot.ts"

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
  | "plugin-missing"
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

const collectionRow = (collection: CollectionRow): Row => ({ table: "collections", key: collection.key, collection: collection.name, subject: collection.name })
const fieldRow = (field: FieldRow): Row => ({
  table: "fields",
  key: field.key,
  collection: field.collectionName,
  subject: `${field.collectionName ?? "?"}.${field.name}`
})
const nodeRow = (node: UiNode, owner: NodeOwner): Row => ({ table: "uiSchemas", key: node.uid, collection: owner?.collection ?? null, subject: `uiSchema ${node.uid}` })

/** What the review says about one row: its findings, and its change when a rule edited it. */
interface Judged {
  readonly findings: ReadonlyArray<Finding>
  readonly change: Change | undefined
}

/** `before`: a column a rule replaced ahead of the JSON column (the field's interface). */
const judged = (
  row: Row,
  verdicts: ReadonlyArray<Verdict>,
  json?: { readonly column: MetaColumn; readonly text: string | null; readonly edit: RowEdit },
  before?: { readonly rule: CheckId; readonly column: ColumnChange }
): Judged => {
  const columns: Array<ColumnChange> = before === undefined ? [] : [before.column]
  const rules = new Set<CheckId>(before === undefined ? [] : [before.rule])
  if (json !== undefined && json.edit.diffs.length > 0) {
    columns.push({ column: json.column, before: json.text, after: stringifyJson(json.edit.value), diffs: json.edit.diffs })
    for (const rule of json.edit.rules) rules.add(rule)
  }
  // the key order of `audit --json`
  const findings = verdicts.map(({ check, checklist, detail, repair }): Finding => ({
    check,
    checklist,
    table: row.table,
    key: row.key,
    collection: row.collection,
    subject: row.subject,
    detail,
    repair
  }))
  return { findings, change: columns.length === 0 ? undefined : { ...row, rules: [...rules], columns } }
}

const invalidRow = (row: Row, column: "options" | "schema"): Judged =>
  judged(row, invalidJson(column, false).findings)

// ---------------------------------------------------------------------------------------------
// one row of each table through its rules, in the order the audit lists their findings

const reviewCollection = (collection: CollectionRow, index: Index): Judged & { readonly repaired: JsonObject } => {
  const edit = new RowEdit(collection.options)
  const verdicts = applyOutcomes(edit, [
    missingSchema(collection, index.snapshot.schema),
    collectionOptions(collection),
    missingFilterTargetKey(collection, index),
    filterTargetKeyArray(collection)
  ])
  return { ...judged(collectionRow(collection), verdicts, { column: "options", text: collection.optionsText, edit }), repaired: edit.value }
}

const reviewField = (field: FieldRow, collection: CollectionRow | undefined, index: Index): Judged => {
  const edit = new RowEdit(field.options)
  const wrong = wrongInterface(field)
  const repairs = applyOutcomes(edit, [wrong, numberComponent(field), unregisteredFieldComponent(field), fieldIncomplete(field, collection)])
  // checklist 5 judges the field as the repairs above leave it
  const repaired = { interface: wrong.interface ?? field.interface, options: edit.value }
  const checks = applyOutcomes(edit, [fieldMismatch(field, repaired), belongsTo(field, collection, index), svcMeta(field)])
  const iface = wrong.interface === undefined ? undefined : {
    rule: "wrong-interface" as const,
    column: { column: "interface" as const, before: field.interface, after: wrong.interface, diffs: [{ path: [], before: field.interface, after: wrong.interface }] }
  }
  return judged(fieldRow(field), [...repairs, ...checks], { column: "options", text: field.optionsText, edit }, iface)
}

const reviewNode = (node: UiNode, owner: NodeOwner, index: Index): Judged => {
  const edit = new RowEdit(node.schema)
  const verdicts = applyOutcomes(edit, [pageNumberComponent(node, owner), unregisteredPageComponent(node, owner), customComponentWithoutPlugin(node, owner, index), rowKey(node, owner, index)])
  return judged(nodeRow(node, owner), verdicts, { column: "schema", text: node.schemaText, edit })
}

// ---------------------------------------------------------------------------------------------

/** Audit findings and repair plan of a snapshot: every rule of `ReviewRules.ts`, row by row. */
export const reviewSnapshot = (snapshot: Snapshot): Review => {
  const platform = new Map<string, string>()
  for (const collection of snapshot.collections) {
    const origin = collection.optionsValid ? platformOrigin(collection.options) : undefined
    if (origin !== undefined) platform.set(collection.name, origin)
  }
  const rows: Array<Judged> = []
  const systemFields: Array<string> = []

  // collections first: the field and page rules read the repaired options (filterTargetKey)
  const collectionIndex = makeIndex(snapshot)
  const repairedOptions = new Map<string, JsonObject>()
  for (const collection of snapshot.collections) {
    if (!collection.optionsValid) {
      rows.push(invalidRow(collectionRow(collection), "options"))
    } else if (!platform.has(collection.name)) {
      const judgedCollection = reviewCollection(collection, collectionIndex)
      repairedOptions.set(collection.name, judgedCollection.repaired)
      rows.push(judgedCollection)
    }
  }
  const index = makeIndex(snapshot, repairedOptions)

  for (const field of snapshot.fields) {
    if (field.collectionName !== null && platform.has(field.collectionName)) continue
    if (!field.optionsValid) rows.push(invalidRow(fieldRow(field), "options"))
    else if (isSystemField(field.interface, field.options)) systemFields.push(fieldRow(field).subject)
    else rows.push(reviewField(field, field.collectionName === null ? undefined : index.collections.get(field.collectionName), index))
  }

  for (const node of snapshot.nodes) {
    const owner = nodeCollection(index.nodes, snapshot.ancestors, node.uid)
    if (owner !== undefined && platform.has(owner.collection) && (owner.dataSource === undefined || owner.dataSource === "main")) continue
    rows.push(node.schemaValid ? reviewNode(node, owner, index) : invalidRow(nodeRow(node, owner), "schema"))
  }

  return {
    findings: rows.flatMap((row) => row.findings),
    changes: rows.flatMap((row) => row.change === undefined ? [] : [row.change]),
    skipped: { platform: [...platform].map(([collection, origin]) => ({ collection, origin })), systemFields }
  }
}

/** The findings of a snapshot, optionally only those about one collection. */
export const auditSnapshot = (snapshot: Snapshot, options?: { readonly collection?: string | undefined }): ReadonlyArray<Finding> => {
  const { findings } = reviewSnapshot(snapshot)
  const only = options?.collection
  return only === undefined ? findings : findings.filter((finding) => finding.collection === only)
}

/** The repair plan of a snapshot. */
export const planSnapshot = (snapshot: Snapshot): ReadonlyArray<Change> => reviewSnapshot(snapshot).changes
