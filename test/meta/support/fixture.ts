// A realistic synchronised NocoBase `svc` schema (tables as NocoBase 2.0.16 creates them), damaged the
// way the source document describes, next to rows that are already correct and platform tables
// keyed by `id` that must be left alone.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const NOCOBASE_DDL = (schema: string): ReadonlyArray<string> => [
  `CREATE SCHEMA IF NOT EXISTS ${schema}`,
  `CREATE TABLE ${schema}.collections (key varchar(255) PRIMARY KEY, name varchar(255) UNIQUE, title varchar(255),
    inherit boolean DEFAULT false, hidden boolean DEFAULT false, options json DEFAULT '{}', description varchar(255), sort bigint)`,
  `CREATE TABLE ${schema}.fields (key varchar(255) PRIMARY KEY, name varchar(255), type varchar(255), interface varchar(255),
    description varchar(255), "collectionName" varchar(255), "parentKey" varchar(255), "reverseKey" varchar(255),
    options json DEFAULT '{}', sort bigint, UNIQUE ("collectionName", name))`,
  `CREATE TABLE ${schema}."uiSchemas" ("x-uid" varchar(255) PRIMARY KEY, name varchar(255), schema json DEFAULT '{}')`,
  `CREATE TABLE ${schema}."uiSchemaTreePath" (ancestor varchar(255), descendant varchar(255), depth integer, async boolean,
    type varchar(255), sort integer, PRIMARY KEY (ancestor, descendant))`
]

const BUSINESS_DDL = [
  `CREATE TABLE svc.customers (guid varchar(36) PRIMARY KEY, name varchar(100), email varchar(200), phone varchar(50),
    homepage varchar(500), avatar_url varchar(500), joined_ts bigint, vip boolean)`,
  `CREATE TABLE svc.orders (guid varchar(36) PRIMARY KEY, code varchar(32), customer_guid varchar(36), amount numeric(18,2),
    quantity bigint, note text, paid boolean, created_at timestamp, tags json)`,
  `CREATE TABLE svc.products (guid varchar(36) PRIMARY KEY, title varchar(200), price numeric(18,2), rating double precision,
    description_html text, image_url varchar(500), bad_meta varchar(50))`,
  `CREATE TABLE svc.order_items (guid varchar(36) PRIMARY KEY, order_guid varchar(36), product_guid varchar(36),
    warehouse_guid varchar(36), qty integer)`,
  `CREATE TABLE svc.payments (guid varchar(36) PRIMARY KEY, order_guid varchar(36), paid_amount numeric(18,2), paid_ts bigint)`,
  `CREATE TABLE svc.legacy_events (event_id bigint PRIMARY KEY, payload json)`,
  `CREATE TABLE svc.sys_setting (id bigint PRIMARY KEY, key varchar(100), value text)`,
  `CREATE TABLE svc.users (id bigserial PRIMARY KEY, nickname varchar(255))`
]

type Obj = Record<string, unknown>

/** Synchronisation leaves these on every db2cm collection. */
const synced = (extra: Obj): Obj => ({
  from: "db2cm",
  autoGenId: false,
  timestamps: false,
  createdAt: false,
  createdBy: false,
  updatedAt: false,
  updatedBy: false,
  ...extra
})

const BIG = "99999999999999999999"

/** Options text as stored: damaged rows pretty-printed (as the sync script wrote them), others compact. */
const text = (value: Obj, pretty: boolean) =>
  (pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value)).replace(`"__BIG__"`, BIG)

interface CollectionSpec {
  readonly name: string
  readonly options: Obj
  readonly damaged: boolean
}

export const COLLECTIONS: ReadonlyArray<CollectionSpec> = [
  {
    name: "customers",
    damaged: false,
    options: synced({ schema: "svc", tableName: "customers", underscored: false, filterTargetKey: "guid", titleField: "name" })
  },
  { name: "orders", damaged: true, options: synced({}) },
  { name: "products", damaged: true, options: synced({ schema: "svc", tableName: "products", underscored: false }) },
  {
    name: "order_items",
    damaged: true,
    options: synced({ schema: "svc", tableName: "order_items", underscored: false, filterTargetKey: ["guid"] })
  },
  {
    name: "payments",
    damaged: true,
    options: { from: "dbsync", autoGenId: false, timestamps: false, schema: "svc", underscored: true, filterTargetKey: "guid" }
  },
  {
    name: "legacy_events",
    damaged: false,
    options: synced({ schema: "svc", tableName: "legacy_events", underscored: false, filterTargetKey: "guid" })
  },
  // platform-internal, keyed by id: no filterTargetKey on purpose; must be left alone
  { name: "sys_setting", damaged: false, options: synced({ schema: "svc", tableName: "sys_setting", underscored: false }) },
  // NocoBase's own, copied by its db2cm() (from db2cm, no schema): defined in code, left alone by every rule
  {
    name: "users",
    damaged: false,
    options: { origin: "@nocobase/plugin-users", sortable: "sort", model: "UserModel", createdBy: true, updatedBy: true, underscored: false, from: "db2cm" }
  }
]

