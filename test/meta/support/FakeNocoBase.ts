// A small local server speaking NocoBase 2.x's HTTP wire format for the endpoints `meta refresh`
// uses, for the odd answers a real server rarely gives (5xx, no answer, never back after a
// restart). Like the real server it holds the metadata in memory (loaded from the real `svc`
// tables at start and on app:restart) while fields:list reads the database on every call; page
// schemas are cached per node until app:clearCache or a restart; `<collection>:get` fails with 400
// when the loaded collection has no filterTargetKey (test/meta/RealNocoBase.nocobase.ts runs the real one).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { runSql } from "../../support/database.ts"

export interface FakeNocoBaseOptions {
  readonly databaseUrl: string
  readonly account: string
  readonly password: string
  /** `dataSources:refresh?filterByTk=main` reloads the metadata (as the document says) or does nothing (as 2.x really does). */
  readonly refreshReloads: boolean
  /** app:restart reloads the metadata (default true); false: a server that stays stale. */
  readonly restartReloads?: boolean
  /** How long the server answers 503 after app:restart (default 300 ms); `Infinity`: it never comes back. */
  readonly restartMs?: number
  /** `resource:action` answered with this HTTP status (after sign-in). */
  readonly failWith?: { readonly action: string; readonly status: number }
  /** `resource:action` never answered. */
  readonly hang?: string
  /** Page schemas cached at start (true: every node; or these x-uids), as on a server whose pages users have opened. */
  readonly preloadPages?: boolean | ReadonlyArray<string>
}

export interface FakeNocoBase {
  readonly url: string
  /** `METHOD resource:action` of every request, in order. */
  readonly calls: Array<string>
  /** Authorization headers seen, to check that tokens are sent. */
  readonly authorizations: Array<string>
  /** How many requests were answered 503 while restarting. */
  readonly downAnswers: () => number
  readonly close: () => Promise<void>
}

type Obj = Record<string, unknown>

/** The value with every object's keys in reverse order: the real server serves loaded options in its own key order. */
const reversedKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(reversedKeys)
    : value !== null && typeof value === "object"
    ? Object.fromEntries(Object.entries(value).reverse().map(([key, item]) => [key, reversedKeys(item)]))
    : value

const loadMetadata = (databaseUrl: string) =>
  runSql(databaseUrl, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const collections = yield* sql<{ name: string; text: string | null }>`SELECT name, options::text AS text FROM svc.collections ORDER BY sort NULLS LAST, name`
    const fields = yield* sql<{ key: string; name: string; text: string | null; type: string | null; interface: string | null; collection: string }>`
      SELECT key, name, type, interface, "collectionName" AS collection, options::text AS text FROM svc.fields ORDER BY sort NULLS LAST, name`
    return collections.map((collection) => {
      const options = JSON.parse(collection.text ?? "{}") as Obj
      const own: Array<Obj> = fields.filter((field) => field.collection === collection.name).map((field) => ({
        ...(reversedKeys(JSON.parse(field.text ?? "{}")) as Obj),
        key: field.key,
        name: field.name,
        type: field.type,
        interface: field.interface,
        collectionName: field.collection
      }))
      const primary = own.find((field) => field["primaryKey"] === true)
      const declared = options["filterTargetKey"]
      // Collection#filterTargetKey: a one-element array reads as its element, absent as the primary key (absent without one)
      const filterTargetKey = Array.isArray(declared) && declared.length === 1 ? declared[0] : declared ?? primary?.["name"]
      return { ...options, name: collection.name, loadedFromCollectionManager: true, ...(filterTargetKey === undefined ? {} : { filterTargetKey }), fields: own }
    })
  }))

