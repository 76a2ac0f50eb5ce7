// The metadata doctor against a real NocoBase 2.2.15 (`npm run test:nocobase`): a business table
// loaded through "Load from database", a collection made as the UI makes one, a table-block page
// made through the page editor's API; the metadata then damaged by SQL the way bulk db2cm sync
// does and the server restarted so that it serves the damage; then audit → repair → refresh →
// refresh --restart as real CLI processes, checking what NocoBase's API serves after each step.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { existsSync } from "node:fs"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createTestDatabase, runSql } from "../support/database.ts"
import { apiClient, byUid, meta, type Ran, type RealNocoBase, startRealNocoBase } from "./support/RealNocoBase.ts"

const GUIDS = ["6f1c3b9e-0000-4000-8000-000000000001", "6f1c3b9e-0000-4000-8000-000000000002"]

const shown = (ran: Ran) => `exit ${ran.code}\n${ran.stdout}${ran.stderr}`

// A page as the page editor builds it: the page, then a table block inserted into its grid.
const node = (uid: string, schema: Record<string, unknown>, properties?: Record<string, unknown>) => ({
  ...schema,
  "x-uid": uid,
  ...(properties === undefined ? {} : { properties })
})
const PAGE = node("pg_orders", { type: "void", "x-component": "Page" }, {
  grid: node("grid_orders", { type: "void", "x-component": "Grid", "x-initializer": "page:addBlock" })
})
const TABLE_BLOCK = node("row_orders", { type: "void", "x-component": "Grid.Row" }, {
  col: node("col_orders", { type: "void", "x-component": "Grid.Col" }, {
    block: node("blk_orders", {
      type: "void",
      "x-decorator": "TableBlockProvider",
      "x-decorator-props": { collection: "orders", dataSource: "main", action: "list", params: { pageSize: 20 }, rowKey: "guid" },
      "x-component": "CardItem"
    }, {
      table: node("tbl_orders", {
        type: "array",
        "x-component": "TableV2",
        "x-component-props": { rowKey: "guid", rowSelection: { type: "checkbox" } }
      }, {
        quantity_column: node("colq_orders", { type: "void", "x-decorator": "TableV2.Column.Decorator", "x-component": "TableV2.Column" }, {
          quantity: node("fq_orders", { type: "string", "x-collection-field": "orders.quantity", "x-component": "CollectionField", "x-read-pretty": true })
        })
      })
    })
  })
})

// What bulk db2cm synchronisation leaves (NOCOBASE.md, the source document §2): no schema/tableName/
// filterTargetKey, type names as interfaces, unregistered Number/Integer, incomplete fields, rowKey id.
const DAMAGE = [
  `UPDATE svc.collections SET options = ((options::jsonb - 'schema' - 'tableName' - 'filterTargetKey' - 'underscored') || '{"from":"db2cm"}')::json WHERE name = 'orders'`,
  `UPDATE svc.fields SET options = (options::jsonb - 'primaryKey' - 'field' - 'rawType' - 'possibleTypes' - 'unique')::json WHERE "collectionName" = 'orders' AND name = 'guid'`,
  `UPDATE svc.fields SET interface = 'string', options = (options::jsonb - 'field')::json WHERE "collectionName" = 'orders' AND name = 'code'`,
  `UPDATE svc.fields SET interface = 'decimal', options = jsonb_set(options::jsonb - 'field', '{uiSchema,x-component}', '"Number"')::json WHERE "collectionName" = 'orders' AND name = 'amount'`,
  `UPDATE svc.fields SET interface = 'bigInt', options = jsonb_set(options::jsonb - 'field', '{uiSchema,x-component}', '"Integer"')::json WHERE "collectionName" = 'orders' AND name = 'quantity'`,
  `UPDATE svc."uiSchemas" SET schema = jsonb_set(schema::jsonb, '{x-decorator-props,rowKey}', '"id"')::json WHERE "x-uid" = 'blk_orders'`,
  `UPDATE svc."uiSchemas" SET schema = jsonb_set(schema::jsonb, '{x-component-props,rowKey}', '"id"')::json WHERE "x-uid" = 'tbl_orders'`,
  `UPDATE svc."uiSchemas" SET schema = jsonb_set(schema::jsonb, '{x-component}', '"Integer"')::json WHERE "x-uid" = 'fq_orders'`
]

type Api = Awaited<ReturnType<typeof apiClient>>