interface FieldSpec {
  readonly collection: string
  readonly name: string
  readonly type: string
  readonly interface: string | null
  readonly options: Obj
  readonly damaged: boolean
}

const ui = (title: string, component: string, props?: Obj): Obj => ({
  uiSchema: { title, type: "string", "x-component": component, ...(props === undefined ? {} : { "x-component-props": props }) }
})
/** What synchronisation writes for a plain column when it works. */
const complete = (name: string, rawType: string, possibleTypes: ReadonlyArray<string>, extra: Obj = {}): Obj => ({
  field: name,
  rawType,
  possibleTypes,
  primaryKey: false,
  unique: false,
  allowNull: true,
  ...extra
})
const WIDTH = { style: { width: "100%" } }
const NUMBER_PROPS = { stringMode: true, step: "1" }

const f = (collection: string, name: string, type: string, iface: string | null, options: Obj, damaged = false): FieldSpec => ({
  collection,
  name,
  type,
  interface: iface,
  options,
  damaged
})

export const FIELDS: ReadonlyArray<FieldSpec> = [
  // customers: already correct
  f("customers", "guid", "string", "input", { ...complete("guid", "VARCHAR(36)", ["string", "uuid"], { primaryKey: true, allowNull: false }), ...ui("GUID", "Input", WIDTH) }),
  f("customers", "name", "string", "input", { ...complete("name", "VARCHAR(100)", ["string"]), ...ui("Name", "Input", WIDTH) }),
  f("customers", "email", "string", "email", { ...complete("email", "VARCHAR(200)", ["string"]), ...ui("Email", "Input", WIDTH), svcMeta: { uiKind: "email", copyable: true } }),
  f("customers", "phone", "string", "phone", { ...complete("phone", "VARCHAR(50)", ["string"]), ...ui("Phone", "Input", WIDTH), svcMeta: { uiKind: "phone" } }),
  f("customers", "homepage", "string", "url", { ...complete("homepage", "VARCHAR(500)", ["string"]), ...ui("Homepage", "Input.URL", WIDTH), svcMeta: { uiKind: "url", validator: "url", copyable: true } }),
  f("customers", "avatar_url", "string", "url", { ...complete("avatar_url", "VARCHAR(500)", ["string"]), ...ui("Avatar", "Input.URL", WIDTH), svcMeta: { uiKind: "attachment_url", preview: "image", uploadStrategy: "external_url" } }),
  f("customers", "joined_ts", "bigInt", "unixTimestamp", { ...complete("joined_ts", "BIGINT", ["bigInt", "integer"]), ...ui("Joined", "DatePicker", { showTime: true, utc: false }), svcMeta: { uiKind: "unix_timestamp", timezone: "UTC" } }),
  f("customers", "vip", "boolean", "checkbox", { ...complete("vip", "BOOLEAN", ["boolean"]), ...ui("VIP", "Checkbox") }),

  // orders: synchronised fields lacking field/rawType/…, wrong interfaces and components
  // db2cm left the key without primaryKey: NocoBase derives no filterTargetKey from it
  f("orders", "guid", "string", "input", { allowNull: false, ...ui("GUID", "Input", WIDTH) }, true),
  f("orders", "code", "string", "string", { ...ui("Code", "Input", WIDTH) }, true),
  f("orders", "customer", "belongsTo", "m2o", {
    target: "customers",
    targetKey: "guid",
    foreignKey: "customer_guid",
    ...ui("Customer", "AssociationField", { fieldNames: { value: "guid", label: "name" } })
  }),
  f("orders", "customer_guid", "string", "input", { ...complete("customer_guid", "VARCHAR(36)", ["string"]), isForeignKey: true, ...ui("Customer GUID", "Input", WIDTH) }),
  f("orders", "amount", "decimal", "decimal", { ...ui("Amount", "Number"), svcMeta: { uiKind: "money" } }, true),
  f("orders", "quantity", "bigInt", "bigInt", { ...ui("Quantity", "Integer", { max: "__BIG__" }) }, true),
  f("orders", "note", "text", "textarea", { ...complete("note", "TEXT", ["text"]), ...ui("Note", "Input.TextArea") }),
  f("orders", "paid", "boolean", "checkbox", { ...complete("paid", "BOOLEAN", ["boolean"]), ...ui("Paid", "Checkbox") }),
  f("orders", "created_at", "datetimeNoTz", "datetimeNoTz", { ...complete("created_at", "TIMESTAMP", ["datetimeNoTz"]), ...ui("Created", "DatePicker", { showTime: false, utc: false }) }),
  f("orders", "tags", "json", "multipleSelect", { ...complete("tags", "JSON", ["json"]), ...ui("Tags", "Select", { mode: "multiple" }), svcMeta: { uiKind: "m2m_array" } }),

  // products: Number component on a right interface, float interface, malformed svcMeta
  f("products", "guid", "string", "input", { ...complete("guid", "VARCHAR(36)", ["string"], { primaryKey: true }), ...ui("GUID", "Input", WIDTH) }),
  f("products", "title", "string", "input", { ...complete("title", "VARCHAR(200)", ["string"]), ...ui("Title", "Input", WIDTH) }),
  f("products", "price", "decimal", "number", { ...complete("price", "NUMERIC(18,2)", ["decimal"]), ...ui("Price", "Number", WIDTH) }, true),
  f("products", "rating", "float", "float", { ...ui("Rating", "Number", WIDTH) }, true),
  f("products", "description_html", "text", "textarea", { ...complete("description_html", "TEXT", ["text"]), ...ui("Description", "Input.TextArea"), svcMeta: { uiKind: "richtext_html" } }),
  f("products", "image_url", "string", "url", { ...complete("image_url", "VARCHAR(500)", ["string"]), ...ui("Image", "Input.URL", WIDTH), svcMeta: { uiKind: "attachment_url", preview: "image" } }),
  f("products", "bad_meta", "string", "input", { ...complete("bad_meta", "VARCHAR(50)", ["string"]), ...ui("Bad meta", "Input", WIDTH), svcMeta: { uiKind: "markdown", colour: "red", copyable: "yes" } }),

  // order_items: associations, one to a collection that does not exist, one to a targetKey that does not
  f("order_items", "guid", "string", "input", { ...complete("guid", "VARCHAR(36)", ["string"], { primaryKey: true }), ...ui("GUID", "Input", WIDTH) }),
  f("order_items", "order", "belongsTo", "m2o", { target: "orders", targetKey: "guid", foreignKey: "order_guid", ...ui("Order", "AssociationField", { fieldNames: { value: "guid", label: "code" } }) }),
  f("order_items", "order_guid", "string", "input", { ...complete("order_guid", "VARCHAR(36)", ["string"]), isForeignKey: true, ...ui("Order GUID", "Input", WIDTH) }),
  f("order_items", "product", "belongsTo", "m2o", { target: "product", targetKey: "guid", foreignKey: "product_guid", ...ui("Product", "AssociationField", { fieldNames: { value: "guid", label: "title" } }) }),
  f("order_items", "product_guid", "string", "input", { ...complete("product_guid", "VARCHAR(36)", ["string"]), isForeignKey: true, ...ui("Product GUID", "Input", WIDTH) }),
  f("order_items", "warehouse", "belongsTo", "m2o", { target: "products", targetKey: "sku", foreignKey: "warehouse_guid", ...ui("Warehouse", "AssociationField", { fieldNames: { value: "guid", label: "title" } }) }),
  f("order_items", "warehouse_guid", "string", "input", { ...complete("warehouse_guid", "VARCHAR(36)", ["string"]), ...ui("Warehouse GUID", "Input", WIDTH) }),
  f("order_items", "qty", "integer", "integer", { ...complete("qty", "INTEGER", ["integer"]), ...ui("Qty", "Integer") }, true),

  // payments (dbsync): an association whose foreignKey does not exist
  f("payments", "guid", "string", "input", { ...complete("guid", "VARCHAR(36)", ["string"], { primaryKey: true }), ...ui("GUID", "Input", WIDTH) }),
  f("payments", "order", "belongsTo", "m2o", { target: "orders", targetKey: "guid", foreignKey: "order_id", ...ui("Order", "AssociationField", { fieldNames: { value: "guid", label: "code" } }) }),
  f("payments", "order_guid", "string", "input", { ...complete("order_guid", "VARCHAR(36)", ["string"]), ...ui("Order GUID", "Input", WIDTH) }),
  f("payments", "paid_amount", "decimal", "number", { ...complete("paid_amount", "NUMERIC(18,2)", ["decimal"]), ...ui("Paid", "InputNumber", NUMBER_PROPS), svcMeta: { uiKind: "money" } }),
  f("payments", "paid_ts", "bigInt", "unixTimestamp", { ...complete("paid_ts", "BIGINT", ["bigInt"]), ...ui("Paid at", "DatePicker", { showTime: true, utc: false }), svcMeta: { uiKind: "unix_timestamp" } }),

  // legacy_events: metadata says guid, the table has no such column
  f("legacy_events", "guid", "string", "input", { ...complete("guid", "VARCHAR(36)", ["string"]), ...ui("GUID", "Input", WIDTH) }),
  f("legacy_events", "event_id", "bigInt", "integer", { ...complete("event_id", "BIGINT", ["bigInt"], { primaryKey: true }), ...ui("Event", "InputNumber", NUMBER_PROPS) }),
  f("legacy_events", "payload", "json", "json", { ...complete("payload", "JSON", ["json"]), ...ui("Payload", "Input.JSON") }),

  // platform tables keyed by id
  f("sys_setting", "id", "bigInt", "integer", { ...complete("id", "BIGINT", ["bigInt"], { primaryKey: true, allowNull: false }), ...ui("ID", "InputNumber", NUMBER_PROPS) }),
  f("sys_setting", "key", "string", "input", { ...complete("key", "VARCHAR(100)", ["string"]), ...ui("Key", "Input", WIDTH) }),
  f("sys_setting", "value", "text", "textarea", { ...complete("value", "TEXT", ["text"]), ...ui("Value", "Input.TextArea") }),
  f("users", "id", "bigInt", "integer", { primaryKey: true, autoIncrement: true, ...ui("ID", "InputNumber", NUMBER_PROPS) }),
  f("users", "nickname", "string", "input", { ...ui("Nickname", "Input", WIDTH) }),
  f("users", "createdBy", "belongsTo", "createdBy", { target: "users", foreignKey: "createdById", targetKey: "id", uiSchema: { type: "object", title: "Created by", "x-component": "AssociationField", "x-read-pretty": true } }),
  // a NocoBase system field on a business collection: its own interface, read-only
  f("customers", "createdAt", "date", "createdAt", { field: "createdAt", uiSchema: { type: "datetime", title: "Created at", "x-component": "DatePicker", "x-read-pretty": true } })
]

