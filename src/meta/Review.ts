// The doctor's judgement of a snapshot: every finding (audit) and, for the findings a rule of
// section 2 can fix, the exact edits (repair plan). Pure: the same snapshot gives the same answer,
// and a snapshot with the plan applied gives no repairable finding.
import {
  getPath,
  getString,
  hasKey,
  isJsonObject,
  type Json,
  type JsonObject,
  jsonEquals,
  type Path,
  setPath,
  stringifyJson
} from "./Json.ts"
import {
  ASSOCIATION_TYPES,
  fieldComponent,
  fieldMismatches,
  INPUT_NUMBER_PROPS,
  isRegisteredFieldComponent,
  isRegisteredPageComponent,
  isSynchronised,
  isSystemField,
  platformOrigin,
  NUMBER_COMPONENTS,
  svcMetaProblems,
  WRONG_INTERFACES
} from "./Rules.ts"
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
// helpers over the snapshot

interface Index {
  readonly snapshot: Snapshot
  readonly collections: ReadonlyMap<string, CollectionRow>
  readonly fields: ReadonlyMap<string, ReadonlyArray<FieldRow>>
  readonly nodes: ReadonlyMap<string, UiNode>
  /** Collection options with the planned repairs applied (for key lookups). */
  readonly repairedOptions: Map<string, JsonObject>
}

const makeIndex = (snapshot: Snapshot): Index => {
  const collections = new Map<string, CollectionRow>()
  for (const collection of snapshot.collections) collections.set(collection.name, collection)
  const fields = new Map<string, Array<FieldRow>>()
  for (const field of snapshot.fields) {
    if (field.collectionName === null) continue
    const list = fields.get(field.collectionName)
    if (list === undefined) fields.set(field.collectionName, [field])
    else list.push(field)
  }
  const nodes = new Map<string, UiNode>()
  for (const node of snapshot.nodes) nodes.set(node.uid, node)
  return { snapshot, collections, fields, nodes, repairedOptions: new Map() }
}

const fieldsOf = (index: Index, collection: string): ReadonlyArray<FieldRow> => index.fields.get(collection) ?? []

/** `schema.table` of a collection's real table. */
const tableOf = (index: Index, collection: CollectionRow, options: JsonObject): string => {
  const schema = typeof options["schema"] === "string" && options["schema"] !== "" ? options["schema"] : index.snapshot.schema
  const table = typeof options["tableName"] === "string" && options["tableName"] !== "" ? options["tableName"] : collection.name
  return `${schema}.${table}`
}

/** The real columns of the collection's table, when that table exists in the database. */
const columnsOf = (index: Index, collection: CollectionRow): ReadonlySet<string> | undefined =>
  index.snapshot.tables.get(tableOf(index, collection, index.repairedOptions.get(collection.name) ?? collection.options))

const columnNameOf = (field: FieldRow): string => {
  const column = field.options["field"]
  return typeof column === "string" && column !== "" ? column : field.name
}

const scalarField = (index: Index, collection: CollectionRow, name: string): FieldRow | undefined =>
  fieldsOf(index, collection.name).find((field) => field.name === name && (field.type === null || !ASSOCIATION_TYPES.has(field.type)))

/** Whether the collection really has `key`: a field of that name and, when the table exists, its column. */
const hasKeyField = (index: Index, collection: CollectionRow, key: string): boolean => {
  const field = scalarField(index, collection, key)
  if (field === undefined) return false
  const columns = columnsOf(index, collection)
  return columns === undefined || columns.has(columnNameOf(field))
}

/** Whether `name` exists in the collection as a field or as a column of its table. */
const hasFieldOrColumn = (index: Index, collection: CollectionRow, name: string): boolean =>
  fieldsOf(index, collection.name).some((field) => field.name === name || field.options["field"] === name) ||
  (columnsOf(index, collection)?.has(name) ?? false)

/** The key records of the collection are identified by (what TableV2 should use as rowKey). */
export const collectionKey = (options: JsonObject, fields: ReadonlyArray<FieldRow>): string | null => {
  const filterTargetKey = options["filterTargetKey"]
  if (typeof filterTargetKey === "string" && filterTargetKey !== "") return filterTargetKey
  if (Array.isArray(filterTargetKey)) {
    return filterTargetKey.length === 1 && typeof filterTargetKey[0] === "string" ? filterTargetKey[0] : null
  }
  const primary = fields.filter((field) => field.options["primaryKey"] === true)
  if (primary.length === 1) return primary[0]!.name
  if (options["autoGenId"] !== false) return "id"
  return null
}