const fieldsFromDatabase = (databaseUrl: string, collection: string) =>
  runSql(databaseUrl, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ key: string; name: string; text: string | null; type: string | null; interface: string | null }>`
      SELECT key, name, type, interface, options::text AS text FROM svc.fields WHERE "collectionName" = ${collection} ORDER BY sort NULLS LAST, name`
    return rows.map((row) => ({
      ...(JSON.parse(row.text ?? "{}") as Obj),
      key: row.key,
      name: row.name,
      type: row.type,
      interface: row.interface,
      collectionName: collection
    }))
  }))

/** A page node with its children, as uiSchemas:getJsonSchema serves it (from uiSchemas and uiSchemaTreePath). */
const schemaFromDatabase = (databaseUrl: string, uid: string) =>
  runSql(databaseUrl, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const nodes = yield* sql<{ uid: string; name: string | null; text: string | null; parent: string | null }>`
      SELECT n."x-uid" AS uid, n.name, n.schema::text AS text, p.ancestor AS parent
      FROM svc."uiSchemaTreePath" t JOIN svc."uiSchemas" n ON n."x-uid" = t.descendant
      LEFT JOIN svc."uiSchemaTreePath" p ON p.descendant = n."x-uid" AND p.depth = 1
      WHERE t.ancestor = ${uid} ORDER BY t.depth, n."x-uid"`
    const built = new Map<string, Obj>()
    for (const row of nodes) {
      const node: Obj = { ...(JSON.parse(row.text ?? "{}") as Obj), name: row.name, "x-uid": row.uid, "x-async": false }
      built.set(row.uid, node)
      const parent = row.uid === uid || row.parent === null ? undefined : built.get(row.parent)
      if (parent !== undefined) parent["properties"] = { ...(parent["properties"] as Obj | undefined), [row.name ?? row.uid]: node }
    }
    return built.get(uid) ?? {}
  }))

/** One record of a collection's table (the fake's `<collection>:list`/`:get`), by a column or the first one. */
const recordFromDatabase = (databaseUrl: string, table: string, where?: { readonly column: string; readonly value: string }) =>
  runSql(databaseUrl, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = where === undefined
      ? yield* sql<Obj>`SELECT * FROM ${sql(`svc.${table}`)} LIMIT 1`
      : yield* sql<Obj>`SELECT * FROM ${sql(`svc.${table}`)} WHERE ${sql(where.column)}::text = ${where.value} LIMIT 1`
    return rows[0]
  }))

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const send = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body, (_key, value: unknown) => typeof value === "bigint" ? value.toString() : value)
  response.writeHead(status, { "content-type": "application/json; charset=utf-8" })
  response.end(text)
}