interface NodeSpec {
  readonly uid: string
  readonly parent: string | null
  readonly schema: Obj
  readonly damaged: boolean
}

const n = (uid: string, parent: string | null, schema: Obj, damaged = false): NodeSpec => ({ uid, parent, schema, damaged })
const tableBlock = (collection: string, rowKey?: string): Obj => ({
  type: "void",
  "x-decorator": "TableBlockProvider",
  "x-decorator-props": { collection, dataSource: "main", action: "list", params: { pageSize: 20 }, ...(rowKey === undefined ? {} : { rowKey }) },
  "x-component": "CardItem",
  "x-toolbar": "BlockSchemaToolbar"
})
const table = (rowKey?: string): Obj => ({
  type: "array",
  "x-component": "TableV2",
  "x-component-props": { rowSelection: { type: "checkbox" }, ...(rowKey === undefined ? {} : { rowKey }) },
  "x-use-component-props": "useTableBlockProps"
})
const column = (): Obj => ({ type: "void", "x-decorator": "TableV2.Column.Decorator", "x-component": "TableV2.Column" })

export const NODES: ReadonlyArray<NodeSpec> = [
  n("p_orders", null, { type: "void", "x-component": "Page" }),
  n("g_orders", "p_orders", { type: "void", "x-component": "Grid", "x-initializer": "page:addBlock" }),
  n("r_orders", "g_orders", { type: "void", "x-component": "Grid.Row" }),
  n("c_orders", "r_orders", { type: "void", "x-component": "Grid.Col" }),
  n("b_orders", "c_orders", tableBlock("orders", "id"), true),
  n("a_orders", "b_orders", { type: "void", "x-component": "ActionBar", "x-initializer": "table:configureActions" }),
  n("t_orders", "b_orders", table("id"), true),
  n("col_orders_amount", "t_orders", column()),
  n("f_orders_amount", "col_orders_amount", { type: "string", "x-collection-field": "orders.amount", "x-component": "Number", "x-read-pretty": true }, true),
  n("col_orders_qty", "t_orders", column()),
  n("f_orders_qty", "col_orders_qty", { type: "string", "x-collection-field": "orders.quantity", "x-component": "Integer", "x-component-props": { precision: 0 } }, true),
  n("col_orders_code", "t_orders", column()),
  n("f_orders_code", "col_orders_code", { type: "string", "x-collection-field": "orders.code", "x-component": "CollectionField", "x-read-pretty": true }),
  n("col_orders_note", "t_orders", column()),
  n("f_orders_note", "col_orders_note", { type: "string", "x-collection-field": "orders.note", "x-component": "SvcFancyWidget", "x-read-pretty": true }),

  n("b_products", null, tableBlock("products", "id"), true),
  n("t_products", "b_products", table()),

  n("b_customers", null, tableBlock("customers", "guid")),
  n("t_customers", "b_customers", table("guid")),
  n("col_customers_homepage", "t_customers", column()),
  n("f_customers_homepage", "col_customers_homepage", {
    type: "string",
    "x-collection-field": "customers.homepage",
    "x-component": "SvcPrettyField",
    "x-read-pretty": true,
    "x-component-props": { fieldName: "homepage", uiKind: "url", preview: "link", copyable: true, validator: "url", ellipsis: true }
  }),

  n("b_items", null, tableBlock("order_items")),
  n("t_items", "b_items", table("id"), true),

  n("b_legacy", null, tableBlock("legacy_events", "id")),
  n("t_legacy", "b_legacy", table("id")),

  n("b_sys", null, tableBlock("sys_setting", "id")),
  n("t_sys", "b_sys", table("id")),
  n("b_users", null, tableBlock("users", "id")),
  n("t_users", "b_users", table("id"))
]

