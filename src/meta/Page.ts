// `meta page --collection C [--apply]`: a list page for a collection written straight into NocoBase's
// page tables (uiSchemas and uiSchemaTreePath, as NocoBase's own insertNewSchema writes them): a
// Page with one Grid holding a TableBlockProvider/TableV2 keyed by the collection's filterTargetKey,
// one column per field; fields with svcMeta (or an interface that implies a uiKind) shown by
// SvcPrettyField nodes built by prettyNodeFor, the others by CollectionField read-pretty.
// A dry run by default, like `meta repair`. The page needs plugin-svc-preset-actions on the server.
import { randomBytes } from "node:crypto"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { type JsonObject } from "./Json.ts"
import { prettyNodeFor } from "./PrettyField.ts"
import { collectionKey } from "./ReviewRules.ts"
import { type FieldRow, loadSnapshot } from "./Snapshot.ts"

/** A node of the page tree, as the page editor sends it (children under `properties`). */
export interface PageNode {
  readonly "x-uid": string
  readonly name: string
  readonly schema: JsonObject
  readonly children: ReadonlyArray<PageNode>
}

export interface PagePlan {
  readonly collection: string
  readonly key: string
  readonly page: PageNode
  /** The tab (Grid) node's uid and name: what a menu route of type `tabs` points at. */
  readonly tab: { readonly uid: string; readonly name: string }
  readonly columns: ReadonlyArray<{ readonly field: string; readonly component: "SvcPrettyField" | "CollectionField" }>
}

export class PageProblem extends Schema.TaggedError<PageProblem>()("PageProblem", { problems: Schema.Array(Schema.String) }) {
  override get message() {
    return this.problems.join("; ")
  }
}

/** NocoBase's uid shape: 11 lowercase letters and digits. */
export const newUid = (): string => {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
  return [...randomBytes(11)].map((byte) => alphabet[byte % alphabet.length]).join("")
}

/** Fields a list page leaves out: associations (no column of their own) and hidden ones. */
const isListed = (field: FieldRow) =>
  !["hasMany", "belongsToMany", "hasOne", "belongsTo", "belongsToArray"].includes(field.type ?? "") && field.options["hidden"] !== true

/** The page for `collection` from its metadata; fails with the reasons when it cannot be built. */
export const planPage = (
  collection: { readonly name: string; readonly options: JsonObject; readonly title?: string },
  fields: ReadonlyArray<FieldRow>,
  uid: () => string = newUid
): PagePlan | PageProblem => {
  const key = collectionKey(collection.options, fields)
  if (key === null) return new PageProblem({ problems: [`collection ${collection.name} has no single filterTargetKey or primary key`] })
  const problems: Array<string> = []
  const columns: Array<PagePlan["columns"][number]> = []
  const columnNodes: Array<PageNode> = []
  for (const field of fields.filter(isListed)) {
    const hasMeta = field.options["svcMeta"] !== undefined
    const pretty = prettyNodeFor(collection.name, { name: field.name, interface: field.interface, options: field.options })
    let cell: JsonObject
    if (pretty._tag === "ok") {
      const { name: _name, ...node } = pretty.node
      cell = node as unknown as JsonObject
      columns.push({ field: field.name, component: "SvcPrettyField" })
    } else if (hasMeta) {
      problems.push(...pretty.problems.map((problem) => `${collection.name}.${field.name}: ${problem}`))
      continue
    } else {
      cell = { type: "string", "x-collection-field": `${collection.name}.${field.name}`, "x-component": "CollectionField", "x-read-pretty": true }
      columns.push({ field: field.name, component: "CollectionField" })
    }
    columnNodes.push({
      "x-uid": uid(),
      name: `${field.name}_column`,
      schema: { type: "void", "x-decorator": "TableV2.Column.Decorator", "x-component": "TableV2.Column" },
      children: [{ "x-uid": uid(), name: field.name, schema: cell, children: [] }]
    })
  }
  if (problems.length > 0) return new PageProblem({ problems })
  if (columnNodes.length === 0) return new PageProblem({ problems: [`collection ${collection.name} has no field to list`] })
  const table: PageNode = {
    "x-uid": uid(),
    name: "table",
    schema: { type: "array", "x-component": "TableV2", "x-component-props": { rowKey: key, rowSelection: { type: "checkbox" } } },
    children: columnNodes
  }
  const block: PageNode = {
    "x-uid": uid(),
    name: "block",
    schema: {
      type: "void",
      "x-decorator": "TableBlockProvider",
      "x-decorator-props": { collection: collection.name, dataSource: "main", action: "list", params: { pageSize: 20 }, rowKey: key, showIndex: true },
      "x-component": "CardItem"
    },
    children: [table]
  }
  const tab = { uid: uid(), name: newUid() }
  const grid: PageNode = {
    "x-uid": tab.uid,
    name: tab.name,
    schema: { type: "void", "x-component": "Grid", "x-initializer": "page:addBlock" },
    children: [{
      "x-uid": uid(),
      name: "row",
      schema: { type: "void", "x-component": "Grid.Row" },
      children: [{ "x-uid": uid(), name: "col", schema: { type: "void", "x-component": "Grid.Col" }, children: [block] }]
    }]
  }
  const pageUid = uid()
  const page: PageNode = {
    "x-uid": pageUid,
    name: pageUid,
    schema: { type: "void", "x-component": "Page", title: collection.title ?? collection.name },
    children: [grid]
  }
  return { collection: collection.name, key, page, tab, columns }
}

