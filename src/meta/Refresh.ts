// `meta refresh`: tells a running NocoBase to reload the metadata (sign-in, dataSources:refresh)
// and checks that it serves every value the latest repair run wrote (RefreshVerify.ts). On request
// it clears the cache (stale page nodes) and/or restarts the application (anything else), waits
// and checks again. The steps: sign in and refresh, verify and report, reload, wait for the server.
import { Clock, Console, Duration, Effect, type Redacted } from "effect"
import type { RepairRun } from "./Doctor.ts"
import { makeNocoBaseApi, type NocoBaseApi, NocoBaseError } from "./NocoBaseApi.ts"
import { type RefreshChecked, type RefreshProblem, type RefreshTarget, type Verified, verify } from "./RefreshVerify.ts"

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

export interface RefreshReport {
  readonly fresh: boolean
  readonly cacheCleared: boolean
  readonly restarted: boolean
  readonly checked: RefreshChecked
  readonly problems: ReadonlyArray<RefreshProblem>
}

type Say = (line: string) => Effect.Effect<void>

/** A check's result, and what was done to the server to get it. */
interface Reloaded {
  readonly result: Verified
  readonly cacheCleared: boolean
  readonly restarted: boolean
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`

const isStale = (result: Verified, target?: RefreshTarget) =>
  result.problems.some((problem) => problem.kind === "stale" && (target === undefined || problem.target === target))
const staleBeyondPages = (result: Verified) =>
  result.problems.some((problem) => problem.kind === "stale" && problem.target !== "page")

/** A check as the operator reads it: the verdict, at most 50 problems, the notes, what to do when the database changed. */
const reportLines = (result: Verified): Array<string> => {
  const stale = result.problems.filter((problem) => problem.kind === "stale")
  const changed = result.problems.filter((problem) => problem.kind === "changed")
  const c = result.checked
  const checked = `checked ${plural(c.collections, "collection")}, ${plural(c.fields, "field")}, ${plural(c.pages, "page node")}, ${plural(c.records, "record")}`
  return [
    stale.length > 0
      ? `running metadata: STALE, ${stale.length} of ${c.values + c.records} repaired values not served (${checked})`
      : changed.length > 0
      ? `running metadata: serves what the database holds, but the database changed since the repair in ${plural(changed.length, "value")} (${checked})`
      : `running metadata: fresh, serves every repaired value (${checked})`,
    ...result.problems.slice(0, 50).map((problem) => `  ${problem.kind}  ${problem.target}  ${problem.subject}  ${problem.detail}`),
    ...(result.problems.length > 50 ? [`  … ${result.problems.length - 50} more`] : []),
    ...result.notes.map((note) => `  note  ${note}`),
    ...(changed.length > 0 ? ["the database no longer holds what the repair wrote: run `meta audit` (and `meta repair --apply`) first"] : [])
  ]
}

/**
 * After app:restart: poll until the server answers with fresh metadata, or the deadline (then the
 * last answer stands; none at all is a NocoBaseError). The restart may not have begun yet; a 401
 * means it has (the token is gone): sign in again.
 */
const awaitRestart = (api: NocoBaseApi, check: Effect.Effect<Verified, NocoBaseError>, waitTimeout: Duration.Duration, pollInterval: Duration.Duration, say: Say) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const deadline = started + Duration.toMillis(waitTimeout)
    while (true) {
      yield* Effect.sleep(pollInterval)
      const attempt = yield* check.pipe(
        Effect.catchTag("NocoBaseError", (error) =>
          error.status === 401
            ? api.signIn.pipe(Effect.andThen(check), Effect.catchTag("NocoBaseError", () => Effect.succeed(undefined)))
            : Effect.succeed(undefined))
      )
      const now = yield* Clock.currentTimeMillis
      if (attempt !== undefined && (!isStale(attempt) || now >= deadline)) {
        yield* say(`server answers again after ${((now - started) / 1000).toFixed(1)} s`)
        return attempt
      }
      if (now >= deadline) {
        return yield* new NocoBaseError({ step: "app:restart", status: null, detail: `the server did not answer within ${Duration.format(waitTimeout)}` })
      }
    }
  })

export const refresh = Effect.fn("meta.refresh")(function*(options: RefreshOptions) {
  const say: Say = options.say ?? ((line: string) => Console.log(line))
  const pollInterval = Duration.fromInputUnsafe(options.pollInterval ?? Duration.seconds(1))
  const waitTimeout = Duration.fromInputUnsafe(options.waitTimeout ?? Duration.seconds(60))
  const requestTimeout = Duration.fromInputUnsafe(options.requestTimeout ?? Duration.seconds(30))
  const run = options.run
  const api = yield* makeNocoBaseApi({ baseUrl: options.baseUrl, account: options.account, password: options.password, requestTimeout })
  const check = verify(api, run)
  const report = (result: Verified) => Effect.forEach(reportLines(result), say, { discard: true })

  /** With `--restart`: app:clearCache for stale page nodes (or without the log), app:restart for the rest; then check again. */
  const reload = (first: Verified) =>
    Effect.gen(function*() {
      let result = first
      let cacheCleared = false
      // page nodes are cached until app:clearCache; without the log they cannot be checked, so clear it to be safe
      if (isStale(result, "page") || run === undefined) {
        yield* api.post("app:clearCache")
        cacheCleared = true
        yield* say("app:clearCache: done")
        if (!staleBeyondPages(result)) {
          result = yield* check
          yield* report(result)
        }
      }
      if (!isStale(result)) return { result, cacheCleared, restarted: false }
      yield* api.post("app:restart")
      yield* say("app:restart: requested; waiting for the server to answer again")
      result = yield* awaitRestart(api, check, waitTimeout, pollInterval, say)
      yield* report(result)
      return { result, cacheCleared, restarted: true }
    })

  /** Without `--restart`: what to run to make the server serve the repair. */
  const advise = (result: Verified) => {
    const actions = [
      ...(isStale(result, "page") ? ["app:clearCache"] : []),
      ...(staleBeyondPages(result) ? ["app:restart"] : [])
    ]
    return say(`the running server does not serve the repaired metadata: run \`meta refresh --restart\` (${actions.join(" and ")}) or restart NocoBase`)
  }

  yield* api.signIn
  yield* say(`signed in to ${api.base}`)
  yield* api.post("dataSources:refresh", { filterByTk: "main" })
  yield* say("dataSources:refresh main: done")
  if (run === undefined) {
    yield* say("no repair log: comparing the fields of the synchronised collections with the database (collection options and page nodes need the log: set DATABASE_URL)")
  }
  const first = yield* check
  yield* report(first)
  const unchanged: Reloaded = { result: first, cacheCleared: false, restarted: false }
  const { cacheCleared, restarted, result }: Reloaded = !isStale(first)
    ? unchanged
    : options.restart
    ? yield* reload(first)
    : yield* advise(first).pipe(Effect.as(unchanged))
  const final: RefreshReport = {
    fresh: result.problems.length === 0,
    cacheCleared,
    restarted,
    checked: result.checked,
    problems: result.problems
  }
  return final
})
