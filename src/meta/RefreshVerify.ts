// One check of a running NocoBase against what it must serve: collection options and fields as
// loaded (collections:listMeta), fields as the database holds them (fields:list), page nodes
// (uiSchemas:getJsonSchema, alone and inside their page), and a record of each repaired
// collection fetched by its filterTargetKey, as a user's page does.
import { Effect } from "effect"
import type { RepairRun } from "./Doctor.ts"
import { getPath, getString, isJsonObject, type Json, sameJson, showJson } from "./Json.ts"
import { isSynchronised } from "./MetadataRules.ts"
import type { NocoBaseApi, NocoBaseError } from "./NocoBaseApi.ts"
import { type Expectation, expectationsOf } from "./RefreshExpectations.ts"

/** Where a repaired value shows: a collection's options, a field, a page node, or fetching a record. */
export type RefreshTarget = "collection" | "field" | "page" | "record"

export interface RefreshProblem {
  /** `stale`: the running server serves something else than the repair wrote; `changed`: the database no longer holds it. */
  readonly kind: "stale" | "changed"
  readonly target: RefreshTarget
  /** `orders`, `orders.amount`, `uiSchema <x-uid>`. */
  readonly subject: string
  readonly detail: string
}

export interface RefreshChecked {
  readonly collections: number
  readonly fields: number
  readonly pages: number
  readonly records: number
  /** How many values were compared. */
  readonly values: number
}

export interface Verified {
  readonly problems: ReadonlyArray<RefreshProblem>
  readonly checked: RefreshChecked
  /** What could not be tried (a collection without records, without a filterTargetKey). */
  readonly notes: ReadonlyArray<string>
}

/** What one check reads from the server; fields:list and page nodes fetched once per check. */
interface Served {
  /** collections:listMeta by collection name. */
  readonly collections: ReadonlyMap<string, Json>
  /** A field as the running server holds it. */
  readonly field: (collection: string | null, key: string) => Json | undefined
  /** fields:list of one collection: what the database holds (the server reads the table on every call). */
  readonly databaseFields: (collection: string) => Effect.Effect<ReadonlyArray<Json>, NocoBaseError>
  /** The node uiSchemas:getJsonSchema serves for an x-uid; `undefined` when it serves no schema. */
  readonly page: (uid: string) => Effect.Effect<Json | undefined, NocoBaseError>
}

const arrayOf = (value: Json | undefined): ReadonlyArray<Json> => Array.isArray(value) ? value : []

/** The node with `x-uid` `uid` in a served schema tree (`properties` nest the children). */
const findNode = (tree: Json | undefined, uid: string): Json | undefined => {
  if (tree === undefined || !isJsonObject(tree)) return undefined
  if (tree["x-uid"] === uid) return tree
  const children = tree["properties"]
  if (children === undefined || !isJsonObject(children)) return undefined
  for (const child of Object.values(children)) {
    const found = findNode(child, uid)
    if (found !== undefined) return found
  }
  return undefined
}

const readServed = (api: NocoBaseApi): Effect.Effect<Served, NocoBaseError> =>
  Effect.gen(function*() {
    const meta = yield* api.get("collections:listMeta")
    const collections = new Map<string, Json>()
    for (const entry of arrayOf(getPath(meta, ["data"]))) {
      const name = getString(entry, ["name"])
      if (name !== undefined) collections.set(name, entry)
    }
    const database = new Map<string, ReadonlyArray<Json>>()
    const pages = new Map<string, Json | undefined>()
    return {
      collections,
      field: (collection, key) =>
        collection === null ? undefined : arrayOf(getPath(collections.get(collection), ["fields"])).find((field) => getString(field, ["key"]) === key),
      databaseFields: (collection) =>
        Effect.gen(function*() {
          const known = database.get(collection)
          if (known !== undefined) return known
          const listed = arrayOf(getPath(yield* api.get("fields:list", { "filter[collectionName]": collection, paginate: "false" }), ["data"]))
            .filter(isJsonObject)
          database.set(collection, listed)
          return listed
        }),
      page: (uid) =>
        Effect.gen(function*() {
          if (!pages.has(uid)) {
            const node = getPath(yield* api.get(`uiSchemas:getJsonSchema/${encodeURIComponent(uid)}`), ["data"])
            pages.set(uid, isJsonObject(node) && Object.keys(node).length > 0 ? node : undefined)
          }
          return pages.get(uid)
        })
    }
  })