/** The page as one nested schema (what `uiSchemas:getJsonSchema` serves back). */
export const pageJson = (node: PageNode): JsonObject => ({
  ...node.schema,
  name: node.name,
  "x-uid": node["x-uid"],
  ...(node.children.length === 0 ? {} : { properties: Object.fromEntries(node.children.map((child) => [child.name, pageJson(child)])) })
})

/** The rows NocoBase stores for the tree: one uiSchemas row per node; tree paths as its insertNewSchema writes them. */
export const pageRows = (plan: PagePlan) => {
  const nodes: Array<{ readonly uid: string; readonly name: string; readonly schema: JsonObject }> = []
  const paths: Array<{ readonly ancestor: string; readonly descendant: string; readonly depth: number; readonly type: string | null; readonly sort: number | null }> = []
  const walk = (node: PageNode, ancestors: ReadonlyArray<string>, sort: number | null) => {
    nodes.push({ uid: node["x-uid"], name: node.name, schema: { ...node.schema, name: node.name, "x-uid": node["x-uid"] } })
    paths.push({ ancestor: node["x-uid"], descendant: node["x-uid"], depth: 0, type: "properties", sort: null })
    ancestors.forEach((ancestor, i) => paths.push({ ancestor, descendant: node["x-uid"], depth: i + 1, type: null, sort }))
    node.children.forEach((child, i) => walk(child, [node["x-uid"], ...ancestors], i + 1))
  }
  walk(plan.page, [], null)
  return { nodes, paths }
}

/** Plans the page of `collection` in `schema` from the stored metadata. */
export const planCollectionPage = Effect.fn("meta.planCollectionPage")(function*(schema: string, name: string) {
  const snapshot = yield* loadSnapshot(schema)
  const collection = snapshot.collections.find((row) => row.name === name)
  if (collection === undefined) return yield* new PageProblem({ problems: [`no collection named ${JSON.stringify(name)} in schema ${schema}`] })
  const title = collection.options["title"]
  const planned = planPage(
    { name, options: collection.options, ...(typeof title === "string" ? { title } : {}) },
    snapshot.fields.filter((field) => field.collectionName === name)
  )
  if (planned instanceof PageProblem) return yield* planned
  return planned
})

/** Writes the planned page in one transaction. */
export const writePage = Effect.fn("meta.writePage")(function*(schema: string, plan: PagePlan) {
  const sql = yield* SqlClient.SqlClient
  const { nodes, paths } = pageRows(plan)
  yield* sql.withTransaction(Effect.gen(function*() {
    for (const node of nodes) {
      yield* sql`INSERT INTO ${sql(`${schema}.uiSchemas`)} ("x-uid", name, schema) VALUES (${node.uid}, ${node.name}, ${JSON.stringify(node.schema)}::json)`
    }
    for (const path of paths) {
      yield* sql`INSERT INTO ${sql(`${schema}.uiSchemaTreePath`)} (ancestor, descendant, depth, type, async, sort)
        VALUES (${path.ancestor}, ${path.descendant}, ${path.depth}, ${path.type}, ${path.depth === 0 ? false : null}, ${path.sort})`
    }
  }))
  return nodes.length
})