/** Builds the damaged schema `svc` (metadata tables, business tables, platform tables). */
export const buildDamagedSvc = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of [...NOCOBASE_DDL("svc"), ...BUSINESS_DDL]) yield* sql.unsafe(statement)
  let sort = 0
  for (const collection of COLLECTIONS) {
    sort++
    yield* sql`INSERT INTO svc.collections (key, name, title, options, sort)
      VALUES (${`c_${collection.name}`}, ${collection.name}, ${collection.name}, ${text(collection.options, collection.damaged)}::json, ${sort})`
  }
  for (const field of FIELDS) {
    sort++
    yield* sql`INSERT INTO svc.fields (key, name, type, interface, "collectionName", options, sort)
      VALUES (${`f_${field.collection}_${field.name}`}, ${field.name}, ${field.type}, ${field.interface}, ${field.collection},
        ${text(field.options, field.damaged)}::json, ${sort})`
  }
  const parents = new Map(NODES.map((node) => [node.uid, node.parent]))
  for (const node of NODES) {
    yield* sql`INSERT INTO svc."uiSchemas" ("x-uid", name, schema) VALUES (${node.uid}, ${node.uid}, ${text(node.schema, node.damaged)}::json)`
    yield* sql`INSERT INTO svc."uiSchemaTreePath" (ancestor, descendant, depth, async, type, sort)
      VALUES (${node.uid}, ${node.uid}, 0, false, 'properties', 1)`
    let depth = 0
    for (let ancestor = node.parent; ancestor !== null; ancestor = parents.get(ancestor) ?? null) {
      depth++
      yield* sql`INSERT INTO svc."uiSchemaTreePath" (ancestor, descendant, depth, async, type, sort)
        VALUES (${ancestor}, ${node.uid}, ${depth}, false, 'properties', 1)`
    }
  }
})

/** Every metadata row as text (`options::text`, `schema::text`, interface), for byte-exact comparisons. */
export const metadataTexts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const collections = yield* sql<{ key: string; text: string }>`SELECT key, options::text AS text FROM svc.collections ORDER BY key`
  const fields = yield* sql<{ key: string; text: string; interface: string | null }>`SELECT key, interface, options::text AS text FROM svc.fields ORDER BY key`
  const nodes = yield* sql<{ key: string; text: string }>`SELECT "x-uid" AS key, schema::text AS text FROM svc."uiSchemas" ORDER BY "x-uid"`
  const out = new Map<string, string>()
  for (const row of collections) out.set(`collections/${row.key}`, row.text)
  for (const row of fields) out.set(`fields/${row.key}`, `${row.interface}|${row.text}`)
  for (const row of nodes) out.set(`uiSchemas/${row.key}`, row.text)
  return out
})
