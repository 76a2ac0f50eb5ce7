// `meta refresh`: tells a running NocoBase to reload the metadata (sign-in, dataSources:refresh)
// and checks that it serves every value the latest repair run wrote — collection options through
// collections:listMeta, field interfaces/components/props through listMeta (what the server holds)
// and fields:list (what the database holds), page nodes through uiSchemas:getJsonSchema — plus a
// record of each repaired collection fetched by its filterTargetKey. On request it clears the
// cache (stale page nodes) and/or restarts the application (anything else), waits and checks again.
import { Clock, Console, Duration, Effect, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { callJson, clip, type UpstreamFailure } from "../clients/Upstream.ts"
import type { RepairRun } from "./Doctor.ts"
import { getPath, getString, isJsonObject, type Json, keepNumberText, parseJson, type Path, sameJson, showJson } from "./Json.ts"
import { isSynchronised } from "./MetadataRules.ts"

export class NocoBaseError extends Schema.TaggedError<NocoBaseError>()("NocoBaseError", {
  step: Schema.String,
  status: Schema.NullOr(Schema.Number),
  detail: Schema.String
}) {
  override get message() {
    return `${this.step}: ${this.status === null ? "" : `HTTP ${this.status}: `}${this.detail}`
  }
}

export interface RefreshOptions {
  /** The NocoBase base URL (`http://host:13000`); `/api/...` is appended. */
  readonly baseUrl: string
  readonly account: string
  readonly password: Redacted.Redacted<string>
  /** When the running server is stale: app:clearCache (page nodes) and/or app:restart (the rest), wait, check again. */
  readonly restart: boolean
  /**
   * The latest repair run (from the repair log): every value it wrote is checked. Without it only
   * the fields of the synchronised collections are compared with the database, and a restart
   * clears the cache as well (page nodes cannot be checked).
   */
  readonly run?: RepairRun | undefined
  /** How long to wait for the server to answer with fresh metadata after a restart (default 60 s). */
  readonly waitTimeout?: Duration.Input | undefined
  /** Between polls while waiting (default 1 s). */
  readonly pollInterval?: Duration.Input | undefined
  /** How long one API call may take (default 30 s). */
  readonly requestTimeout?: Duration.Input | undefined
  /** Progress lines (default: printed). */
  readonly say?: ((line: string) => Effect.Effect<void>) | undefined
}

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

export interface RefreshReport {
  readonly fresh: boolean
  readonly cacheCleared: boolean
  readonly restarted: boolean
  readonly checked: RefreshChecked
  readonly problems: ReadonlyArray<RefreshProblem>
}

/** One value the running server must serve: at `path` of the listMeta collection, the listMeta field, or the page node. */
interface Expectation {
  readonly target: "collection" | "field" | "page"
  readonly collection: string | null
  /** Collection name, field key, or x-uid. */
  readonly key: string
  readonly path: Path
  /** `undefined`: absent. */
  readonly value: Json | undefined
  /** How the value is named in a report line (`options.filterTargetKey`). */
  readonly label: string
}

interface Verified {
  readonly problems: ReadonlyArray<RefreshProblem>
  readonly checked: RefreshChecked
}

/** The leaf values that differ between two JSON values (objects are compared key by key). */
const leafChanges = (before: Json | undefined, after: Json | undefined, path: Path = []): Array<{ readonly path: Path; readonly value: Json | undefined }> => {
  if (before !== undefined && after !== undefined && isJsonObject(before) && isJsonObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)])
    return [...keys].flatMap((key) =>
      leafChanges(
        Object.prototype.hasOwnProperty.call(before, key) ? before[key] : undefined,
        Object.prototype.hasOwnProperty.call(after, key) ? after[key] : undefined,
        [...path, key]
      )
    )
  }
  return sameJson(before, after) ? [] : [{ path, value: after }]
}

const parsedColumn = (text: string | null): Json | undefined => {
  if (text === null) return undefined
  try {
    return parseJson(text)
  } catch {
    return undefined
  }
}