/** What the running server serves about orders: collection options, fields, the page, a record by guid. */
const served = async (api: Api) => {
  const meta = await api.get("collections:listMeta")
  assert.strictEqual(meta.status, 200, JSON.stringify(meta.body))
  const orders = (meta.body.data as Array<any>).find((collection) => collection.name === "orders")
  const fields = new Map<string, any>((orders?.fields ?? []).map((field: any) => [field.name, field]))
  const page = await api.get("uiSchemas:getJsonSchema/pg_orders")
  const block = byUid(page.body.data, "blk_orders")
  const record = await api.get(`orders:get?filterByTk=${GUIDS[0]}`)
  return {
    filterTargetKey: orders?.filterTargetKey,
    tableName: orders?.tableName,
    amount: { interface: fields.get("amount")?.interface, component: fields.get("amount")?.uiSchema?.["x-component"] },
    quantity: { interface: fields.get("quantity")?.interface, component: fields.get("quantity")?.uiSchema?.["x-component"] },
    code: fields.get("code")?.interface,
    blockRowKey: block?.["x-decorator-props"]?.rowKey,
    tableRowKey: byUid(block, "tbl_orders")?.["x-component-props"]?.rowKey,
    cellComponent: byUid(block, "fq_orders")?.["x-component"],
    record: { status: record.status, guid: record.body.data?.guid }
  }
}

