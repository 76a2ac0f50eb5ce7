import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { applyRepairs, audit, auditReport, checklist, planRepairs, undoRepairs } from "../../src/meta/Doctor.ts"
import { createTestDatabase, runSql } from "../support/database.ts"
import { buildDamagedSvc, metadataTexts, NOCOBASE_DDL } from "./support/fixture.ts"

const damagedDatabase = async () => {
  const url = await createTestDatabase("meta")
  await runSql(url, buildDamagedSvc)
  return url
}

const describeFinding = (finding: { check: string; subject: string; repair: string }) => `${finding.repair} ${finding.check} ${finding.subject}`

/** What the fixture breaks and `meta repair --apply` must fix. */
const REPAIRABLE = [
  "auto missing-schema orders",
  "auto missing-filter-target-key orders",
  "auto missing-filter-target-key products",
  "auto filter-target-key-array order_items",
  "auto collection-options payments",
  "auto collection-options payments",
  "auto number-component order_items.qty",
  "auto field-incomplete orders.guid",
  "auto wrong-interface orders.code",
  "auto field-incomplete orders.code",
  "auto wrong-interface orders.amount",
  "auto number-component orders.amount",
  "auto field-incomplete orders.amount",
  "auto wrong-interface orders.quantity",
  "auto number-component orders.quantity",
  "auto field-incomplete orders.quantity",
  "auto number-component products.price",
  "auto wrong-interface products.rating",
  "auto number-component products.rating",
  "auto field-incomplete products.rating",
  "auto row-key uiSchema b_orders",
  "auto row-key uiSchema b_products",
  "auto page-number-component uiSchema f_orders_amount",
  "auto page-number-component uiSchema f_orders_qty",
  "auto row-key uiSchema t_items",
  "auto row-key uiSchema t_orders"
]
/** What needs a person and stays in the audit after the repair. */
const NEEDS_A_PERSON = [
  "person belongs-to order_items.product",
  "person belongs-to order_items.warehouse",
  "person belongs-to payments.order",
  "person svc-meta products.bad_meta",
  "person svc-meta products.bad_meta",
  "person svc-meta products.bad_meta",
  "person row-key uiSchema b_legacy",
  "person unregistered-component uiSchema f_orders_note",
  "person row-key uiSchema t_legacy"
]

const CHANGED_ROWS = [
  "collections/c_order_items",
  "collections/c_orders",
  "collections/c_payments",
  "collections/c_products",
  "fields/f_order_items_qty",
  "fields/f_orders_amount",
  "fields/f_orders_code",
  "fields/f_orders_guid",
  "fields/f_orders_quantity",
  "fields/f_products_price",
  "fields/f_products_rating",
  "uiSchemas/b_orders",
  "uiSchemas/b_products",
  "uiSchemas/f_orders_amount",
  "uiSchemas/f_orders_qty",
  "uiSchemas/t_items",
  "uiSchemas/t_orders"
]

const failure = <A, E>(exit: Exit.Exit<A, E>): Record<string, unknown> => {
  assert.isTrue(Exit.isFailure(exit), "expected a failure")
  return (Exit.isFailure(exit) ? Cause.squash(exit.cause) : {}) as Record<string, unknown>
}

const differing = (a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>) =>
  [...new Set([...a.keys(), ...b.keys()])].filter((key) => a.get(key) !== b.get(key)).sort()

const optionsOf = (url: string, table: "collections" | "fields", key: string) =>
  runSql(url, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ text: string }>`SELECT options::text AS text FROM ${sql(`svc.${table}`)} WHERE key = ${key}`
    return JSON.parse(row!.text) as Record<string, any>
  }))

