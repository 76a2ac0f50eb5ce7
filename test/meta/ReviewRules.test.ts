// Each check of the doctor on the smallest metadata that shows its finding, and on one that does not.
import { assert, describe, it } from "@effect/vitest"
import type { JsonObject } from "../../src/meta/Json.ts"
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
  numberComponent,
  type Outcome,
  pageNumberComponent,
  rowKey,
  svcMeta,
  unregisteredFieldComponent,
  unregisteredPageComponent,
  wrongInterface
} from "../../src/meta/ReviewRules.ts"
import type { CollectionRow, FieldRow, UiNode } from "../../src/meta/Snapshot.ts"

const collection = (name: string, options: JsonObject): CollectionRow => ({
  key: `c_${name}`,
  name,
  options,
  optionsText: JSON.stringify(options),
  optionsValid: true
})

const field = (collectionName: string, name: string, rest: Partial<Omit<FieldRow, "name" | "collectionName">> = {}): FieldRow => ({
  key: `f_${collectionName}_${name}`,
  name,
  type: "string",
  interface: "input",
  collectionName,
  options: {},
  optionsText: "{}",
  optionsValid: true,
  ...rest
})

const node = (uid: string, schema: JsonObject): UiNode => ({ uid, name: uid, schema, schemaText: JSON.stringify(schema), schemaValid: true })

const index = (
  parts: {
    readonly collections?: ReadonlyArray<CollectionRow>
    readonly fields?: ReadonlyArray<FieldRow>
    readonly tables?: Record<string, ReadonlyArray<string>>
  },
  repaired: ReadonlyMap<string, JsonObject> = new Map()
): Index =>
  makeIndex({
    schema: "svc",
    customComponentsPlugin: "unknown",
    collections: parts.collections ?? [],
    fields: parts.fields ?? [],
    nodes: [],
    ancestors: new Map(),
    tables: new Map(Object.entries(parts.tables ?? {}).map(([table, columns]) => [table, new Set(columns)]))
  }, repaired)

/** A finding as `repair check [checklist]: detail`, and the edits as `path = value`. */
const show = (outcome: Outcome) => ({
  findings: outcome.findings.map((finding) => `${finding.repair} ${finding.check}${finding.checklist === null ? "" : ` [${finding.checklist}]`}: ${finding.detail}`),
  edits: outcome.edits.map((edit) => `${edit.rule} ${edit.path.join(".")} = ${JSON.stringify(edit.value)}`)
})
const none = { findings: [], edits: [] }

const SYNCED = { from: "db2cm", autoGenId: false }

describe("rules of any row", () => {
  it("invalid-json: a column that is no JSON object", () => {
    assert.deepStrictEqual(show(invalidJson("options", false)), { findings: ["person invalid-json: options is not a JSON object"], edits: [] })
    assert.deepStrictEqual(show(invalidJson("schema", false)).findings, ["person invalid-json: schema is not a JSON object"])
    assert.deepStrictEqual(show(invalidJson("options", true)), none)
  })
})