/** Without a repair log: the fields of every synchronised collection, as the database holds them. */
const databaseExpectations = (served: Served): Effect.Effect<Array<Expectation>, NocoBaseError> =>
  Effect.gen(function*() {
    const expectations: Array<Expectation> = []
    for (const [name, entry] of served.collections) {
      const from = getString(entry, ["from"])
      if (!isSynchronised({ from: from ?? null })) continue
      for (const field of yield* served.databaseFields(name)) {
        const key = getString(field, ["key"])
        if (key === undefined) continue
        for (const path of [["interface"], ["uiSchema"]]) {
          expectations.push({ target: "field", collection: name, key, path, value: getPath(field, path), label: path[0]! })
        }
      }
    }
    return expectations
  })

/** A report line's detail: what `where` serves against what the run (or the database) holds. */
const served = (run: RepairRun | undefined, where: string, value: Json | undefined, expected: Expectation) =>
  `${expected.label}: ${where} ${showJson(value)}, ${run === undefined ? "database" : "repaired"} ${showJson(expected.value)}`

const checkCollection = (run: RepairRun | undefined, server: Served, expected: Expectation): RefreshProblem | undefined => {
  const entry = server.collections.get(expected.key)
  if (entry === undefined) return { kind: "stale", target: "collection", subject: expected.key, detail: "collection not loaded by the running server" }
  const value = getPath(entry, expected.path)
  return sameJson(value, expected.value)
    ? undefined
    : { kind: "stale", target: "collection", subject: expected.key, detail: served(run, "running server has", value, expected) }
}

/** The database first (with a run: did it change since?), then the running server. */
const checkField = (run: RepairRun | undefined, server: Served, expected: Expectation): Effect.Effect<RefreshProblem | undefined, NocoBaseError> =>
  Effect.gen(function*() {
    const stored = expected.collection === null
      ? undefined
      : (yield* server.databaseFields(expected.collection)).find((field) => getString(field, ["key"]) === expected.key)
    const held = server.field(expected.collection, expected.key)
    const subject = `${expected.collection ?? "?"}.${getString(held, ["name"]) ?? getString(stored, ["name"]) ?? expected.key}`
    const inDatabase = getPath(stored, expected.path)
    if (run !== undefined && !sameJson(inDatabase, expected.value)) {
      return { kind: "changed", target: "field", subject, detail: served(run, `fields:list (the database) has`, inDatabase, expected) + `, since run ${run.runId}` }
    }
    if (held === undefined) return { kind: "stale", target: "field", subject, detail: "field not loaded by the running server" }
    const value = getPath(held, expected.path)
    return sameJson(value, expected.value) ? undefined : { kind: "stale", target: "field", subject, detail: served(run, "running server has", value, expected) }
  })

/** The node alone, then as part of the page a user opens (cached on its own). */
const checkPage = (run: RepairRun | undefined, server: Served, expected: Expectation): Effect.Effect<RefreshProblem | undefined, NocoBaseError> =>
  Effect.gen(function*() {
    const subject = `uiSchema ${expected.key}`
    const node = yield* server.page(expected.key)
    if (node === undefined) {
      return { kind: "stale", target: "page", subject, detail: "page node not served (uiSchemas:getJsonSchema answered no schema)" }
    }
    const value = getPath(node, expected.path)
    if (!sameJson(value, expected.value)) {
      return { kind: "stale", target: "page", subject, detail: served(run, `getJsonSchema/${expected.key} serves`, value, expected) }
    }
    const root = run?.pageRoots[expected.key]
    if (root === undefined || root === expected.key) return undefined
    const inPage = findNode(yield* server.page(root), expected.key)
    if (inPage === undefined) return undefined // an async node: the client fetches it on its own
    const shown = getPath(inPage, expected.path)
    return sameJson(shown, expected.value)
      ? undefined
      : { kind: "stale", target: "page", subject, detail: served(run, `getJsonSchema/${root} (its page) serves`, shown, expected) }
  })

