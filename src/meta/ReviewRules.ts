// The doctor's checks, one pure function each: a metadata row (and what it needs of the snapshot) in,
// its findings and, for the repairable ones, the edits that fix them out. `Review.ts` composes them.
import { getPath, getString, hasKey, isJsonObject, type Json, type JsonObject, type Path } from "./Json.ts"
import {
  ASSOCIATION_TYPES,
  CUSTOM_COMPONENTS,
  fieldComponent,
  fieldMismatches,
  INPUT_NUMBER_PROPS,
  isRegisteredFieldComponent,
  isRegisteredPageComponent,
  isSynchronised,
  NUMBER_COMPONENTS,
  svcMetaProblems,
  WRONG_INTERFACES
} from "./MetadataRules.ts"
import type { CheckId, Finding } from "./Review.ts"
import type { CollectionRow, FieldRow, Snapshot, UiNode } from "./Snapshot.ts"

/** One finding about the row a rule looked at (the composer adds table, key, collection and subject). */
export interface Verdict {
  readonly check: CheckId
  readonly checklist: Finding["checklist"]
  readonly detail: string
  readonly repair: Finding["repair"]
}

/** One value a repair sets in the row's JSON column. */
export interface Edit {
  readonly rule: CheckId
  readonly path: Path
  readonly value: Json
}

/** What a rule says about one row; `interface` is the corrected `fields.interface` column. */
export interface Outcome {
  readonly findings: ReadonlyArray<Verdict>
  readonly edits: ReadonlyArray<Edit>
  readonly interface?: string
}

const NOTHING: Outcome = { findings: [], edits: [] }
const outcome = (findings: ReadonlyArray<Verdict>, edits: ReadonlyArray<Edit> = []): Outcome => ({ findings, edits })
const verdict = (check: CheckId, checklist: Finding["checklist"], detail: string, repair: Finding["repair"]): Verdict => ({
  check,
  checklist,
  detail,
  repair
})

// ---------------------------------------------------------------------------------------------
// what the rules read of the snapshot

/** The snapshot by name, and the collection options as the collection rules repair them. */
export interface Index {
  readonly snapshot: Snapshot
  readonly collections: ReadonlyMap<string, CollectionRow>
  readonly fields: ReadonlyMap<string, ReadonlyArray<FieldRow>>
  readonly nodes: ReadonlyMap<string, UiNode>
  /** Collection options with the planned repairs applied (for key lookups); empty while the collections are reviewed. */
  readonly repairedOptions: ReadonlyMap<string, JsonObject>
}

export const makeIndex = (snapshot: Snapshot, repairedOptions: ReadonlyMap<string, JsonObject> = new Map()): Index => {
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
  return { snapshot, collections, fields, nodes, repairedOptions }
}

const fieldsOf = (index: Index, collection: string): ReadonlyArray<FieldRow> => index.fields.get(collection) ?? []

const optionsOf = (index: Index, collection: CollectionRow): JsonObject => index.repairedOptions.get(collection.name) ?? collection.options

/** `schema.table` of a collection's real table. */
const tableOf = (index: Index, collection: CollectionRow, options: JsonObject): string => {
  const schema = typeof options["schema"] === "string" && options["schema"] !== "" ? options["schema"] : index.snapshot.schema
  const table = typeof options["tableName"] === "string" && options["tableName"] !== "" ? options["tableName"] : collection.name
  return `${schema}.${table}`
}

/** The real columns of the collection's table, when that table exists in the database. */
const columnsOf = (index: Index, collection: CollectionRow): ReadonlySet<string> | undefined =>
  index.snapshot.tables.get(tableOf(index, collection, optionsOf(index, collection)))

const columnNameOf = (field: FieldRow): string => {
  const column = field.options["field"]
  return typeof column === "string" && column !== "" ? column : field.name
}

const isAssociation = (field: FieldRow): boolean => field.type !== null && ASSOCIATION_TYPES.has(field.type)

const scalarField = (index: Index, collection: CollectionRow, name: string): FieldRow | undefined =>
  fieldsOf(index, collection.name).find((field) => field.name === name && !isAssociation(field))

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

