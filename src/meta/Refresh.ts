// `meta refresh`: tells a running NocoBase to reload the metadata (sign-in, dataSources:refresh)
// and checks that it really did — collections:listMeta (what the server holds) against
// fields:list (what the database holds) — restarting it (app:restart, app:clearCache) on request.
import { Clock, Console, Duration, Effect, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { getString, isJsonObject, type Json } from "./Json.ts"
import { fieldMismatches, isSynchronised, NUMBER_COMPONENTS, WRONG_INTERFACES } from "./Rules.ts"

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
  /** When the running metadata is stale: app:restart, wait, check again. */
  readonly restart: boolean
  /** Call app:clearCache before the restart (page schemas were repaired). */
  readonly clearCache: boolean
  /** Collections to check besides the synchronised ones (e.g. those the latest repair run touched). */
  readonly include?: ReadonlyArray<string> | undefined
  /** How long to wait for the restarted server to answer with fresh metadata (default 60 s). */
  readonly waitTimeout?: Duration.Input | undefined
  /** Between polls while waiting (default 1 s). */
  readonly pollInterval?: Duration.Input | undefined
  /** Progress lines (default: printed). */
  readonly say?: ((line: string) => Effect.Effect<void>) | undefined
}

export interface RefreshProblem {
  /** `stale`: the running server holds other metadata than the database; `not-repaired`: the database itself breaks a rule. */
  readonly kind: "stale" | "not-repaired"
  readonly collection: string
  readonly field: string | null
  readonly detail: string
}

export interface RefreshReport {
  readonly fresh: boolean
  readonly restarted: boolean
  readonly collections: number
  readonly fields: number
  readonly problems: ReadonlyArray<RefreshProblem>
}

const MetaField = Schema.Struct({
  name: Schema.String,
  type: Schema.optionalKey(Schema.NullOr(Schema.String)),
  interface: Schema.optionalKey(Schema.NullOr(Schema.String)),
  uiSchema: Schema.optionalKey(Schema.NullOr(Schema.Json))
})
type MetaField = typeof MetaField.Type
const MetaCollection = Schema.Struct({
  name: Schema.String,
  from: Schema.optionalKey(Schema.NullOr(Schema.String)),
  fields: Schema.optionalKey(Schema.Array(MetaField))
})
const SignInBody = Schema.Struct({ data: Schema.Struct({ token: Schema.String }) })
const ListMetaBody = Schema.Struct({ data: Schema.Array(MetaCollection) })
const FieldsBody = Schema.Struct({ data: Schema.Array(MetaField) })

const componentOf = (field: MetaField): string | undefined =>
  field.uiSchema === undefined || field.uiSchema === null ? undefined : getString(field.uiSchema as Json, ["x-component"])