const answered = (call: string, failure: NocoBaseError) =>
  `${call} answered ${failure.status === null ? "" : `HTTP ${failure.status}: `}${failure.detail}`

/** A record of the collection fetched by its filterTargetKey, as a user's page does: a problem, or a note when it cannot be tried. */
const probeRecord = (api: NocoBaseApi, collection: string, key: string) =>
  Effect.gen(function*() {
    const resource = encodeURIComponent(collection)
    const listed = yield* api.get(`${resource}:list`, { pageSize: "1" }).pipe(Effect.result)
    if (listed._tag === "Failure") return { problem: answered(`${collection}:list`, listed.failure) }
    const record = arrayOf(getPath(listed.success, ["data"]))[0]
    if (record === undefined) return { note: `${collection}: no record to fetch by ${key}` }
    const value = getPath(record, [key])
    if (value === undefined || value === null || isJsonObject(value) || Array.isArray(value)) {
      return { problem: `${collection}:list serves records without a ${key} value (filterTargetKey ${key})` }
    }
    const tk = String(value)
    const fetched = yield* api.get(`${resource}:get`, { filterByTk: tk }).pipe(Effect.result)
    if (fetched._tag === "Failure") return { problem: answered(`${collection}:get?filterByTk=${tk}`, fetched.failure) }
    const got = getPath(fetched.success, ["data", key])
    return got !== undefined && got !== null && String(got) === tk
      ? {}
      : { problem: `${collection}:get?filterByTk=${tk} did not answer that record (data.${key} is ${showJson(got)})` }
  })

/** Where users feel it: a record of each repaired collection, fetched by its filterTargetKey (the one the run wrote, else the served one). */
const probeRecords = (api: NocoBaseApi, run: RepairRun | undefined, server: Served, expectations: ReadonlyArray<Expectation>) =>
  Effect.gen(function*() {
    let records = 0
    const notes: Array<string> = []
    const problems: Array<RefreshProblem> = []
    const repairedCollections = run === undefined ? [] : [...new Set(run.rows.flatMap((row) => row.collection === null ? [] : [row.collection]))]
    for (const collection of repairedCollections) {
      const entry = server.collections.get(collection)
      if (entry === undefined) continue
      const written = expectations.find((e) => e.target === "collection" && e.key === collection && e.path.length === 1 && e.path[0] === "filterTargetKey")
      const key = typeof written?.value === "string" ? written.value : getString(entry, ["filterTargetKey"])
      if (key === undefined || key === "") {
        notes.push(`${collection}: no filterTargetKey to fetch a record by`)
        continue
      }
      const probed = yield* probeRecord(api, collection, key)
      if ("note" in probed && probed.note !== undefined) notes.push(probed.note)
      else records++
      if ("problem" in probed && probed.problem !== undefined) {
        problems.push({ kind: "stale", target: "record", subject: collection, detail: probed.problem })
      }
    }
    return { records, notes, problems }
  })

const distinctKeys = (expectations: ReadonlyArray<Expectation>, target: Expectation["target"]) =>
  new Set(expectations.filter((e) => e.target === target).map((e) => e.key)).size

/** One check: every value the run wrote (without a run, the synchronised collections' fields in the database) against what the server serves. */
export const verify = (api: NocoBaseApi, run: RepairRun | undefined): Effect.Effect<Verified, NocoBaseError> =>
  Effect.gen(function*() {
    const server = yield* readServed(api)
    const expectations = run !== undefined ? expectationsOf(run) : yield* databaseExpectations(server)
    const problems: Array<RefreshProblem> = []
    for (const expected of expectations) {
      const problem = expected.target === "collection"
        ? checkCollection(run, server, expected)
        : expected.target === "field"
        ? yield* checkField(run, server, expected)
        : yield* checkPage(run, server, expected)
      if (problem !== undefined) problems.push(problem)
    }
    const probed = yield* probeRecords(api, run, server, expectations)
    return {
      problems: [...problems, ...probed.problems],
      checked: {
        collections: distinctKeys(expectations, "collection"),
        fields: distinctKeys(expectations, "field"),
        pages: distinctKeys(expectations, "page"),
        records: probed.records,
        values: expectations.length
      },
      notes: probed.notes
    }
  })