/** The edits that make the component at `base` an InputNumber in string mode. */
const numberComponentEdits = (rule: CheckId, value: JsonObject, base: Path): Array<Edit> => {
  const props = getPath(value, [...base, "x-component-props"])
  return [
    { rule, path: [...base, "x-component"], value: "InputNumber" },
    ...(isJsonObject(props)
      ? Object.entries(INPUT_NUMBER_PROPS).map(([key, prop]): Edit => ({ rule, path: [...base, "x-component-props", key], value: prop }))
      : [{ rule, path: [...base, "x-component-props"], value: INPUT_NUMBER_PROPS }])
  ]
}

/** The finding of a row whose JSON column does not hold an object. */
export const invalidJson = (column: "options" | "schema", valid: boolean): Outcome =>
  valid ? NOTHING : outcome([verdict("invalid-json", null, `${column} is not a JSON object`, "person")])

// ---------------------------------------------------------------------------------------------
// collections (options valid, not platform-internal)

/** Checklist 4: a synchronised collection must name its schema (and table, not underscored). */
export const missingSchema = (collection: CollectionRow, schema: string): Outcome => {
  const options = collection.options
  if (!isSynchronised(options) || hasKey(options, "schema")) return NOTHING
  return outcome(
    [verdict("missing-schema", 4, `synchronised collection without options.schema (sets schema ${JSON.stringify(schema)}, tableName, underscored false)`, "auto")],
    [
      { rule: "missing-schema", path: ["schema"], value: schema },
      ...(hasKey(options, "tableName") ? [] : [{ rule: "missing-schema" as const, path: ["tableName"], value: collection.name }]),
      { rule: "missing-schema", path: ["underscored"], value: false }
    ]
  )
}

/** A synchronised collection with a schema still needs its tableName, and no underscoring. */
export const collectionOptions = (collection: CollectionRow): Outcome => {
  const options = collection.options
  if (!isSynchronised(options) || !hasKey(options, "schema")) return NOTHING
  const findings: Array<Verdict> = []
  const edits: Array<Edit> = []
  if (!hasKey(options, "tableName")) {
    edits.push({ rule: "collection-options", path: ["tableName"], value: collection.name })
    findings.push(verdict("collection-options", null, "options.tableName absent", "auto"))
  }
  if (options["underscored"] === true) {
    edits.push({ rule: "collection-options", path: ["underscored"], value: false })
    findings.push(verdict("collection-options", null, "options.underscored is true; table and column names are already snake_case", "auto"))
  }
  return outcome(findings, edits)
}

/** Checklist 3: a synchronised collection without autoGenId must say its key (guid when it has one). */
export const missingFilterTargetKey = (collection: CollectionRow, index: Index): Outcome => {
  const options = collection.options
  if (!isSynchronised(options) || options["autoGenId"] !== false || hasKey(options, "filterTargetKey")) return NOTHING
  if (hasKeyField(index, collection, "guid")) {
    return outcome(
      [verdict("missing-filter-target-key", 3, "autoGenId false without filterTargetKey (sets \"guid\")", "auto")],
      [{ rule: "missing-filter-target-key", path: ["filterTargetKey"], value: "guid" }]
    )
  }
  if (isPlatformInternal(fieldsOf(index, collection.name))) return NOTHING
  return outcome([verdict("missing-filter-target-key", 3, "autoGenId false without filterTargetKey, and no guid field/column to use", "person")])
}

/** filterTargetKey must be a string: a one-element array is unwrapped, a composite key needs a person. */
export const filterTargetKeyArray = (collection: CollectionRow): Outcome => {
  const filterTargetKey = collection.options["filterTargetKey"]
  if (!Array.isArray(filterTargetKey)) return NOTHING
  if (filterTargetKey.length === 1 && typeof filterTargetKey[0] === "string") {
    return outcome(
      [verdict("filter-target-key-array", null, `filterTargetKey is the array ${JSON.stringify(filterTargetKey)}, must be a string`, "auto")],
      [{ rule: "filter-target-key-array", path: ["filterTargetKey"], value: filterTargetKey[0] }]
    )
  }
  return outcome([verdict("filter-target-key-array", null, `filterTargetKey is the array ${JSON.stringify(filterTargetKey)} (composite key)`, "person")])
}

// ---------------------------------------------------------------------------------------------
// fields (options valid, not a system field, not of a platform-internal collection)