describe("collection rules", () => {
  it("missing-schema: a synchronised collection without options.schema", () => {
    assert.deepStrictEqual(show(missingSchema(collection("orders", SYNCED), "svc")), {
      findings: ["auto missing-schema [4]: synchronised collection without options.schema (sets schema \"svc\", tableName, underscored false)"],
      edits: ["missing-schema schema = \"svc\"", "missing-schema tableName = \"orders\"", "missing-schema underscored = false"]
    })
    // a tableName of its own stays
    assert.deepStrictEqual(show(missingSchema(collection("orders", { ...SYNCED, tableName: "t_orders" }), "svc")).edits, [
      "missing-schema schema = \"svc\"",
      "missing-schema underscored = false"
    ])
    assert.deepStrictEqual(show(missingSchema(collection("orders", { ...SYNCED, schema: "svc" }), "svc")), none)
    assert.deepStrictEqual(show(missingSchema(collection("notes", {}), "svc")), none)
  })

  it("collection-options: a synchronised collection with a schema but no tableName, or underscored", () => {
    assert.deepStrictEqual(show(collectionOptions(collection("payments", { ...SYNCED, schema: "svc", underscored: true }))), {
      findings: [
        "auto collection-options: options.tableName absent",
        "auto collection-options: options.underscored is true; table and column names are already snake_case"
      ],
      edits: ["collection-options tableName = \"payments\"", "collection-options underscored = false"]
    })
    assert.deepStrictEqual(show(collectionOptions(collection("payments", { ...SYNCED, schema: "svc", tableName: "payments", underscored: false }))), none)
    // without a schema it is missing-schema's
    assert.deepStrictEqual(show(collectionOptions(collection("payments", { ...SYNCED, underscored: true }))), none)
  })

  it("missing-filter-target-key: autoGenId false without filterTargetKey; guid when the collection has it", () => {
    const orders = collection("orders", SYNCED)
    const guid = field("orders", "guid", { type: "uuid" })
    assert.deepStrictEqual(show(missingFilterTargetKey(orders, index({ fields: [guid], tables: { "svc.orders": ["guid"] } }))), {
      findings: ["auto missing-filter-target-key [3]: autoGenId false without filterTargetKey (sets \"guid\")"],
      edits: ["missing-filter-target-key filterTargetKey = \"guid\""]
    })
    // a guid field without its column is no key
    assert.deepStrictEqual(show(missingFilterTargetKey(orders, index({ fields: [guid], tables: { "svc.orders": ["code"] } }))), {
      findings: ["person missing-filter-target-key [3]: autoGenId false without filterTargetKey, and no guid field/column to use"],
      edits: []
    })
    // platform-internal tables keep id
    assert.deepStrictEqual(show(missingFilterTargetKey(collection("logs", SYNCED), index({ fields: [field("logs", "id", { type: "bigInt" })] }))), none)
    assert.deepStrictEqual(show(missingFilterTargetKey(collection("orders", { ...SYNCED, filterTargetKey: "guid" }), index({ fields: [guid] }))), none)
  })

  it("filter-target-key-array: filterTargetKey as an array", () => {
    assert.deepStrictEqual(show(filterTargetKeyArray(collection("items", { filterTargetKey: ["guid"] }))), {
      findings: ["auto filter-target-key-array: filterTargetKey is the array [\"guid\"], must be a string"],
      edits: ["filter-target-key-array filterTargetKey = \"guid\""]
    })
    assert.deepStrictEqual(show(filterTargetKeyArray(collection("items", { filterTargetKey: ["a", "b"] }))), {
      findings: ["person filter-target-key-array: filterTargetKey is the array [\"a\",\"b\"] (composite key)"],
      edits: []
    })
    assert.deepStrictEqual(show(filterTargetKeyArray(collection("items", { filterTargetKey: "guid" }))), none)
  })
})