describe("meta doctor on a damaged synchronised schema", () => {
  it("audit lists every finding, with the checklist items it fails; --collection narrows it", async () => {
    const url = await damagedDatabase()
    const findings = await runSql(url, audit("svc"))
    assert.deepStrictEqual(findings.map(describeFinding).sort(), [...REPAIRABLE, ...NEEDS_A_PERSON].sort())
    const numbered = findings.filter((finding) => finding.checklist !== null).map((finding) => `${finding.checklist} ${finding.subject}`).sort()
    assert.deepStrictEqual(numbered, [
      "1 orders.amount", "1 orders.code", "1 orders.quantity", "1 products.rating",
      "2 order_items.qty", "2 orders.amount", "2 orders.quantity", "2 products.price", "2 products.rating",
      "3 orders", "3 products", "4 orders"
    ])
    // the #130 diagnosis names the collection of the page node
    const widget = findings.find((finding) => finding.subject === "uiSchema f_orders_note")!
    assert.strictEqual(widget.collection, "orders")
    assert.include(widget.detail, "SvcFancyWidget")

    const rows = await runSql(url, checklist("svc"))
    assert.deepStrictEqual(rows.map((item) => item.rows.length), [4, 5, 2, 1, 6])

    // NocoBase's own: the db2cm'd users collection (options.origin) and system fields are left alone, and said so
    const { skipped } = await runSql(url, auditReport("svc"))
    assert.deepStrictEqual(skipped, { platform: [{ collection: "users", origin: "@nocobase/plugin-users" }], systemFields: ["customers.createdAt"] })
    assert.isFalse(findings.some((finding) => finding.collection === "users" || finding.subject === "customers.createdAt"))
    assert.isFalse(rows.some((item) => item.rows.some((row) => row === "users" || row.startsWith("users.") || row === "customers.createdAt")))

    const orders = await runSql(url, audit("svc", "orders"))
    assert.isTrue(orders.length > 0)
    assert.isTrue(orders.every((finding) => finding.collection === "orders"))
    assert.deepStrictEqual(
      orders.map(describeFinding).sort(),
      [...REPAIRABLE, ...NEEDS_A_PERSON].filter((line) => / orders(\.|$)|uiSchema (b_orders|t_orders|f_orders_)/.test(line)).sort()
    )
  })

  it("dry run changes nothing; apply fixes exactly what is broken; a second apply is a no-op; undo restores byte-identical rows", async () => {
    const url = await damagedDatabase()
    const original = await runSql(url, metadataTexts)

    const plan = await runSql(url, planRepairs("svc"))
    assert.deepStrictEqual(plan.map((change) => `${change.table}/${change.key}`).sort(), CHANGED_ROWS)
    assert.deepStrictEqual(differing(original, await runSql(url, metadataTexts)), [], "the dry run wrote something")

    const applied = await runSql(url, applyRepairs("svc"))
    assert.match(applied.runId, /^[0-9]+$/)
    const repaired = await runSql(url, metadataTexts)
    assert.deepStrictEqual(differing(original, repaired), CHANGED_ROWS)

    // the values the document asks for
    const orders = await optionsOf(url, "collections", "c_orders")
    assert.deepInclude(orders, { schema: "svc", tableName: "orders", underscored: false, filterTargetKey: "guid", from: "db2cm" })
    assert.strictEqual((await optionsOf(url, "collections", "c_order_items")).filterTargetKey, "guid")
    assert.deepInclude(await optionsOf(url, "collections", "c_payments"), { tableName: "payments", underscored: false })
    const quantity = repaired.get("fields/f_orders_quantity")!
    assert.isTrue(quantity.startsWith("integer|"))
    assert.include(quantity, "99999999999999999999", "a big number lost its digits")
    const price = await optionsOf(url, "fields", "f_products_price")
    assert.deepStrictEqual(price.uiSchema["x-component-props"], { style: { width: "100%" }, stringMode: true, step: "1" })
    assert.strictEqual(price.uiSchema["x-component"], "InputNumber")
    const customer = await optionsOf(url, "fields", "f_orders_customer")
    assert.notProperty(customer, "field", "an association got options.field")
    assert.include(repaired.get("uiSchemas/t_orders")!, `"rowKey":"guid"`)
    assert.include(repaired.get("uiSchemas/b_orders")!, `"rowKey":"guid"`)
    // platform tables keyed by id, and the table whose guid column does not exist, are left alone
    for (const key of ["collections/c_sys_setting", "collections/c_users", "uiSchemas/b_sys", "uiSchemas/t_sys", "uiSchemas/b_users", "uiSchemas/t_users", "uiSchemas/b_legacy", "uiSchemas/t_legacy", "collections/c_customers"]) {
      assert.strictEqual(repaired.get(key), original.get(key), key)
    }

    const after = await runSql(url, audit("svc"))
    assert.deepStrictEqual(after.map(describeFinding).sort(), [...NEEDS_A_PERSON].sort())
    assert.deepStrictEqual((await runSql(url, checklist("svc"))).map((item) => item.rows), [[], [], [], [], []])

    const again = await runSql(url, applyRepairs("svc"))
    assert.strictEqual(again.changes.length, 0)
    assert.notStrictEqual(again.runId, applied.runId)
    assert.deepStrictEqual(differing(repaired, await runSql(url, metadataTexts)), [])

    const undone = await runSql(url, undoRepairs(applied.runId))
    assert.strictEqual(undone.restored, 21) // 17 rows; 4 of them changed both interface and options
    assert.deepStrictEqual(differing(original, await runSql(url, metadataTexts)), [], "undo is not byte-identical")
    const twice = failure(await runSql(url, Effect.exit(undoRepairs(applied.runId))))
    assert.deepInclude(twice, { _tag: "UndoFailed", reason: "already-undone" })
  })

  it("undo refuses, and restores nothing, when a repaired row changed after the run", async () => {
    const url = await damagedDatabase()
    const applied = await runSql(url, applyRepairs("svc"))
    await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE svc.fields SET options = '{"edited":"by hand"}'::json WHERE key = 'f_orders_code'`
    }))
    const before = await runSql(url, metadataTexts)
    const refused = failure(await runSql(url, Effect.exit(undoRepairs(applied.runId))))
    assert.deepInclude(refused, { _tag: "UndoFailed", reason: "changed-since", keys: ["f_orders_code"] })
    assert.deepStrictEqual(differing(before, await runSql(url, metadataTexts)), [])
    assert.deepInclude(failure(await runSql(url, Effect.exit(undoRepairs("999999")))), { _tag: "UndoFailed", reason: "not-found" })
  })

  it("a failure halfway through the repair rolls everything back", async () => {
    const url = await damagedDatabase()
    await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`CREATE SEQUENCE svc.fail_counter`)
      yield* sql.unsafe(`CREATE FUNCTION svc.fail_on_third() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF nextval('svc.fail_counter') = 3 THEN RAISE EXCEPTION 'injected failure on the third field update'; END IF;
          RETURN NEW;
        END $$`)
      yield* sql.unsafe(`CREATE TRIGGER fail_on_third BEFORE UPDATE ON svc.fields FOR EACH ROW EXECUTE FUNCTION svc.fail_on_third()`)
    }))
    const original = await runSql(url, metadataTexts)
    const exit = await runSql(url, Effect.exit(applyRepairs("svc")))
    assert.isTrue(Exit.isFailure(exit))
    assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "injected failure")
    assert.deepStrictEqual(differing(original, await runSql(url, metadataTexts)), [], "a partial repair was committed")
    const logged = await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ present: boolean }>`SELECT to_regclass('meta_doctor.repair_run') IS NOT NULL AS present`
      return row!.present
    }))
    assert.isFalse(logged, "the repair log survived the rollback")
    // the trigger counted: the failure happened after some rows had been updated in the transaction
    const counted = await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ value: string }>`SELECT last_value::text AS value FROM svc.fail_counter`
      return Number(row!.value)
    }))
    assert.strictEqual(counted, 3)
  })

  it("two applies at once: one repairs, the other finds nothing to do", async () => {
    const url = await damagedDatabase()
    const [a, b] = await Promise.all([runSql(url, applyRepairs("svc")), runSql(url, applyRepairs("svc"))])
    assert.deepStrictEqual([a!.changes.length, b!.changes.length].sort((x, y) => x - y), [0, 17])
  })

  it("an unregistered field component is reported with its collection, and fails checklist item 5", async () => {
    const url = await damagedDatabase()
    await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO svc.fields (key, name, type, interface, "collectionName", options)
        VALUES ('f_customers_code', 'code', 'string', 'input', 'customers',
          '{"field":"code","uiSchema":{"type":"string","x-component":"CodeEditor"}}'::json)`
    }))
    const findings = (await runSql(url, audit("svc", "customers"))).map(describeFinding).sort()
    assert.deepStrictEqual(findings, ["person field-mismatch customers.code", "person unregistered-component customers.code"])
    const items = await runSql(url, checklist("svc"))
    assert.include(items[4]!.rows, "customers.code")
  })

  it("a belongsTo to a platform table that has no collections row is checked against the table", async () => {
    const url = await damagedDatabase()
    await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE svc.roles (name varchar(255) PRIMARY KEY, title varchar(255))`
      yield* sql`ALTER TABLE svc.customers ADD COLUMN role_name varchar(255)`
      yield* sql`INSERT INTO svc.fields (key, name, type, interface, "collectionName", options) VALUES
        ('f_customers_role', 'role', 'belongsTo', 'm2o', 'customers',
          '{"target":"roles","targetKey":"name","foreignKey":"role_name","uiSchema":{"x-component":"AssociationField"}}'::json),
        ('f_customers_approver', 'approver', 'belongsTo', 'm2o', 'customers',
          '{"target":"roles","foreignKey":"role_name","uiSchema":{"x-component":"AssociationField"}}'::json)`
    }))
    const findings = await runSql(url, audit("svc", "customers"))
    assert.deepStrictEqual(findings.map((finding) => `${finding.subject}: ${finding.detail}`), [
      `customers.approver: association approver in customers: targetKey "id" does not exist in table svc.roles`
    ])
  })

  it("works on another schema (--schema) and writes that schema name into options.schema", async () => {
    const url = await createTestDatabase("meta")
    await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const statement of NOCOBASE_DDL("nb")) yield* sql.unsafe(statement)
      yield* sql.unsafe(`CREATE TABLE nb.tickets (guid varchar(36) PRIMARY KEY, title text)`)
      yield* sql`INSERT INTO nb.collections (key, name, options) VALUES ('c1', 'tickets', '{"from":"db2cm","autoGenId":false}'::json)`
      yield* sql`INSERT INTO nb.fields (key, name, type, interface, "collectionName", options) VALUES
        ('f1', 'guid', 'string', 'input', 'tickets', '{"primaryKey":true,"uiSchema":{"x-component":"Input"}}'::json)`
    }))
    await runSql(url, applyRepairs("nb"))
    const [row] = await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ text: string }>`SELECT options::text AS text FROM nb.collections`
    }))
    assert.deepStrictEqual(JSON.parse(row!.text), {
      from: "db2cm", autoGenId: false, schema: "nb", tableName: "tickets", underscored: false, filterTargetKey: "guid"
    })
    assert.deepStrictEqual(await runSql(url, audit("nb")), [])
  })
})