/** Checklist 1: interfaces NocoBase does not register are replaced by the ones it does. */
export const wrongInterface = (field: FieldRow): Outcome => {
  const iface = field.interface
  const next = iface === null ? undefined : WRONG_INTERFACES[iface]
  if (next === undefined) return NOTHING
  return { findings: [verdict("wrong-interface", 1, `interface ${JSON.stringify(iface)} should be ${JSON.stringify(next)}`, "auto")], edits: [], interface: next }
}

/** Checklist 2: the unregistered Integer/Number components become InputNumber (#130). */
export const numberComponent = (field: FieldRow): Outcome => {
  const component = fieldComponent(field.options)
  if (component === undefined || !NUMBER_COMPONENTS.has(component)) return NOTHING
  return outcome(
    [verdict("number-component", 2, `x-component ${JSON.stringify(component)} is not registered (#130); should be "InputNumber" with {stringMode:true, step:'1'}`, "auto")],
    numberComponentEdits("number-component", field.options, ["uiSchema"])
  )
}

/** Any other component of a field that NocoBase does not register (#130) needs a person. */
export const unregisteredFieldComponent = (field: FieldRow): Outcome => {
  const component = fieldComponent(field.options)
  if (component === undefined || NUMBER_COMPONENTS.has(component) || isRegisteredFieldComponent(component)) return NOTHING
  return outcome([
    verdict("unregistered-component", null, `x-component ${JSON.stringify(component)} is not registered (#130) in collection ${field.collectionName ?? "?"}`, "person")
  ])
}

const INCOMPLETE_KEYS = ["field", "rawType", "possibleTypes", "primaryKey", "unique"] as const

/** A scalar field of a synchronised collection must name its column (options.field). */
export const fieldIncomplete = (field: FieldRow, collection: CollectionRow | undefined): Outcome => {
  if (collection === undefined || !isSynchronised(collection.options) || isAssociation(field) || hasKey(field.options, "field")) return NOTHING
  const missing = INCOMPLETE_KEYS.filter((key) => !hasKey(field.options, key))
  return outcome(
    [verdict("field-incomplete", null, `synchronised field lacks ${missing.join(", ")} (sets field ${JSON.stringify(field.name)})`, "auto")],
    [{ rule: "field-incomplete", path: ["field"], value: field.name }]
  )
}

/** Checklist 5: type, interface and component must agree, judged after the repairs above. */
export const fieldMismatch = (field: FieldRow, repaired: { readonly interface: string | null; readonly options: JsonObject }): Outcome =>
  outcome(fieldMismatches(field.type, repaired.interface, fieldComponent(repaired.options)).map((problem) => verdict("field-mismatch", 5, problem, "person")))

/** A belongsTo must point at a collection (or platform table) that has its targetKey, and have its foreignKey. */
export const belongsTo = (field: FieldRow, collection: CollectionRow | undefined, index: Index): Outcome => {
  if (field.type !== "belongsTo" || collection === undefined) return NOTHING
  const schema = index.snapshot.schema
  const name = collection.name
  const findings: Array<Verdict> = []
  const found = (detail: string) => findings.push(verdict("belongs-to", null, detail, "person"))
  const target = field.options["target"]
  const declared = field.options["targetKey"]
  if (typeof target !== "string" || target === "") {
    found("belongsTo without a target")
  } else {
    const targetCollection = index.collections.get(target)
    // platform collections defined in plugin code have no collections row, only their table
    const targetTable = index.snapshot.tables.get(`${schema}.${target}`)
    if (targetCollection === undefined && targetTable === undefined) {
      found(`association ${field.name} in ${name}: target collection ${JSON.stringify(target)} does not exist`)
    } else if (targetCollection === undefined) {
      const targetKey = typeof declared === "string" && declared !== "" ? declared : "id"
      if (!targetTable!.has(targetKey)) {
        found(`association ${field.name} in ${name}: targetKey ${JSON.stringify(targetKey)} does not exist in table ${schema}.${target}`)
      }
    } else {
      const targetKey = typeof declared === "string" && declared !== ""
        ? declared
        : collectionKey(optionsOf(index, targetCollection), fieldsOf(index, target)) ?? "id"
      if (!hasFieldOrColumn(index, targetCollection, targetKey)) {
        found(`association ${field.name} in ${name}: targetKey ${JSON.stringify(targetKey)} does not exist in ${target}`)
      }
    }
  }
  const declaredForeignKey = field.options["foreignKey"]
  const foreignKey = typeof declaredForeignKey === "string" && declaredForeignKey !== "" ? declaredForeignKey : `${field.name}Id`
  if (!hasFieldOrColumn(index, collection, foreignKey)) {
    found(`association ${field.name} in ${name}: foreignKey ${JSON.stringify(foreignKey)} does not exist in ${name}`)
  }
  return outcome(findings)
}