describe("field rules", () => {
  it("wrong-interface: a type written as the interface", () => {
    const outcome = wrongInterface(field("orders", "amount", { type: "decimal", interface: "decimal" }))
    assert.deepStrictEqual(show(outcome), { findings: ["auto wrong-interface [1]: interface \"decimal\" should be \"number\""], edits: [] })
    assert.strictEqual(outcome.interface, "number")
    const right = wrongInterface(field("orders", "amount", { type: "decimal", interface: "number" }))
    assert.deepStrictEqual(show(right), none)
    assert.isUndefined(right.interface)
  })

  it("number-component: Integer/Number become InputNumber in string mode", () => {
    assert.deepStrictEqual(show(numberComponent(field("orders", "qty", { options: { uiSchema: { "x-component": "Integer" } } }))), {
      findings: ["auto number-component [2]: x-component \"Integer\" is not registered (#130); should be \"InputNumber\" with {stringMode:true, step:'1'}"],
      edits: ["number-component uiSchema.x-component = \"InputNumber\"", "number-component uiSchema.x-component-props = {\"stringMode\":true,\"step\":\"1\"}"]
    })
    // existing props are kept, the two keys set
    assert.deepStrictEqual(show(numberComponent(field("orders", "qty", { options: { uiSchema: { "x-component": "Number", "x-component-props": { min: 0 } } } }))).edits, [
      "number-component uiSchema.x-component = \"InputNumber\"",
      "number-component uiSchema.x-component-props.stringMode = true",
      "number-component uiSchema.x-component-props.step = \"1\""
    ])
    assert.deepStrictEqual(show(numberComponent(field("orders", "qty", { options: { uiSchema: { "x-component": "InputNumber" } } }))), none)
  })

  it("unregistered-component: a field component the client does not know (not Integer/Number)", () => {
    assert.deepStrictEqual(show(unregisteredFieldComponent(field("orders", "note", { options: { uiSchema: { "x-component": "Fancy" } } }))), {
      findings: ["person unregistered-component: x-component \"Fancy\" is not registered (#130) in collection orders"],
      edits: []
    })
    assert.deepStrictEqual(show(unregisteredFieldComponent(field("orders", "qty", { options: { uiSchema: { "x-component": "Integer" } } }))), none)
    assert.deepStrictEqual(show(unregisteredFieldComponent(field("orders", "note", { options: { uiSchema: { "x-component": "Input.TextArea" } } }))), none)
  })

  it("field-incomplete: a scalar field of a synchronised collection without options.field", () => {
    const orders = collection("orders", SYNCED)
    assert.deepStrictEqual(show(fieldIncomplete(field("orders", "code", { options: { rawType: "varchar" } }), orders)), {
      findings: ["auto field-incomplete: synchronised field lacks field, possibleTypes, primaryKey, unique (sets field \"code\")"],
      edits: ["field-incomplete field = \"code\""]
    })
    assert.deepStrictEqual(show(fieldIncomplete(field("orders", "code", { options: { field: "code" } }), orders)), none)
    assert.deepStrictEqual(show(fieldIncomplete(field("orders", "customer", { type: "belongsTo" }), orders)), none)
    assert.deepStrictEqual(show(fieldIncomplete(field("notes", "code"), collection("notes", {}))), none)
  })

  it("field-mismatch: type, interface and component disagree (judged on the repaired values)", () => {
    const amount = field("orders", "amount", { type: "decimal", interface: "decimal" })
    assert.deepStrictEqual(show(fieldMismatch(amount, { interface: "number", options: { uiSchema: { "x-component": "Input" } } })), {
      findings: ["person field-mismatch [5]: x-component \"Input\" should be \"InputNumber\" for interface number"],
      edits: []
    })
    assert.deepStrictEqual(show(fieldMismatch(amount, { interface: "select", options: {} })).findings, [
      "person field-mismatch [5]: interface \"select\" is not one of number, percent for type decimal"
    ])
    assert.deepStrictEqual(show(fieldMismatch(amount, { interface: "number", options: { uiSchema: { "x-component": "InputNumber" } } })), none)
  })

  it("belongs-to: the target, its key and the foreign key must exist", () => {
    const items = collection("items", SYNCED)
    const products = collection("products", { ...SYNCED, filterTargetKey: "guid" })
    const productsGuid = field("products", "guid", { type: "uuid" })
    const productGuid = field("items", "product_guid")
    const product = (options: JsonObject) => field("items", "product", { type: "belongsTo", interface: "m2o", options })
    const good = index({ collections: [items, products], fields: [productsGuid, productGuid] })
    assert.deepStrictEqual(show(belongsTo(product({ target: "products", foreignKey: "product_guid" }), items, good)), none)
    assert.deepStrictEqual(show(belongsTo(product({ target: "products", targetKey: "sku", foreignKey: "nope" }), items, good)).findings, [
      "person belongs-to: association product in items: targetKey \"sku\" does not exist in products",
      "person belongs-to: association product in items: foreignKey \"nope\" does not exist in items"
    ])
    assert.deepStrictEqual(show(belongsTo(product({ target: "ghosts", foreignKey: "product_guid" }), items, good)).findings, [
      "person belongs-to: association product in items: target collection \"ghosts\" does not exist"
    ])
    assert.deepStrictEqual(show(belongsTo(product({ foreignKey: "product_guid" }), items, good)).findings, ["person belongs-to: belongsTo without a target"])
    // a platform table with no collections row: its columns decide
    const platform = index({ collections: [items], fields: [productGuid], tables: { "svc.users": ["id"] } })
    assert.deepStrictEqual(show(belongsTo(product({ target: "users", foreignKey: "product_guid" }), items, platform)), none)
    assert.deepStrictEqual(show(belongsTo(product({ target: "users", targetKey: "guid", foreignKey: "product_guid" }), items, platform)).findings, [
      "person belongs-to: association product in items: targetKey \"guid\" does not exist in table svc.users"
    ])
    // the target's key as the collection rules repair it
    const unkeyed = collection("products", SYNCED)
    const repaired = index({ collections: [items, unkeyed], fields: [productsGuid, productGuid] }, new Map([["products", { ...SYNCED, filterTargetKey: "guid" }]]))
    assert.deepStrictEqual(show(belongsTo(product({ target: "products", foreignKey: "product_guid" }), items, repaired)), none)
    assert.deepStrictEqual(show(belongsTo(field("items", "code"), items, good)), none)
  })

  it("svc-meta: options.svcMeta outside the SvcPrettyField rules", () => {
    assert.deepStrictEqual(show(svcMeta(field("products", "bad_meta", { options: { svcMeta: { uiKind: "url", colour: "red" } } }))).findings, [
      "person svc-meta: svcMeta: unknown key \"colour\""
    ])
    assert.deepStrictEqual(show(svcMeta(field("products", "homepage", { options: { svcMeta: { uiKind: "url" } } }))), none)
    assert.deepStrictEqual(show(svcMeta(field("products", "title"))), none)
  })
})