/** Platform-internal tables keep `id` as their key: no `guid` field, an `id` field. */
export const isPlatformInternal = (fields: ReadonlyArray<FieldRow>): boolean =>
  !fields.some((field) => field.name === "guid") && fields.some((field) => field.name === "id")

/** The collection (and data source) a page node is about: its own, else the nearest ancestor's. */
export const nodeCollection = (
  nodes: ReadonlyMap<string, UiNode>,
  ancestors: ReadonlyMap<string, ReadonlyArray<string>>,
  uid: string
): { readonly collection: string; readonly dataSource: string | undefined } | undefined => {
  const own = (node: UiNode | undefined) => {
    if (node === undefined) return undefined
    const collection = getString(node.schema, ["x-decorator-props", "collection"])
    if (collection !== undefined && collection !== "") {
      return { collection, dataSource: getString(node.schema, ["x-decorator-props", "dataSource"]) }
    }
    const collectionField = getString(node.schema, ["x-collection-field"])
    if (collectionField !== undefined && collectionField.includes(".")) {
      return { collection: collectionField.slice(0, collectionField.indexOf(".")), dataSource: undefined }
    }
    return undefined
  }
  const self = own(nodes.get(uid))
  if (self !== undefined) return self
  for (const ancestor of ancestors.get(uid) ?? []) {
    const found = own(nodes.get(ancestor))
    if (found !== undefined) return found
  }
  return undefined
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

const numberComponentEdit = (edit: RowEdit, rule: CheckId, base: Path): void => {
  edit.set(rule, [...base, "x-component"], "InputNumber")
  const props = getPath(edit.value, [...base, "x-component-props"])
  if (!isJsonObject(props)) edit.set(rule, [...base, "x-component-props"], INPUT_NUMBER_PROPS)
  else for (const [key, value] of Object.entries(INPUT_NUMBER_PROPS)) edit.set(rule, [...base, "x-component-props", key], value)
}

const INCOMPLETE_KEYS = ["field", "rawType", "possibleTypes", "primaryKey", "unique"] as const

// ---------------------------------------------------------------------------------------------

/** Audit findings and repair plan of a snapshot. */
export const reviewSnapshot = (snapshot: Snapshot): Review => {
  const index = makeIndex(snapshot)
  const findings: Array<Finding> = []
  const changes: Array<Change> = []
  const metaSchema = snapshot.schema
  const platform = new Map<string, string>()
  for (const collection of snapshot.collections) {
    const origin = collection.optionsValid ? platformOrigin(collection.options) : undefined
    if (origin !== undefined) platform.set(collection.name, origin)
  }
  const systemFields: Array<string> = []

  // collections first: the rowKey rule reads the repaired filterTargetKey
  for (const collection of snapshot.collections) {
    const subject = collection.name
    const finding = (check: CheckId, checklist: Finding["checklist"], detail: string, repair: Finding["repair"]) =>
      findings.push({ check, checklist, table: "collections", key: collection.key, collection: collection.name, subject, detail, repair })
    if (!collection.optionsValid) {
      finding("invalid-json", null, "options is not a JSON object", "person")
      continue
    }
    if (platform.has(collection.name)) continue
    const options = collection.options
    const edit = new RowEdit(options)
    if (isSynchronised(options)) {
      if (!hasKey(options, "schema")) {
        edit.set("missing-schema", ["schema"], metaSchema)
        if (!hasKey(options, "tableName")) edit.set("missing-schema", ["tableName"], collection.name)
        edit.set("missing-schema", ["underscored"], false)
        finding("missing-schema", 4, `synchronised collection without options.schema (sets schema ${JSON.stringify(metaSchema)}, tableName, underscored false)`, "auto")
      } else {
        if (!hasKey(options, "tableName")) {
          edit.set("collection-options", ["tableName"], collection.name)
          finding("collection-options", null, "options.tableName absent", "auto")
        }
        if (options["underscored"] === true) {
          edit.set("collection-options", ["underscored"], false)
          finding("collection-options", null, "options.underscored is true; table and column names are already snake_case", "auto")
        }
      }
      if (options["autoGenId"] === false && !hasKey(options, "filterTargetKey")) {
        const fields = fieldsOf(index, collection.name)
        if (hasKeyField(index, collection, "guid")) {
          edit.set("missing-filter-target-key", ["filterTargetKey"], "guid")
          finding("missing-filter-target-key", 3, "autoGenId false without filterTargetKey (sets \"guid\")", "auto")
        } else if (!isPlatformInternal(fields)) {
          finding("missing-filter-target-key", 3, "autoGenId false without filterTargetKey, and no guid field/column to use", "person")
        }
      }
    }
    const filterTargetKey = options["filterTargetKey"]
    if (Array.isArray(filterTargetKey)) {
      if (filterTargetKey.length === 1 && typeof filterTargetKey[0] === "string") {
        edit.set("filter-target-key-array", ["filterTargetKey"], filterTargetKey[0])
        finding("filter-target-key-array", null, `filterTargetKey is the array ${JSON.stringify(filterTargetKey)}, must be a string`, "auto")
      } else {
        finding("filter-target-key-array", null, `filterTargetKey is the array ${JSON.stringify(filterTargetKey)} (composite key)`, "person")
      }
    }
    index.repairedOptions.set(collection.name, edit.value)
    if (edit.diffs.length > 0) {
      changes.push({
        table: "collections",
        key: collection.key,
        collection: collection.name,
        subject,
        rules: [...edit.rules],
        columns: [{ column: "options", before: collection.optionsText, after: stringifyJson(edit.value), diffs: edit.diffs }]
      })
    }
  }

  for (const field of snapshot.fields) {
    const collectionName = field.collectionName
    const collection = collectionName === null ? undefined : index.collections.get(collectionName)
    const subject = `${collectionName ?? "?"}.${field.name}`
    const finding = (check: CheckId, checklist: Finding["checklist"], detail: string, repair: Finding["repair"]) =>
      findings.push({ check, checklist, table: "fields", key: field.key, collection: collectionName, subject, detail, repair })
    if (collectionName !== null && platform.has(collectionName)) continue
    if (!field.optionsValid) {
      finding("invalid-json", null, "options is not a JSON object", "person")
      continue
    }
    if (isSystemField(field.interface, field.options)) {
      systemFields.push(subject)
      continue
    }
    const edit = new RowEdit(field.options)
    const columns: Array<ColumnChange> = []
    const rules = new Set<CheckId>()

    let iface = field.interface
    if (iface !== null && WRONG_INTERFACES[iface] !== undefined) {
      const next = WRONG_INTERFACES[iface]!
      finding("wrong-interface", 1, `interface ${JSON.stringify(iface)} should be ${JSON.stringify(next)}`, "auto")
      columns.push({ column: "interface", before: iface, after: next, diffs: [{ path: [], before: iface, after: next }] })
      rules.add("wrong-interface")
      iface = next
    }

    const component = fieldComponent(field.options)
    if (component !== undefined && NUMBER_COMPONENTS.has(component)) {
      numberComponentEdit(edit, "number-component", ["uiSchema"])
      finding("number-component", 2, `x-component ${JSON.stringify(component)} is not registered (#130); should be "InputNumber" with {stringMode:true, step:'1'}`, "auto")
    } else if (component !== undefined && !isRegisteredFieldComponent(component)) {
      finding("unregistered-component", null, `x-component ${JSON.stringify(component)} is not registered (#130) in collection ${collectionName ?? "?"}`, "person")
    }

    const synchronised = collection !== undefined && isSynchronised(collection.options)
    if (synchronised && (field.type === null || !ASSOCIATION_TYPES.has(field.type)) && !hasKey(field.options, "field")) {
      const missing = INCOMPLETE_KEYS.filter((key) => !hasKey(field.options, key))
      edit.set("field-incomplete", ["field"], field.name)
      finding("field-incomplete", null, `synchronised field lacks ${missing.join(", ")} (sets field ${JSON.stringify(field.name)})`, "auto")
    }

    for (const problem of fieldMismatches(field.type, iface, fieldComponent(edit.value))) {
      finding("field-mismatch", 5, problem, "person")
    }

    if (field.type === "belongsTo" && collection !== undefined) {
      const target = field.options["target"]
      if (typeof target !== "string" || target === "") {
        finding("belongs-to", null, "belongsTo without a target", "person")
      } else {
        const targetCollection = index.collections.get(target)
        // platform collections defined in plugin code have no collections row, only their table
        const targetTable = snapshot.tables.get(`${metaSchema}.${target}`)
        if (targetCollection === undefined && targetTable === undefined) {
          finding("belongs-to", null, `association ${field.name} in ${collectionName}: target collection ${JSON.stringify(target)} does not exist`, "person")
        } else if (targetCollection === undefined) {
          const declared = field.options["targetKey"]
          const targetKey = typeof declared === "string" && declared !== "" ? declared : "id"
          if (!targetTable!.has(targetKey)) {
            finding("belongs-to", null, `association ${field.name} in ${collectionName}: targetKey ${JSON.stringify(targetKey)} does not exist in table ${metaSchema}.${target}`, "person")
          }
        } else {
          const declared = field.options["targetKey"]
          const targetKey = typeof declared === "string" && declared !== ""
            ? declared
            : collectionKey(index.repairedOptions.get(target) ?? targetCollection.options, fieldsOf(index, target)) ?? "id"
          if (!hasFieldOrColumn(index, targetCollection, targetKey)) {
            finding("belongs-to", null, `association ${field.name} in ${collectionName}: targetKey ${JSON.stringify(targetKey)} does not exist in ${target}`, "person")
          }
        }
      }
      const declaredForeignKey = field.options["foreignKey"]
      const foreignKey = typeof declaredForeignKey === "string" && declaredForeignKey !== "" ? declaredForeignKey : `${field.name}Id`
      if (!hasFieldOrColumn(index, collection, foreignKey)) {
        finding("belongs-to", null, `association ${field.name} in ${collectionName}: foreignKey ${JSON.stringify(foreignKey)} does not exist in ${collectionName}`, "person")
      }
    }

    for (const problem of svcMetaProblems(field.options["svcMeta"])) {
      finding("svc-meta", null, `svcMeta: ${problem}`, "person")
    }

    if (edit.diffs.length > 0) {
      columns.push({ column: "options", before: field.optionsText, after: stringifyJson(edit.value), diffs: edit.diffs })
      for (const rule of edit.rules) rules.add(rule)
    }
    if (columns.length > 0) {
      changes.push({ table: "fields", key: field.key, collection: collectionName, subject, rules: [...rules], columns })
    }
  }

  for (const node of snapshot.nodes) {
    const owner = nodeCollection(index.nodes, snapshot.ancestors, node.uid)
    const collectionName = owner?.collection ?? null
    if (collectionName !== null && platform.has(collectionName) && (owner?.dataSource === undefined || owner.dataSource === "main")) continue
    const subject = `uiSchema ${node.uid}`
    const finding = (check: CheckId, detail: string, repair: Finding["repair"]) =>
      findings.push({ check, checklist: null, table: "uiSchemas", key: node.uid, collection: collectionName, subject, detail, repair })
    if (!node.schemaValid) {
      finding("invalid-json", "schema is not a JSON object", "person")
      continue
    }
    const edit = new RowEdit(node.schema)
    const component = getString(node.schema, ["x-component"])
    if (component !== undefined && NUMBER_COMPONENTS.has(component)) {
      numberComponentEdit(edit, "page-number-component", [])
      finding("page-number-component", `x-component ${JSON.stringify(component)} is not registered (#130) in a page of ${collectionName ?? "(no collection)"}; should be "InputNumber"`, "auto")
    } else if (component !== undefined && component !== "" && !isRegisteredPageComponent(component)) {
      finding("unregistered-component", `x-component ${JSON.stringify(component)} is not registered (#130) in a page of ${collectionName ?? "(no collection)"}`, "person")
    }

    const rowKeyPaths: Array<Path> = []
    if (node.schema["x-decorator"] === "TableBlockProvider" && getPath(node.schema, ["x-decorator-props", "rowKey"]) === "id") {
      rowKeyPaths.push(["x-decorator-props", "rowKey"])
    }
    if (component === "TableV2" && getPath(node.schema, ["x-component-props", "rowKey"]) === "id") {
      rowKeyPaths.push(["x-component-props", "rowKey"])
    }
    if (rowKeyPaths.length > 0 && owner !== undefined && (owner.dataSource === undefined || owner.dataSource === "main")) {
      const collection = index.collections.get(owner.collection)
      if (collection !== undefined) {
        const key = collectionKey(index.repairedOptions.get(collection.name) ?? collection.options, fieldsOf(index, collection.name))
        if (key !== null && key !== "id") {
          const where = rowKeyPaths.map((path) => path.join(".")).join(" and ")
          if (hasKeyField(index, collection, key)) {
            for (const path of rowKeyPaths) edit.set("row-key", path, key)
            finding("row-key", `table block on ${owner.collection} (keyed by ${key}) has ${where} "id" (sets ${JSON.stringify(key)})`, "auto")
          } else {
            finding("row-key", `table block on ${owner.collection} has ${where} "id"; the collection is keyed by ${key}, but ${key} was not found as a field and column`, "person")
          }
        }
      }
    }

    if (edit.diffs.length > 0) {
      changes.push({
        table: "uiSchemas",
        key: node.uid,
        collection: collectionName,
        subject,
        rules: [...edit.rules],
        columns: [{ column: "schema", before: node.schemaText, after: stringifyJson(edit.value), diffs: edit.diffs }]
      })
    }
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