/** options.svcMeta must follow the SvcPrettyField rules. */
export const svcMeta = (field: FieldRow): Outcome =>
  outcome(svcMetaProblems(field.options["svcMeta"]).map((problem) => verdict("svc-meta", null, `svcMeta: ${problem}`, "person")))

// ---------------------------------------------------------------------------------------------
// page nodes (schema valid, not about a platform-internal collection)

/** The collection a page node is about and its data source, as `nodeCollection` finds them. */
export type NodeOwner = ReturnType<typeof nodeCollection>

const pageOf = (owner: NodeOwner) => owner?.collection ?? "(no collection)"

/** The unregistered Integer/Number components of a page become InputNumber (#130). */
export const pageNumberComponent = (node: UiNode, owner: NodeOwner): Outcome => {
  const component = getString(node.schema, ["x-component"])
  if (component === undefined || !NUMBER_COMPONENTS.has(component)) return NOTHING
  return outcome(
    [verdict("page-number-component", null, `x-component ${JSON.stringify(component)} is not registered (#130) in a page of ${pageOf(owner)}; should be "InputNumber"`, "auto")],
    numberComponentEdits("page-number-component", node.schema, [])
  )
}

/** Any other component of a page node that NocoBase does not register (#130) needs a person. */
export const unregisteredPageComponent = (node: UiNode, owner: NodeOwner): Outcome => {
  const component = getString(node.schema, ["x-component"])
  if (component === undefined || component === "" || NUMBER_COMPONENTS.has(component) || isRegisteredPageComponent(component)) return NOTHING
  return outcome([verdict("unregistered-component", null, `x-component ${JSON.stringify(component)} is not registered (#130) in a page of ${pageOf(owner)}`, "person")])
}

/** A page node using SvcPrettyField, SvcPostAction or SvcPatchAction renders #130 when the server lacks plugin-svc-preset-actions. */
export const customComponentWithoutPlugin = (node: UiNode, owner: NodeOwner, index: Index): Outcome => {
  const component = getString(node.schema, ["x-component"])
  if (component === undefined || !CUSTOM_COMPONENTS.has(component) || index.snapshot.customComponentsPlugin !== "absent") return NOTHING
  return outcome([
    verdict("plugin-missing", null, `x-component ${JSON.stringify(component)} in a page of ${pageOf(owner)} needs plugin-svc-preset-actions, which is not enabled on the server (#130); install it (nocobase/plugin-svc-preset-actions)`, "person")
  ])
}

/** A table block on a collection keyed by something else than `id` must not use rowKey "id". */
export const rowKey = (node: UiNode, owner: NodeOwner, index: Index): Outcome => {
  const paths: Array<Path> = []
  if (node.schema["x-decorator"] === "TableBlockProvider" && getPath(node.schema, ["x-decorator-props", "rowKey"]) === "id") {
    paths.push(["x-decorator-props", "rowKey"])
  }
  if (getString(node.schema, ["x-component"]) === "TableV2" && getPath(node.schema, ["x-component-props", "rowKey"]) === "id") {
    paths.push(["x-component-props", "rowKey"])
  }
  if (paths.length === 0 || owner === undefined || (owner.dataSource !== undefined && owner.dataSource !== "main")) return NOTHING
  const collection = index.collections.get(owner.collection)
  if (collection === undefined) return NOTHING
  const key = collectionKey(optionsOf(index, collection), fieldsOf(index, collection.name))
  if (key === null || key === "id") return NOTHING
  const where = paths.map((path) => path.join(".")).join(" and ")
  if (!hasKeyField(index, collection, key)) {
    return outcome([
      verdict("row-key", null, `table block on ${owner.collection} has ${where} "id"; the collection is keyed by ${key}, but ${key} was not found as a field and column`, "person")
    ])
  }
  return outcome(
    [verdict("row-key", null, `table block on ${owner.collection} (keyed by ${key}) has ${where} "id" (sets ${JSON.stringify(key)})`, "auto")],
    paths.map((path): Edit => ({ rule: "row-key", path, value: key }))
  )
}