/** What the run wrote, as values the running server must serve (the HTTP API flattens field options). */
export const expectationsOf = (run: RepairRun): Array<Expectation> =>
  run.rows.flatMap((row): Array<Expectation> => {
    if (row.table === "fields" && row.column === "interface") {
      return [{ target: "field", collection: row.collection, key: row.key, path: ["interface"], value: row.after, label: "interface" }]
    }
    const target = row.table === "collections" ? "collection" : row.table === "fields" ? "field" : "page"
    const key = row.table === "collections" ? row.collection ?? row.key : row.key
    return leafChanges(parsedColumn(row.before), parsedColumn(row.after)).map((change) => ({
      target,
      collection: row.collection,
      key,
      path: change.path,
      value: change.value,
      label: `${row.column}.${change.path.join(".")}`
    }))
  })

/** Any NocoBase answer: JSON, number text kept. */
const AnswerBody = Schema.fromJsonString(Schema.Unknown, { reviver: keepNumberText })

/** NocoBase's error body: `{"errors": [{"message": …}, …]}`. */
const decodeErrors = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({
  errors: Schema.TupleWithRest(Schema.Tuple([Schema.Struct({ message: Schema.String })]), [Schema.Unknown])
})))

const errorMessage = (text: string): string => {
  const errors = decodeErrors(text)
  if (errors._tag === "Some") return errors.value.errors[0].message
  return text === "" ? "(empty body)" : clip(text, 200)
}

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