export const startFakeNocoBase = async (options: FakeNocoBaseOptions): Promise<FakeNocoBase> => {
  let metadata = await loadMetadata(options.databaseUrl)
  let pages = new Map<string, Obj>()
  if (options.preloadPages !== undefined && options.preloadPages !== false) {
    const uids = options.preloadPages === true
      ? (await runSql(options.databaseUrl, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ uid: string }>`SELECT "x-uid" AS uid FROM svc."uiSchemas"`
      }))).map((row) => row.uid)
      : options.preloadPages
    for (const uid of uids) pages.set(uid, await schemaFromDatabase(options.databaseUrl, uid))
  }
  const tokens = new Set<string>()
  const calls: Array<string> = []
  const authorizations: Array<string> = []
  let downUntil = 0
  let downAnswers = 0

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://localhost")
    const action = url.pathname.replace(/^\/api\//, "")
    calls.push(`${request.method} ${action}`)
    if (Date.now() < downUntil) {
      downAnswers++
      return send(response, 503, { errors: [{ code: "APP_COMMANDING", message: "The application is restarting" }] })
    }
    if (action === "auth:signIn" && request.method === "POST") {
      const body = JSON.parse(await readBody(request) || "{}") as Obj
      if (body["account"] !== options.account || body["password"] !== options.password) {
        return send(response, 401, { errors: [{ message: "The username or password is incorrect, please re-enter" }] })
      }
      const token = randomBytes(16).toString("hex")
      tokens.add(token)
      return send(response, 200, { data: { user: { id: 1, nickname: "Super Admin" }, token } })
    }
    const authorization = request.headers.authorization ?? ""
    authorizations.push(authorization)
    if (!authorization.startsWith("Bearer ") || !tokens.has(authorization.slice(7))) {
      return send(response, 401, { errors: [{ code: "EMPTY_TOKEN", message: "Unauthenticated. Please sign in to continue." }] })
    }
    if (options.hang !== undefined && action === options.hang) return // never answered
    if (options.failWith !== undefined && action === options.failWith.action) {
      return send(response, options.failWith.status, { errors: [{ message: `injected ${options.failWith.status}` }] })
    }
    if (request.method === "GET" && action.startsWith("uiSchemas:getJsonSchema/")) {
      const uid = decodeURIComponent(action.slice("uiSchemas:getJsonSchema/".length))
      let node = pages.get(uid)
      if (node === undefined) {
        node = await schemaFromDatabase(options.databaseUrl, uid)
        pages.set(uid, node)
      }
      return send(response, 200, { data: node })
    }
    const record = /^([A-Za-z_][A-Za-z0-9_]*):(list|get)$/.exec(action)
    const loaded = record === null ? undefined : metadata.find((collection) => collection["name"] === record[1])
    if (request.method === "GET" && record !== null && loaded !== undefined) {
      const declared = (loaded as Obj)["tableName"]
      const table = typeof declared === "string" ? declared : record[1]!
      if (record[2] === "list") {
        const row = await recordFromDatabase(options.databaseUrl, table)
        return send(response, 200, { data: row === undefined ? [] : [row], meta: { count: row === undefined ? 0 : 1 } })
      }
      const key = loaded["filterTargetKey"]
      if (typeof key !== "string") return send(response, 400, { errors: [{ message: "Invalid SQL column or table reference" }] })
      const row = await recordFromDatabase(options.databaseUrl, table, { column: key, value: url.searchParams.get("filterByTk") ?? "" })
      return row === undefined ? send(response, 404, { errors: [{ message: "Not Found" }] }) : send(response, 200, { data: row })
    }
    switch (`${request.method} ${action}`) {
      case "POST dataSources:refresh":
        if (url.searchParams.get("filterByTk") !== "main") return send(response, 404, { errors: [{ message: "data source not found" }] })
        if (options.refreshReloads) metadata = await loadMetadata(options.databaseUrl)
        return send(response, 200, { data: {} })
      case "GET collections:listMeta":
        return send(response, 200, { data: metadata })
      case "GET fields:list": {
        const collection = url.searchParams.get("filter[collectionName]")
        if (collection === null || url.searchParams.get("paginate") !== "false") {
          return send(response, 400, { errors: [{ message: "this fake answers filter[collectionName] with paginate=false only" }] })
        }
        return send(response, 200, { data: await fieldsFromDatabase(options.databaseUrl, collection) })
      }
      case "POST app:clearCache":
        pages = new Map()
        return send(response, 200, { data: null })
      case "POST app:restart": {
        send(response, 200, { data: null })
        const restartMs = options.restartMs ?? 300
        // the restart begins a moment after the answer, as on the real server, which answers
        // again only once it has loaded the metadata
        setTimeout(() => {
          downUntil = Infinity
          if (!Number.isFinite(restartMs)) return
          setTimeout(() => {
            const reload = options.restartReloads ?? true
              ? loadMetadata(options.databaseUrl).then((loaded) => {
                metadata = loaded
                pages = new Map()
              })
              : Promise.resolve()
            void reload.finally(() => {
              downUntil = 0
            })
          }, restartMs)
        }, 30)
        return
      }
      case "GET app:getInfo":
        return send(response, 200, { data: { version: "2.0.16" } })
      default:
        return send(response, 404, { errors: [{ message: `${action} not found` }] })
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, { errors: [{ message: String(error) }] })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    authorizations,
    downAnswers: () => downAnswers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