describe("meta doctor against a real NocoBase 2.2.15", () => {
  let nocobase: RealNocoBase
  let databaseUrl: string

  beforeAll(async () => {
    if (!existsSync("dist/main.js")) throw new Error("dist/main.js is missing: run `npm run build` (npm run test:nocobase does)")
    databaseUrl = await createTestDatabase("nocobase")
    nocobase = await startRealNocoBase(databaseUrl, (line) => console.log(line))
  }, 1_200_000)

  afterAll(async () => {
    await nocobase?.stop()
  })

  it("audit finds the db2cm damage and nothing of NocoBase's own; repair fixes it; refresh sees the stale server; --restart makes it serve the repair", async () => {
    const env = { DATABASE_URL: databaseUrl, NOCOBASE_ACCOUNT: nocobase.account, NOCOBASE_PASSWORD: nocobase.password }
    const api = await apiClient(nocobase)

    // a business table in the legacy database, loaded through "Load from database"
    await runSql(databaseUrl, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`CREATE TABLE svc.orders (guid varchar(36) PRIMARY KEY, code varchar(32), amount numeric(18,2),
        quantity bigint, note text, paid boolean)`)
      yield* sql`INSERT INTO svc.orders (guid, code, amount, quantity, note, paid) VALUES
        (${GUIDS[0]!}, 'A-1', 12.50, 3, 'first', true), (${GUIDS[1]!}, 'A-2', 99.99, 1, 'second', false)`
    }))
    const loaded = await api.post("dataSources:loadTables", { dataSourceKey: "main", tables: ["orders"] })
    assert.strictEqual(loaded.status, 200, JSON.stringify(loaded.body))
    // a collection made as the UI's "general" template makes one: NocoBase's system fields with their own interfaces
    const systemField = (name: string, iface: string, type: string, extra: Record<string, unknown>) => ({
      name,
      interface: iface,
      type,
      ...extra,
      uiSchema: { type: type === "belongsTo" ? "object" : "datetime", title: name, "x-component": type === "belongsTo" ? "AssociationField" : "DatePicker", "x-read-pretty": true }
    })
    const notes = await api.post("collections:create", {
      name: "notes",
      title: "Notes",
      template: "general",
      autoGenId: true,
      createdAt: true,
      updatedAt: true,
      createdBy: true,
      updatedBy: true,
      fields: [
        { name: "id", interface: "id", type: "bigInt", autoIncrement: true, primaryKey: true, allowNull: false, uiSchema: { type: "number", title: "ID", "x-component": "InputNumber", "x-read-pretty": true } },
        systemField("createdAt", "createdAt", "date", { field: "createdAt" }),
        systemField("updatedAt", "updatedAt", "date", { field: "updatedAt" }),
        systemField("createdBy", "createdBy", "belongsTo", { target: "users", foreignKey: "createdById" }),
        systemField("updatedBy", "updatedBy", "belongsTo", { target: "users", foreignKey: "updatedById" }),
        { name: "title", interface: "input", type: "string", uiSchema: { type: "string", title: "Title", "x-component": "Input" } }
      ]
    })
    assert.strictEqual(notes.status, 200, JSON.stringify(notes.body))
    // a page with a table block on orders, through the page editor's API
    assert.strictEqual((await api.post("uiSchemas:insert", PAGE)).status, 200)
    const inserted = await api.post("uiSchemas:insertAdjacent/grid_orders?position=beforeEnd", { schema: TABLE_BLOCK })
    assert.strictEqual(inserted.status, 200, JSON.stringify(inserted.body))

    // a healthy NocoBase: no findings, NocoBase's own left alone and said so
    const healthy = await meta(["audit"], env)
    assert.strictEqual(healthy.code, 0, shown(healthy))
    assert.include(healthy.stdout, "no findings in schema svc")
    assert.match(healthy.stdout, /left alone as NocoBase's own: 2 platform-internal collections \(roles, users\)[^\n]*@nocobase\/plugin-users[^\n]*; 5 NocoBase system fields \(notes\.id, notes\.createdAt/)
    assert.notMatch(healthy.stdout, /^(?!left alone).*\b(users|roles)\./m)

    // bulk db2cm damage, and the server restarted so that it serves it; a user opens the page (cached)
    await runSql(databaseUrl, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const statement of DAMAGE) yield* sql.unsafe(statement)
    }))
    await nocobase.restartProcess()
    const damaged = await served(api)
    assert.deepInclude(damaged, {
      filterTargetKey: undefined,
      amount: { interface: "decimal", component: "Number" },
      quantity: { interface: "bigInt", component: "Integer" },
      code: "string",
      blockRowKey: "id",
      tableRowKey: "id",
      cellComponent: "Integer"
    }, nocobase.output().slice(-2000))
    assert.strictEqual(damaged.record.status, 400) // orders:get by guid fails without filterTargetKey
    for (const uid of ["blk_orders", "tbl_orders", "fq_orders"]) await api.get(`uiSchemas:getJsonSchema/${uid}`)

    const audit = await meta(["audit"], env)
    assert.strictEqual(audit.code, 1, shown(audit))
    assert.include(audit.stdout, "14 findings in schema svc: 14 repaired by `meta repair --apply`, 0 need a person")
    assert.include(audit.stdout, "left alone as NocoBase's own: 2 platform-internal collections (roles, users)")
    for (const line of audit.stdout.split("\n").filter((line) => /^[a-z-]+( \[\d\])?\s+(auto|person)\s/.test(line))) {
      assert.match(line, /\s+orders\s+(orders|uiSchema )/, `a finding outside orders: ${line}`)
    }

    const repair = await meta(["repair", "--apply"], env)
    assert.strictEqual(repair.code, 0, shown(repair))
    assert.include(repair.stdout, "applied: 8 rows (1 collections, 4 fields, 3 page nodes)")
    const clean = await meta(["audit"], env)
    assert.strictEqual(clean.code, 0, shown(clean))

    // the database is repaired, the running server is not: refresh says so and exits 1
    const stale = await meta(["refresh", "--url", nocobase.url], env)
    assert.strictEqual(stale.code, 1, shown(stale))
    assert.include(stale.stdout, "running metadata: STALE")
    assert.include(stale.stdout, `stale  collection  orders  options.filterTargetKey: running server has (absent), repaired "guid"`)
    assert.include(stale.stdout, `stale  field  orders.amount  interface: running server has "decimal", repaired "number"`)
    assert.include(stale.stdout, `stale  field  orders.quantity  options.uiSchema.x-component: running server has "Integer", repaired "InputNumber"`)
    assert.include(stale.stdout, `stale  page  uiSchema tbl_orders  schema.x-component-props.rowKey: getJsonSchema/tbl_orders serves "id", repaired "guid"`)
    assert.include(stale.stdout, `stale  page  uiSchema fq_orders`)
    assert.match(stale.stdout, /stale  record  orders  orders:get\?filterByTk=6f1c3b9e-[0-9a-f-]+ answered HTTP 400/)
    assert.include(stale.stdout, "run `meta refresh --restart` (app:clearCache and app:restart)")
    assert.deepInclude(await served(api), { filterTargetKey: undefined, tableRowKey: "id", cellComponent: "Integer" })

    const restarted = await meta(["refresh", "--url", nocobase.url, "--restart"], env)
    assert.strictEqual(restarted.code, 0, shown(restarted) + nocobase.output().slice(-2000))
    assert.include(restarted.stdout, "app:clearCache: done")
    assert.include(restarted.stdout, "app:restart: requested")
    assert.match(restarted.stdout, /running metadata: fresh, serves every repaired value \(checked 1 collection, 4 fields, 3 page nodes, 1 record\)\n$/)

    // what NocoBase serves now: the repaired collection, fields and page; a record by guid; sign-in and users still work
    const repaired = await served(api)
    assert.deepStrictEqual(repaired, {
      filterTargetKey: "guid",
      tableName: "orders",
      amount: { interface: "number", component: "InputNumber" },
      quantity: { interface: "integer", component: "InputNumber" },
      code: "input",
      blockRowKey: "guid",
      tableRowKey: "guid",
      cellComponent: "InputNumber",
      record: { status: 200, guid: GUIDS[0] }
    })
    const again = await apiClient(nocobase)
    const users = await again.get("users:list")
    assert.strictEqual(users.status, 200)
    assert.include((users.body.data as Array<any>).map((user) => user.email), nocobase.account)

    const fresh = await meta(["refresh", "--url", nocobase.url], env)
    assert.strictEqual(fresh.code, 0, shown(fresh))
    assert.notInclude(fresh.stdout, "app:restart")
    for (const ran of [stale, restarted, fresh]) assert.notInclude(ran.stdout + ran.stderr, nocobase.password)
  }, 600_000)
})