const arrayOf = (value: Json | undefined): ReadonlyArray<Json> => Array.isArray(value) ? value : []
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`

/** Sign in, dataSources:refresh, verify; with `restart`, app:clearCache and/or app:restart when stale, then verify again. */
export const refresh = Effect.fn("meta.refresh")(function*(options: RefreshOptions) {
  const say = options.say ?? ((line: string) => Console.log(line))
  const base = options.baseUrl.replace(/\/+$/, "")
  const pollInterval = Duration.fromInputUnsafe(options.pollInterval ?? Duration.seconds(1))
  const waitTimeout = Duration.fromInputUnsafe(options.waitTimeout ?? Duration.seconds(60))
  const requestTimeout = Duration.fromInputUnsafe(options.requestTimeout ?? Duration.seconds(30))
  const run = options.run
  let token = ""

  const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
  const failed = (step: string) => (failure: UpstreamFailure) => {
    switch (failure._tag) {
      case "UpstreamTimeout":
        return new NocoBaseError({ step, status: null, detail: `no answer within ${Duration.format(requestTimeout)}` })
      case "UpstreamUnreachable":
        return new NocoBaseError({ step, status: null, detail: `cannot reach ${base} (${failure.kind})` })
      case "UpstreamStatus":
        return new NocoBaseError({ step, status: failure.status, detail: errorMessage(failure.body) })
      case "UpstreamMalformed":
        return new NocoBaseError({ step, status: failure.status, detail: "answer is not JSON" })
    }
  }

  /** One API call; the body parsed as JSON (number text kept); non-2xx is a NocoBaseError with the server's message. */
  const call = (step: string, request: HttpClientRequest.HttpClientRequest): Effect.Effect<Json, NocoBaseError> =>
    callJson(
      client,
      request.pipe(HttpClientRequest.acceptJson, token === "" ? (r) => r : HttpClientRequest.bearerToken(token)),
      { body: AnswerBody, timeout: requestTimeout }
    ).pipe(
      Effect.map(({ body }) => body as Json), // JSON.parse answers Json
      Effect.mapError(failed(step))
    )
  const get = (action: string, params: Record<string, string> = {}) =>
    call(action, HttpClientRequest.get(`${base}/api/${action}`).pipe(HttpClientRequest.setUrlParams(params)))
  const post = (action: string, params: Record<string, string> = {}) =>
    call(action, HttpClientRequest.post(`${base}/api/${action}`).pipe(HttpClientRequest.setUrlParams(params)))

  const signIn = Effect.gen(function*() {
    token = ""
    const answer = yield* call(
      "auth:signIn",
      HttpClientRequest.post(`${base}/api/auth:signIn`).pipe(
        HttpClientRequest.setHeader("X-Authenticator", "basic"),
        HttpClientRequest.bodyJsonUnsafe({ account: options.account, password: Redacted.value(options.password) })
      )
    )
    const received = getString(answer, ["data", "token"])
    if (received === undefined) return yield* new NocoBaseError({ step: "auth:signIn", status: 200, detail: "unexpected answer: no data.token" })
    token = received
  })

  /** fields:list of one collection: what the database holds (the server reads the table on every call). */
  const databaseFields = (collection: string) =>
    get("fields:list", { "filter[collectionName]": collection, paginate: "false" }).pipe(
      Effect.map((body) => arrayOf(getPath(body, ["data"])).filter(isJsonObject))
    )

  /** A record of the collection fetched by its filterTargetKey, as a user's page does: a problem, or a note when it cannot be tried. */
  const probeRecord = (collection: string, key: string) =>
    Effect.gen(function*() {
      const resource = encodeURIComponent(collection)
      const listed = yield* get(`${resource}:list`, { pageSize: "1" }).pipe(Effect.result)
      if (listed._tag === "Failure") {
        return { problem: `${collection}:list answered ${listed.failure.status === null ? "" : `HTTP ${listed.failure.status}: `}${listed.failure.detail}` }
      }
      const record = arrayOf(getPath(listed.success, ["data"]))[0]
      if (record === undefined) return { note: `${collection}: no record to fetch by ${key}` }
      const value = getPath(record, [key])
      if (value === undefined || value === null || isJsonObject(value) || Array.isArray(value)) {
        return { problem: `${collection}:list serves records without a ${key} value (filterTargetKey ${key})` }
      }
      const tk = String(value)
      const fetched = yield* get(`${resource}:get`, { filterByTk: tk }).pipe(Effect.result)
      if (fetched._tag === "Failure") {
        return { problem: `${collection}:get?filterByTk=${tk} answered ${fetched.failure.status === null ? "" : `HTTP ${fetched.failure.status}: `}${fetched.failure.detail}` }
      }
      const got = getPath(fetched.success, ["data", key])
      return got !== undefined && got !== null && String(got) === tk
        ? {}
        : { problem: `${collection}:get?filterByTk=${tk} did not answer that record (data.${key} is ${showJson(got)})` }
    })

  const verify = Effect.gen(function*() {
    const meta = yield* get("collections:listMeta")
    const running = new Map<string, Json>()
    for (const entry of arrayOf(getPath(meta, ["data"]))) {
      const name = getString(entry, ["name"])
      if (name !== undefined) running.set(name, entry)
    }
    const runningField = (collection: string | null, key: string): Json | undefined =>
      collection === null ? undefined : arrayOf(getPath(running.get(collection), ["fields"])).find((field) => getString(field, ["key"]) === key)

    let expectations: Array<Expectation>
    const database = new Map<string, ReadonlyArray<Json>>()
    const fieldsOf = (collection: string) =>
      Effect.gen(function*() {
        const known = database.get(collection)
        if (known !== undefined) return known
        const listed = yield* databaseFields(collection)
        database.set(collection, listed)
        return listed
      })
    if (run !== undefined) {
      expectations = expectationsOf(run)
    } else {
      // no repair log: the fields of every synchronised collection, as the database holds them
      expectations = []
      for (const [name, entry] of running) {
        const from = getString(entry, ["from"])
        if (!isSynchronised({ from: from ?? null })) continue
        for (const field of yield* fieldsOf(name)) {
          const key = getString(field, ["key"])
          if (key === undefined) continue
          for (const path of [["interface"], ["uiSchema"]]) {
            expectations.push({ target: "field", collection: name, key, path, value: getPath(field, path), label: path[0]! })
          }
        }
      }
    }

    const problems: Array<RefreshProblem> = []
    const pages = new Map<string, Json | undefined>()
    const servedSchema = (uid: string) =>
      Effect.gen(function*() {
        if (!pages.has(uid)) {
          const node = getPath(yield* get(`uiSchemas:getJsonSchema/${encodeURIComponent(uid)}`), ["data"])
          pages.set(uid, isJsonObject(node) && Object.keys(node).length > 0 ? node : undefined)
        }
        return pages.get(uid)
      })
    const fieldName = (collection: string | null, key: string, fromDatabase: Json | undefined) =>
      `${collection ?? "?"}.${getString(runningField(collection, key), ["name"]) ?? getString(fromDatabase, ["name"]) ?? key}`
    const served = (where: string, value: Json | undefined, expected: Expectation) =>
      `${expected.label}: ${where} ${showJson(value)}, ${run === undefined ? "database" : "repaired"} ${showJson(expected.value)}`

    for (const expected of expectations) {
      switch (expected.target) {
        case "collection": {
          const entry = running.get(expected.key)
          if (entry === undefined) {
            problems.push({ kind: "stale", target: "collection", subject: expected.key, detail: "collection not loaded by the running server" })
            continue
          }
          const value = getPath(entry, expected.path)
          if (!sameJson(value, expected.value)) {
            problems.push({ kind: "stale", target: "collection", subject: expected.key, detail: served("running server has", value, expected) })
          }
          break
        }
        case "field": {
          const stored = expected.collection === null ? undefined : (yield* fieldsOf(expected.collection)).find((field) => getString(field, ["key"]) === expected.key)
          const subject = fieldName(expected.collection, expected.key, stored)
          const inDatabase = getPath(stored, expected.path)
          if (run !== undefined && !sameJson(inDatabase, expected.value)) {
            problems.push({ kind: "changed", target: "field", subject, detail: served(`fields:list (the database) has`, inDatabase, expected) + `, since run ${run.runId}` })
            continue
          }
          const held = runningField(expected.collection, expected.key)
          if (held === undefined) {
            problems.push({ kind: "stale", target: "field", subject, detail: "field not loaded by the running server" })
            continue
          }
          const value = getPath(held, expected.path)
          if (!sameJson(value, expected.value)) {
            problems.push({ kind: "stale", target: "field", subject, detail: served("running server has", value, expected) })
          }
          break
        }
        case "page": {
          const subject = `uiSchema ${expected.key}`
          const node = yield* servedSchema(expected.key)
          if (node === undefined) {
            problems.push({ kind: "stale", target: "page", subject, detail: "page node not served (uiSchemas:getJsonSchema answered no schema)" })
            continue
          }
          const value = getPath(node, expected.path)
          if (!sameJson(value, expected.value)) {
            problems.push({ kind: "stale", target: "page", subject, detail: served(`getJsonSchema/${expected.key} serves`, value, expected) })
            continue
          }
          // and as part of the page a user opens (cached on its own)
          const root = run?.pageRoots[expected.key]
          if (root === undefined || root === expected.key) continue
          const inPage = findNode(yield* servedSchema(root), expected.key)
          if (inPage === undefined) continue // an async node: the client fetches it on its own
          const shown = getPath(inPage, expected.path)
          if (!sameJson(shown, expected.value)) {
            problems.push({ kind: "stale", target: "page", subject, detail: served(`getJsonSchema/${root} (its page) serves`, shown, expected) })
          }
          break
        }
      }
    }

    // where users feel it: a record of each repaired collection, fetched by its filterTargetKey
    let records = 0
    const notes: Array<string> = []
    const repairedCollections = run === undefined ? [] : [...new Set(run.rows.flatMap((row) => row.collection === null ? [] : [row.collection]))]
    for (const collection of repairedCollections) {
      const entry = running.get(collection)
      if (entry === undefined) continue
      const written = expectations.find((e) => e.target === "collection" && e.key === collection && e.path.length === 1 && e.path[0] === "filterTargetKey")
      const key = typeof written?.value === "string" ? written.value : getString(entry, ["filterTargetKey"])
      if (key === undefined || key === "") {
        notes.push(`${collection}: no filterTargetKey to fetch a record by`)
        continue
      }
      const probed = yield* probeRecord(collection, key)
      if ("note" in probed && probed.note !== undefined) notes.push(probed.note)
      else records++
      if ("problem" in probed && probed.problem !== undefined) {
        problems.push({ kind: "stale", target: "record", subject: collection, detail: probed.problem })
      }
    }

    const checked: RefreshChecked = {
      collections: new Set(expectations.filter((e) => e.target === "collection").map((e) => e.key)).size,
      fields: new Set(expectations.filter((e) => e.target === "field").map((e) => e.key)).size,
      pages: new Set(expectations.filter((e) => e.target === "page").map((e) => e.key)).size,
      records,
      values: expectations.length
    }
    const verified: Verified & { readonly notes: ReadonlyArray<string> } = { problems, checked, notes }
    return verified
  })

  const isStale = (result: Verified, target?: RefreshTarget) =>
    result.problems.some((problem) => problem.kind === "stale" && (target === undefined || problem.target === target))
  const staleBeyondPages = (result: Verified) =>
    result.problems.some((problem) => problem.kind === "stale" && problem.target !== "page")

  const report = (result: Verified & { readonly notes: ReadonlyArray<string> }) =>
    Effect.gen(function*() {
      const stale = result.problems.filter((problem) => problem.kind === "stale")
      const changed = result.problems.filter((problem) => problem.kind === "changed")
      const c = result.checked
      const checked = `checked ${plural(c.collections, "collection")}, ${plural(c.fields, "field")}, ${plural(c.pages, "page node")}, ${plural(c.records, "record")}`
      yield* say(
        stale.length > 0
          ? `running metadata: STALE, ${stale.length} of ${c.values + c.records} repaired values not served (${checked})`
          : changed.length > 0
          ? `running metadata: serves what the database holds, but the database changed since the repair in ${plural(changed.length, "value")} (${checked})`
          : `running metadata: fresh, serves every repaired value (${checked})`
      )
      for (const problem of result.problems.slice(0, 50)) {
        yield* say(`  ${problem.kind}  ${problem.target}  ${problem.subject}  ${problem.detail}`)
      }
      if (result.problems.length > 50) yield* say(`  … ${result.problems.length - 50} more`)
      for (const note of result.notes) yield* say(`  note  ${note}`)
      if (changed.length > 0) yield* say("the database no longer holds what the repair wrote: run `meta audit` (and `meta repair --apply`) first")
    })

  yield* signIn
  yield* say(`signed in to ${base}`)
  yield* post("dataSources:refresh", { filterByTk: "main" })
  yield* say("dataSources:refresh main: done")
  if (run === undefined) {
    yield* say("no repair log: comparing the fields of the synchronised collections with the database (collection options and page nodes need the log: set DATABASE_URL)")
  }
  let result = yield* verify
  yield* report(result)
  let restarted = false
  let cacheCleared = false

  if (isStale(result) && !options.restart) {
    const actions = [
      ...(isStale(result, "page") ? ["app:clearCache"] : []),
      ...(staleBeyondPages(result) ? ["app:restart"] : [])
    ]
    yield* say(`the running server does not serve the repaired metadata: run \`meta refresh --restart\` (${actions.join(" and ")}) or restart NocoBase`)
  }
  if (isStale(result) && options.restart) {
    // page nodes are cached until app:clearCache; without the log they cannot be checked, so clear it to be safe
    if (isStale(result, "page") || run === undefined) {
      yield* post("app:clearCache")
      cacheCleared = true
      yield* say("app:clearCache: done")
      if (!staleBeyondPages(result)) {
        result = yield* verify
        yield* report(result)
      }
    }
    if (isStale(result)) {
      yield* post("app:restart")
      restarted = true
      yield* say("app:restart: requested; waiting for the server to answer again")
      const started = yield* Clock.currentTimeMillis
      const deadline = started + Duration.toMillis(waitTimeout)
      // poll until it answers with fresh metadata, or the deadline: the restart may not have begun yet
      while (true) {
        yield* Effect.sleep(pollInterval)
        const attempt = yield* verify.pipe(
          Effect.catchTag("NocoBaseError", (error) =>
            error.status === 401
              ? signIn.pipe(Effect.andThen(verify), Effect.catchTag("NocoBaseError", () => Effect.succeed(undefined)))
              : Effect.succeed(undefined))
        )
        const now = yield* Clock.currentTimeMillis
        if (attempt !== undefined && (!isStale(attempt) || now >= deadline)) {
          result = attempt
          yield* say(`server answers again after ${((now - started) / 1000).toFixed(1)} s`)
          break
        }
        if (now >= deadline) {
          return yield* new NocoBaseError({ step: "app:restart", status: null, detail: `the server did not answer within ${Duration.format(waitTimeout)}` })
        }
      }
      yield* report(result)
    }
  }
  const final: RefreshReport = {
    fresh: result.problems.length === 0,
    cacheCleared,
    restarted,
    checked: result.checked,
    problems: result.problems
  }
  return final
})
