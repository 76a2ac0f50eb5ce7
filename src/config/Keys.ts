// How every setting is read and checked, through `effect` Config from the ConfigProvider of the
// running Effect (the environment, or a record for tests and `all`'s dev tokens): each problem is
// one line naming the key (never a secret's value), and `all` reports every one of them at once.
// The settings themselves: what every service shares in this folder, each service's own in its folder.
import { Config, ConfigProvider, Effect, Option, Redacted, Result, Schema, SchemaIssue } from "effect"

export type Env = Readonly<Record<string, string | undefined>>

/** Every problem found, one line each (`KEY: what is wrong`). */
export class ConfigProblems extends Schema.TaggedError<ConfigProblems>()("ConfigProblems", {
  problems: Schema.Array(Schema.String)
}) {}

/** What reading some settings is: the value, or every problem found on the way. */
export type Settings<A> = Effect.Effect<A, ConfigProblems>

/** Problem lines as the failure of some settings (a line found twice is one). */
export const problems = (lines: ReadonlyArray<string>) => new ConfigProblems({ problems: [...new Set(lines)] })

/** A problem that concerns keys together (a key required because another is set, …). */
export const problem = (line: string): Settings<never> => Effect.fail(problems([line]))

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** A ConfigError as lines: `KEY: message` for each issue of a key. */
const linesOf = (error: Config.ConfigError): ReadonlyArray<string> =>
  Schema.isSchemaError(error.cause)
    ? formatIssue(error.cause.issue).issues.map(({ message, path }) =>
      path === undefined || path.length === 0 ? message : `${path.map((p) => String(typeof p === "object" ? p.key : p)).join("_")}: ${message}`
    )
    : [error.message]

/** A Config read from the current ConfigProvider, its ConfigError as problem lines. */
export const read = <A>(config: Config.Config<A>): Settings<A> =>
  Effect.mapError(config, (error) => problems(linesOf(error)))

/** Reads every part, failing with all their problems (not only the first); a line two parts share is one line. */
export const all = <const R extends Record<string, Settings<any>>>(
  parts: R
): Settings<{ readonly [K in keyof R]: R[K] extends Settings<infer A> ? A : never }> =>
  Effect.flatMap(Effect.all(parts as Record<string, Settings<unknown>>, { mode: "result" }), (results) => {
    const entries = Object.entries(results)
    const failed = entries.flatMap(([, r]) => Result.isFailure(r) ? r.failure.problems : [])
    return failed.length > 0
      ? Effect.fail(problems(failed))
      : Effect.succeed(Object.fromEntries(entries.map(([k, r]) => [k, Result.isSuccess(r) ? r.success : undefined])) as any)
  })

/** `name` is wrong: `message` says how (with the value shown, unless it is a secret). */
export const invalid = (name: string, message: string) =>
  new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.Pointer([name], new SchemaIssue.InvalidValue({ message }))))

/** A key's text, trimmed; unset or blank is None. */
const text = (name: string): Config.Config<Option.Option<string>> =>
  Config.String(name).pipe(Config.option, Config.map(Option.map((s) => s.trim())), Config.map(Option.filter((s) => s !== "")))

/** A key as a Config: None when unset, else what `parse` makes of its text, or the key's problem line. */
export const key = <A>(name: string, parse: (raw: string) => Result.Result<A, string>): Config.Config<Option.Option<A>> =>
  text(name).pipe(Config.mapEffect(Option.match({
    onNone: () => Effect.succeedNone,
    onSome: (raw) => Result.match(parse(raw), { onSuccess: Effect.succeedSome, onFailure: (message) => Effect.fail(invalid(name, message)) })
  })))

/** A secret key: Redacted from the environment on, trimmed; unset or blank is None. */
export const secretKey = (name: string): Config.Config<Option.Option<Redacted.Redacted<string>>> =>
  Config.Redacted(name).pipe(Config.option, Config.map(Option.flatMap((secret) => {
    const value = Redacted.value(secret).trim()
    return value === "" ? Option.none() : Option.some(Redacted.make(value))
  })))

const parsePort = (raw: string): Result.Result<number, string> =>
  /^\d+$/.test(raw) && Number(raw) <= 65535 ? Result.succeed(Number(raw)) : Result.fail(`expected a port number from 0 to 65535, got "${raw}"`)

/** A URL's scheme (without the colon); undefined: not a URL. */
export const schemeOf = (raw: string): string | undefined => {
  try {
    return new URL(raw).protocol.replace(/:$/, "")
  } catch {
    return undefined
  }
}

export const urlProblem = (schemes: ReadonlyArray<string>) => `expected a ${schemes.map((s) => `${s}://`).join(" or ")} URL`

const parseUrl = (schemes: ReadonlyArray<string>) => (raw: string): Result.Result<string, string> => {
  const scheme = schemeOf(raw)
  return scheme !== undefined && schemes.includes(scheme) ? Result.succeed(raw) : Result.fail(`${urlProblem(schemes)}, got "${raw}"`)
}

const parseWhole = (min: number, max: number) => (raw: string): Result.Result<number, string> =>
  /^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max
    ? Result.succeed(Number(raw))
    : Result.fail(`expected a whole number from ${min} to ${max}, got "${raw}"`)

const parseOneOf = <const T extends string>(values: ReadonlyArray<T>) => (raw: string): Result.Result<T, string> => {
  const found = values.find((v) => v === raw.toLowerCase())
  return found === undefined ? Result.fail(`expected one of ${values.join(", ")}, got "${raw}"`) : Result.succeed(found)
}

/** The value, or `fallback` when the key is unset. */
export const orElse = <A>(fallback: A) => <E>(self: Effect.Effect<Option.Option<A>, E>): Effect.Effect<A, E> =>
  Effect.map(self, Option.getOrElse(() => fallback))

export const port = (name: string, fallback: number): Settings<number> => read(key(name, parsePort)).pipe(orElse(fallback))
export const url = (name: string, schemes: ReadonlyArray<string>): Settings<Option.Option<string>> => read(key(name, parseUrl(schemes)))
export const int = (name: string, fallback: number, min: number, max: number): Settings<number> =>
  read(key(name, parseWhole(min, max))).pipe(orElse(fallback))
export const oneOf = <const T extends string>(name: string, values: ReadonlyArray<T>, fallback: T): Settings<T> =>
  read(key(name, parseOneOf(values))).pipe(orElse(fallback))
export const string = (name: string): Settings<Option.Option<string>> => read(text(name))
export const secret = (name: string): Settings<Option.Option<Redacted.Redacted<string>>> => read(secretKey(name))
export const stripSlash = (s: string) => s.replace(/\/+$/, "")

const ON_OFF = ["on", "off", "true", "false", "1", "0"] as const
const isOn = (value: (typeof ON_OFF)[number]) => value === "on" || value === "true" || value === "1"

/** The one reading of a flag key (`on`/`off`, `true`/`false`, `1`/`0`), as a Config; `fallback` when unset. */
export const flagConfig = (name: string, fallback = false): Config.Config<boolean> =>
  key(name, parseOneOf(ON_OFF)).pipe(Config.map(Option.match({ onNone: () => fallback, onSome: isOn })))

/** Runs `settings` on an environment record (tests, `all` with its dev tokens). */
export const fromEnv = <A>(env: Env, settings: Settings<A>): Settings<A> =>
  Effect.provideService(settings, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({ ...env }))

/** Reads `settings` from `env` at once; throws ConfigProblems (tests and benchmarks). */
export const readSync = <A>(env: Env, settings: Settings<A>): A => Effect.runSync(fromEnv(env, settings))