const errorMessage = (text: string): string => {
  try {
    const body = JSON.parse(text) as unknown
    if (isJsonObject(body as Json)) {
      const errors = (body as { errors?: unknown }).errors
      if (Array.isArray(errors) && errors.length > 0 && typeof errors[0]?.message === "string") return errors[0].message
    }
  } catch {
    // not JSON: fall through
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text === "" ? "(empty body)" : text
}

/** Sign in, dataSources:refresh, verify; with `restart`, app:restart (and app:clearCache) when stale, then verify again. */
export const refresh = Effect.fn("meta.refresh")(function*(options: RefreshOptions) {
  const client = yield* HttpClient.HttpClient
  const say = options.say ?? ((line: string) => Console.log(line))
  const base = options.baseUrl.replace(/\/+$/, "")
  const pollInterval = Duration.fromInputUnsafe(options.pollInterval ?? Duration.seconds(1))
  const waitTimeout = Duration.fromInputUnsafe(options.waitTimeout ?? Duration.seconds(60))
  let token = ""

  const call = <S extends Schema.Constraint>(step: string, request: HttpClientRequest.HttpClientRequest, body: S) =>
    client.execute(request.pipe(HttpClientRequest.acceptJson, token === "" ? (r) => r : HttpClientRequest.bearerToken(token))).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, text }))),
      Effect.timeout(Duration.seconds(30)),
      Effect.mapError((cause) =>
        new NocoBaseError({ step, status: null, detail: cause._tag === "TimeoutError" ? "no answer within 30 s" : `cannot reach ${base} (${cause.message})` })
      ),
      Effect.flatMap(({ status, text }) =>
        status >= 200 && status < 300
          ? Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => new NocoBaseError({ step, status, detail: "answer is not JSON" }) }).pipe(
            Effect.flatMap((json) => Schema.decodeUnknownEffect(body as Schema.Constraint)(json)),
            Effect.mapError((error) =>
              error._tag === "NocoBaseError" ? error : new NocoBaseError({ step, status, detail: `unexpected answer: ${error.message}` })
            )
          )
          : Effect.fail(new NocoBaseError({ step, status, detail: errorMessage(text) }))
      )
    ) as Effect.Effect<S["Type"], NocoBaseError>

  const Anything = Schema.Unknown

  const signIn = Effect.gen(function*() {
    token = ""
    const answer = yield* call(
      "auth:signIn",
      HttpClientRequest.post(`${base}/api/auth:signIn`).pipe(
        HttpClientRequest.setHeader("X-Authenticator", "basic"),
        HttpClientRequest.bodyJsonUnsafe({ account: options.account, password: Redacted.value(options.password) })
      ),
      SignInBody
    )
    token = answer.data.token
  })

  const verify = Effect.gen(function*() {
    const meta = yield* call("collections:listMeta", HttpClientRequest.get(`${base}/api/collections:listMeta`), ListMetaBody)
    const running = new Map(meta.data.map((collection) => [collection.name, collection]))
    const include = new Set(options.include ?? [])
    // synchronised collections, and the others asked for that the server lists (plugin tables are not listed)
    const targets = meta.data
      .filter((collection) => isSynchronised({ from: collection.from ?? null }) || include.has(collection.name))
      .map((collection) => collection.name)
    const problems: Array<RefreshProblem> = []
    let fieldCount = 0
    for (const name of targets) {
      const listed = yield* call(
        "fields:list",
        HttpClientRequest.get(`${base}/api/fields:list`).pipe(
          HttpClientRequest.setUrlParams({ "filter[collectionName]": name, paginate: "false" })
        ),
        FieldsBody
      )
      const loaded = running.get(name)
      if (loaded === undefined) {
        problems.push({ kind: "stale", collection: name, field: null, detail: "collection not loaded by the running server" })
      }
      const loadedFields = new Map((loaded?.fields ?? []).map((field) => [field.name, field]))
      for (const field of listed.data) {
        fieldCount++
        const iface = field.interface ?? null
        const component = componentOf(field)
        const mismatches = fieldMismatches(field.type ?? null, iface, component)
        const wrong = mismatches.length > 0 ? mismatches : [
          ...(iface !== null && WRONG_INTERFACES[iface] !== undefined ? [`interface ${JSON.stringify(iface)} is a type, not an interface`] : []),
          ...(component !== undefined && NUMBER_COMPONENTS.has(component) ? [`x-component ${JSON.stringify(component)} is not registered`] : [])
        ]
        if (wrong.length > 0) {
          problems.push({ kind: "not-repaired", collection: name, field: field.name, detail: `fields:list: ${wrong.join("; ")}` })
        }
        if (loaded === undefined) continue
        const held = loadedFields.get(field.name)
        if (held === undefined) {
          problems.push({ kind: "stale", collection: name, field: field.name, detail: "field not loaded by the running server" })
          continue
        }
        const heldInterface = held.interface ?? null
        const heldComponent = componentOf(held)
        if (heldInterface !== iface || heldComponent !== component) {
          problems.push({
            kind: "stale",
            collection: name,
            field: field.name,
            detail: `running server has interface ${JSON.stringify(heldInterface)} / x-component ${JSON.stringify(heldComponent ?? null)}, database ${JSON.stringify(iface)} / ${JSON.stringify(component ?? null)}`
          })
        }
      }
    }
    return { problems, collections: targets.length, fields: fieldCount }
  })

  const report = (result: { readonly problems: ReadonlyArray<RefreshProblem>; readonly collections: number; readonly fields: number }) =>
    Effect.gen(function*() {
      const stale = result.problems.filter((problem) => problem.kind === "stale")
      const broken = result.problems.filter((problem) => problem.kind === "not-repaired")
      const checked = `${result.collections} collections, ${result.fields} fields checked`
      yield* say(
        stale.length > 0
          ? `running metadata: STALE, ${stale.length} difference${stale.length === 1 ? "" : "s"} from the database (${checked})`
          : broken.length > 0
          ? `running metadata: same as the database, but the database breaks the rules in ${broken.length} field${broken.length === 1 ? "" : "s"} (${checked})`
          : `running metadata: fresh (${checked})`
      )
      for (const problem of result.problems.slice(0, 50)) {
        yield* say(`  ${problem.kind}  ${problem.collection}${problem.field === null ? "" : `.${problem.field}`}  ${problem.detail}`)
      }
      if (result.problems.length > 50) yield* say(`  … ${result.problems.length - 50} more`)
      if (broken.length > 0) yield* say(`the database itself is not repaired: run \`meta repair --apply\` first`)
    })

  yield* signIn
  yield* say(`signed in to ${base}`)
  yield* call("dataSources:refresh", HttpClientRequest.post(`${base}/api/dataSources:refresh`).pipe(
    HttpClientRequest.setUrlParams({ filterByTk: "main" })
  ), Anything)
  yield* say("dataSources:refresh main: done")
  let result = yield* verify
  yield* report(result)
  const isStale = (r: typeof result) => r.problems.some((problem) => problem.kind === "stale")
  let restarted = false

  if (isStale(result) && !options.restart) {
    yield* say("the running server did not reload the metadata: run `meta refresh --restart` (app:restart) or restart NocoBase")
  }
  if (isStale(result) && options.restart) {
    if (options.clearCache) {
      yield* call("app:clearCache", HttpClientRequest.post(`${base}/api/app:clearCache`), Anything)
      yield* say("app:clearCache: done")
    }
    yield* call("app:restart", HttpClientRequest.post(`${base}/api/app:restart`), Anything)
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
  const final: RefreshReport = {
    fresh: result.problems.length === 0,
    restarted,
    collections: result.collections,
    fields: result.fields,
    problems: result.problems
  }
  return final
})