describe("page node rules", () => {
  const owner = { collection: "orders", dataSource: undefined }

  it("page-number-component: Integer/Number in a page become InputNumber", () => {
    assert.deepStrictEqual(show(pageNumberComponent(node("f_qty", { "x-component": "Number", "x-component-props": { min: 1 } }), owner)), {
      findings: ["auto page-number-component: x-component \"Number\" is not registered (#130) in a page of orders; should be \"InputNumber\""],
      edits: [
        "page-number-component x-component = \"InputNumber\"",
        "page-number-component x-component-props.stringMode = true",
        "page-number-component x-component-props.step = \"1\""
      ]
    })
    assert.deepStrictEqual(show(pageNumberComponent(node("f_qty", { "x-component": "InputNumber" }), owner)), none)
  })

  it("unregistered-component: a page component the client does not know", () => {
    assert.deepStrictEqual(show(unregisteredPageComponent(node("w", { "x-component": "SvcFancyWidget" }), undefined)).findings, [
      "person unregistered-component: x-component \"SvcFancyWidget\" is not registered (#130) in a page of (no collection)"
    ])
    assert.deepStrictEqual(show(unregisteredPageComponent(node("t", { "x-component": "TableV2.Column" }), owner)), none)
    assert.deepStrictEqual(show(unregisteredPageComponent(node("n", { "x-component": "Integer" }), owner)), none)
  })

  it("row-key: a table block with rowKey \"id\" on a collection keyed otherwise", () => {
    const orders = collection("orders", { ...SYNCED, filterTargetKey: "guid" })
    const keyed = index({ collections: [orders], fields: [field("orders", "guid", { type: "uuid" })] })
    const block = node("b_orders", { "x-decorator": "TableBlockProvider", "x-decorator-props": { collection: "orders", rowKey: "id" } })
    assert.deepStrictEqual(show(rowKey(block, owner, keyed)), {
      findings: ["auto row-key: table block on orders (keyed by guid) has x-decorator-props.rowKey \"id\" (sets \"guid\")"],
      edits: ["row-key x-decorator-props.rowKey = \"guid\""]
    })
    const table = node("t_orders", { "x-component": "TableV2", "x-component-props": { rowKey: "id" } })
    const keyless = index({ collections: [orders] })
    assert.deepStrictEqual(show(rowKey(table, owner, keyless)), {
      findings: ["person row-key: table block on orders has x-component-props.rowKey \"id\"; the collection is keyed by guid, but guid was not found as a field and column"],
      edits: []
    })
    // keyed by id, another data source, or rowKey already right: nothing
    assert.deepStrictEqual(show(rowKey(block, owner, index({ collections: [collection("orders", {})] }))), none)
    assert.deepStrictEqual(show(rowKey(block, { collection: "orders", dataSource: "external" }, keyed)), none)
    assert.deepStrictEqual(show(rowKey(node("b", { "x-decorator": "TableBlockProvider", "x-decorator-props": { rowKey: "guid" } }), owner, keyed)), none)
  })

  it("the collection of a page node is its own, else its nearest ancestor's", () => {
    const nodes = new Map([
      ["block", node("block", { "x-decorator-props": { collection: "orders", dataSource: "main" } })],
      ["column", node("column", { "x-component": "TableV2.Column" })],
      ["cell", node("cell", { "x-collection-field": "products.price" })]
    ])
    const ancestors = new Map([["column", ["block"]], ["cell", ["column", "block"]]])
    assert.deepStrictEqual(nodeCollection(nodes, ancestors, "column"), { collection: "orders", dataSource: "main" })
    assert.deepStrictEqual(nodeCollection(nodes, ancestors, "cell"), { collection: "products", dataSource: undefined })
    assert.isUndefined(nodeCollection(nodes, new Map(), "column"))
  })
})
