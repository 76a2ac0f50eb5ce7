// Reads and checks the configuration of DESIGN section 3 through `effect` Config, from the
// ConfigProvider of the running Effect (the environment, or a record for tests and `all`'s dev
// tokens). Every command checks its keys before it does anything; each problem is one line
// naming the key (never a secret's value), and all of them are reported at once.
import { Config, ConfigProvider, Effect, Option, Redacted, Result, Schema, SchemaIssue } from "effect"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { isIP } from "node:net"
import { defaultSignInLimits, type SignInLimitSettings } from "../admin/SignInLimits.ts"
import { parseAmount } from "../domain/Money.ts"
import { checkWebhookUrl } from "../domain/Webhooks.ts"

export type Env = Readonly<Record<string, string | undefined>>
export type Caller = "admin" | "recon"

/** Every problem found, one line each (`KEY: what is wrong`). */
export class ConfigProblems extends Schema.TaggedError<ConfigProblems>()("ConfigProblems", {
  problems: Schema.Array(Schema.String)
}) {}

/** What reading some settings is: the value, or every problem found on the way. */
export type Settings<A> = Effect.Effect<A, ConfigProblems>

const problems = (lines: ReadonlyArray<string>) => new ConfigProblems({ problems: [...new Set(lines)] })

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
const invalid = (name: string, message: string) =>
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
const secretKey = (name: string): Config.Config<Option.Option<Redacted.Redacted<string>>> =>
  Config.Redacted(name).pipe(Config.option, Config.map(Option.flatMap((secret) => {
    const value = Redacted.value(secret).trim()
    return value === "" ? Option.none() : Option.some(Redacted.make(value))
  })))

const parsePort = (raw: string): Result.Result<number, string> =>
  /^\d+$/.test(raw) && Number(raw) <= 65535 ? Result.succeed(Number(raw)) : Result.fail(`expected a port number from 0 to 65535, got "${raw}"`)

const schemeOf = (raw: string): string | undefined => {
  try {
    return new URL(raw).protocol.replace(/:$/, "")
  } catch {
    return undefined
  }
}

const urlProblem = (schemes: ReadonlyArray<string>) => `expected a ${schemes.map((s) => `${s}://`).join(" or ")} URL`

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

const orElse = <A>(fallback: A) => <E>(self: Effect.Effect<Option.Option<A>, E>): Effect.Effect<A, E> =>
  Effect.map(self, Option.getOrElse(() => fallback))

export const port = (name: string, fallback: number): Settings<number> => read(key(name, parsePort)).pipe(orElse(fallback))
export const url = (name: string, schemes: ReadonlyArray<string>): Settings<Option.Option<string>> => read(key(name, parseUrl(schemes)))
const int = (name: string, fallback: number, min: number, max: number): Settings<number> =>
  read(key(name, parseWhole(min, max))).pipe(orElse(fallback))
const oneOf = <const T extends string>(name: string, values: ReadonlyArray<T>, fallback: T): Settings<T> =>
  read(key(name, parseOneOf(values))).pipe(orElse(fallback))
const string = (name: string): Settings<Option.Option<string>> => read(text(name))
const secret = (name: string): Settings<Option.Option<Redacted.Redacted<string>>> => read(secretKey(name))
const stripSlash = (s: string) => s.replace(/\/+$/, "")

/** Runs `settings` on an environment record (tests, `all` with its dev tokens). */
export const fromEnv = <A>(env: Env, settings: Settings<A>): Settings<A> =>
  Effect.provideService(settings, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({ ...env }))

/** Reads `settings` from `env` at once; throws ConfigProblems (tests and benchmarks). */
export const readSync = <A>(env: Env, settings: Settings<A>): A => Effect.runSync(fromEnv(env, settings))

export const tokenKeys: Record<Caller, string> = {
  admin: "SVC_INTERNAL_SERVICE_TOKEN_ADMIN",
  recon: "SVC_INTERNAL_SERVICE_TOKEN_RECON"
}
export const SHARED_TOKEN_KEY = "SVC_INTERNAL_SERVICE_TOKEN"
export const STAGE_KEY = "SVC_PER_CALLER_TOKEN_REQUIRED"

export interface TokenPolicy {
  /** Whose token the receiver takes. */
  readonly caller: Caller
  readonly stage: "A" | "B" | "C"
  /** The tokens a receiver accepts from its caller: the caller's own, and the shared one before stage C. */
  readonly accepted: ReadonlyArray<Redacted.Redacted<string>>
}

const ON_OFF = ["on", "off", "true", "false", "1", "0"] as const
const isOn = (value: (typeof ON_OFF)[number]) => value === "on" || value === "true" || value === "1"

/** The one reading of a flag key (`on`/`off`, `true`/`false`, `1`/`0`), as a Config. */
const flagConfig = (name: string): Config.Config<boolean> =>
  key(name, parseOneOf(ON_OFF)).pipe(Config.map(Option.match({ onNone: () => false, onSome: isOn })))

/** The stage key, read by one Config everywhere: a receiver and a caller of the same token agree on it. */
export const stageCConfig = flagConfig(STAGE_KEY)

/** `value`, or every line of `found` when there is one. */
const unlessProblems = <A>(found: ReadonlyArray<string>, value: A): Settings<A> =>
  found.length > 0 ? Effect.fail(problems(found)) : Effect.succeed(value)

/**
 * The migration stage as a caller and a receiver both need it: stage C, the shared token (which
 * stage C forbids), and the problems found so far. A bad stage value counts as off, so that the
 * problems of the keys it governs are reported with it.
 */
const tokenStage = Effect.gen(function*() {
  const stage = yield* Effect.result(read(stageCConfig))
  const shared = yield* secret(SHARED_TOKEN_KEY)
  const stageC = Result.getOrElse(stage, () => false)
  const found = [
    ...(Result.isFailure(stage) ? stage.failure.problems : []),
    ...(stageC && Option.isSome(shared) ? [`${SHARED_TOKEN_KEY}: must be empty once ${STAGE_KEY}=on (stage C accepts only per-caller tokens)`] : [])
  ]
  return { stageC, shared, found }
})

/** The tokens a receiver for `caller` accepts, by the migration stages of DESIGN section 3. */
export const readTokenPolicy = (caller: Caller): Settings<TokenPolicy> =>
  Effect.gen(function*() {
    const { found, shared, stageC } = yield* tokenStage
    const own = yield* secret(tokenKeys[caller])
    if (stageC) {
      return yield* Option.isNone(own)
        ? Effect.fail(problems([...found, `${tokenKeys[caller]}: required when ${STAGE_KEY}=on`]))
        : unlessProblems<TokenPolicy>(found, { caller, stage: "C", accepted: [own.value] })
    }
    const accepted = [own, shared].flatMap((t) => Option.isSome(t) ? [t.value] : [])
    if (accepted.length === 0) {
      found.push(`${tokenKeys[caller]}: not set (set it, or the shared ${SHARED_TOKEN_KEY} during migration stages A/B)`)
    }
    return yield* unlessProblems<TokenPolicy>(found, { caller, stage: Option.isSome(own) && Option.isSome(shared) ? "B" : "A", accepted })
  })

/** The token a caller presents: its own key, or the shared one before stage C. */
export const readCallerToken = (caller: Caller): Settings<Redacted.Redacted<string>> =>
  Effect.gen(function*() {
    const { found, shared, stageC } = yield* tokenStage
    const own = yield* secret(tokenKeys[caller])
    const token = stageC ? own : Option.orElse(own, () => shared)
    if (Option.isNone(token)) {
      return yield* Effect.fail(problems([
        ...found,
        stageC ? `${tokenKeys[caller]}: required when ${STAGE_KEY}=on` : `${tokenKeys[caller]}: not set (nor the shared ${SHARED_TOKEN_KEY})`
      ]))
    }
    return yield* unlessProblems(found, token.value)
  })

export interface LogSettings {
  readonly level: "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "none"
  readonly format: "json" | "pretty"
}

export const readLogSettings: Settings<LogSettings> = all({
  level: oneOf("LOG_LEVEL", ["trace", "debug", "info", "warn", "error", "fatal", "none"], "info"),
  format: oneOf("LOG_FORMAT", ["json", "pretty"], "pretty")
})

const DATABASE_SCHEMES = ["postgres", "postgresql"]

/** DATABASE_URL as a Config: Redacted (it carries a password), a postgres:// URL; None when unset (embedded PostgreSQL). */
export const databaseUrlConfig: Config.Config<Option.Option<Redacted.Redacted<string>>> = secretKey("DATABASE_URL").pipe(
  Config.mapEffect((found): Effect.Effect<Option.Option<Redacted.Redacted<string>>, Config.ConfigError> => {
    if (Option.isNone(found)) return Effect.succeedNone
    const scheme = schemeOf(Redacted.value(found.value))
    // The URL's value is never shown: it carries the password.
    return scheme !== undefined && DATABASE_SCHEMES.includes(scheme)
      ? Effect.succeed(found)
      : Effect.fail(invalid("DATABASE_URL", urlProblem(DATABASE_SCHEMES)))
  })
)

/** DATABASE_URL; undefined: the embedded PostgreSQL. */
export const readDatabaseUrl: Settings<Redacted.Redacted<string> | undefined> = read(databaseUrlConfig).pipe(Effect.map(Option.getOrUndefined))

export interface LlmSettings {
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly model: string
  readonly baseUrl: string
}

export const readLlmSettings: Settings<LlmSettings> = all({
  apiKey: secret("SVC_RECON_LLM_API_KEY"),
  model: string("SVC_RECON_LLM_MODEL"),
  baseUrl: url("SVC_RECON_LLM_BASE_URL", ["http", "https"])
}).pipe(Effect.flatMap(({ apiKey, baseUrl, model }) =>
  Option.isSome(apiKey) && Option.isNone(model)
    ? problem("SVC_RECON_LLM_MODEL: required when SVC_RECON_LLM_API_KEY is set")
    : Effect.succeed({
      apiKey: Option.getOrUndefined(apiKey),
      model: Option.getOrElse(model, () => ""),
      baseUrl: Option.getOrElse(baseUrl, () => "https://api.openai.com/v1")
    })
))

export interface ReconSettings {
  readonly port: number
  readonly tokens: TokenPolicy
  readonly llm: LlmSettings
  readonly pushPublicUrl: string
}

export const readReconSettings: Settings<ReconSettings> = all({
  port: port("SVC_RECON_PORT", 8017),
  tokens: readTokenPolicy("admin"),
  llm: readLlmSettings,
  // Where phones reach the worker's push listener; the webhook_url of a registration starts with it.
  pushPublicUrl: all({ publicUrl: url("SVC_PUSH_PUBLIC_URL", ["http", "https"]), pushPort: port("SVC_PUSH_PORT", 8019) }).pipe(
    Effect.map(({ publicUrl, pushPort }) => stripSlash(Option.getOrElse(publicUrl, () => `http://127.0.0.1:${pushPort}`)))
  )
})

export interface ChatbotSettings {
  readonly enabled: boolean
  /** The bot token; a secret (it is part of every Bot API URL), never logged. */
  readonly token: Redacted.Redacted<string> | undefined
  readonly apiUrl: string
  /** Chats whose text messages are ingested; others are skipped. */
  readonly chatIds: ReadonlyArray<string>
}

/** Comma-separated numeric chat ids (updates carry the numeric chat id, so that is what is compared). */
const chatIds: Settings<ReadonlyArray<string>> = string("SVC_RECON_CHATBOT_CHAT_IDS").pipe(Effect.flatMap((raw) => {
  const ids = Option.match(raw, { onNone: () => [], onSome: (s) => s.split(",").map((id) => id.trim()).filter((id) => id !== "") })
  const bad = ids.filter((id) => !/^-?\d+$/.test(id))
  return bad.length === 0
    ? Effect.succeed(ids)
    : Effect.fail(problems(bad.map((id) => `SVC_RECON_CHATBOT_CHAT_IDS: "${id}" is not a numeric chat id`)))
}))

/** The Telegram Bot API base: the chat-bot's ingestion and the alert chat share it. */
const botApiUrl: Settings<string> = url("SVC_RECON_CHATBOT_API_URL", ["http", "https"]).pipe(
  Effect.map((u) => stripSlash(Option.getOrElse(u, () => "https://api.telegram.org")))
)

export const readChatbotSettings: Settings<ChatbotSettings> = all({
  enabled: read(flagConfig("SVC_RECON_CHATBOT_ENABLED")),
  token: secret("SVC_RECON_CHATBOT_TOKEN"),
  apiUrl: botApiUrl,
  chatIds
}).pipe(Effect.flatMap(({ apiUrl, chatIds, enabled, token }) =>
  all({
    token: enabled && Option.isNone(token) ? problem("SVC_RECON_CHATBOT_TOKEN: required when SVC_RECON_CHATBOT_ENABLED is on") : Effect.void,
    chatIds: enabled && chatIds.length === 0
      ? problem("SVC_RECON_CHATBOT_CHAT_IDS: required when SVC_RECON_CHATBOT_ENABLED is on (comma-separated chat ids)")
      : Effect.void
  }).pipe(Effect.as({ enabled, token: Option.getOrUndefined(token), apiUrl, chatIds }))
))

export interface WorkerSettings {
  readonly port: number
  readonly heartbeatFile: string
  readonly chatbot: ChatbotSettings
  /** Base URLs of wallet_service and admin_service (no trailing slash). */
  readonly walletUrl: string
  readonly adminUrl: string
  /** The recon caller's token the worker presents to both (its own key, or the shared one before stage C). */
  readonly callerToken: Redacted.Redacted<string> | undefined
  /** SVC_DEPOSIT_TTL_H: a pending deposit older than this many hours is expired by order_match_loop. */
  readonly depositTtlHours: number
}

/** A service's base URL: `key`, or the service on this host at its port (`portKey`). */
const localUrl = (name: string, portKey: string, fallbackPort: number): Settings<string> =>
  url(name, ["http", "https"]).pipe(
    Effect.flatMap(Option.match({ onSome: Effect.succeed, onNone: () => Effect.map(port(portKey, fallbackPort), (p) => `http://127.0.0.1:${p}`) })),
    Effect.map(stripSlash)
  )

/**
 * WALLET_SERVICE_URL and ADMIN_SERVICE_URL default to the services on this host at their ports
 * (SVC_WALLET_PORT, SVC_ADMIN_PORT: what `all` and a one-host deployment run); set them when the
 * services run elsewhere.
 */
export const readWorkerSettings: Settings<WorkerSettings> = all({
  port: port("SVC_PUSH_PORT", 8019),
  heartbeatFile: string("SVC_WORKER_HEARTBEAT_FILE").pipe(orElse("/tmp/recon-worker.heartbeat")),
  chatbot: readChatbotSettings,
  walletUrl: localUrl("WALLET_SERVICE_URL", "SVC_WALLET_PORT", 8018),
  adminUrl: localUrl("ADMIN_SERVICE_URL", "SVC_ADMIN_PORT", 8016),
  callerToken: readCallerToken("recon"),
  depositTtlHours: int("SVC_DEPOSIT_TTL_H", 24, 1, 24 * 366)
})

export interface WalletSettings {
  readonly port: number
  /** Tokens accepted on /internal/wallet/* (the recon worker's). */
  readonly tokens: TokenPolicy
}

export const readWalletSettings: Settings<WalletSettings> = all({
  port: port("SVC_WALLET_PORT", 8018),
  tokens: readTokenPolicy("recon")
})

/** The operator console's money controls and waiting time (DESIGN section 11). */
export interface ReviewSettings {
  /** Approvals and assignments above this amount (a decimal string) need a second operator; undefined: off. */
  readonly secondApprovalOver: string | undefined
  /** An SMS awaiting a person longer than this is a `review_waiting` alert. */
  readonly waitAlertS: number
}

/** Where new alerts are sent (the Telegram Bot API's sendMessage), when a chat is configured. */
export interface AlertChatSettings {
  readonly apiUrl: string
  readonly token: Redacted.Redacted<string>
  /** A numeric chat id or a channel's `@username`. */
  readonly chatId: string
}

const parseAmountKey = (raw: string): Result.Result<string, string> => {
  const amount = parseAmount(raw)
  return amount === undefined || /^0+(?:\.0+)?$/.test(amount)
    ? Result.fail(`expected an amount in won above zero (e.g. 1000000 or 1,000,000), got "${raw}"`)
    : Result.succeed(amount)
}

const parseChatId = (raw: string): Result.Result<string, string> =>
  /^-?\d{1,20}$/.test(raw) || /^@[A-Za-z][A-Za-z0-9_]{4,31}$/.test(raw)
    ? Result.succeed(raw)
    : Result.fail(`expected a numeric chat id or a channel's @username, got "${raw}"`)

export const readReviewSettings: Settings<ReviewSettings> = all({
  secondApprovalOver: read(key("SVC_REVIEW_SECOND_APPROVAL_OVER", parseAmountKey)).pipe(Effect.map(Option.getOrUndefined)),
  waitAlertS: int("SVC_REVIEW_WAIT_ALERT_S", 600, 1, 30 * 86_400)
})

/** SVC_ALERT_TELEGRAM_CHAT_ID with the chat-bot's token and Bot API URL; the token is required once a chat is set. */
export const readAlertChatSettings: Settings<AlertChatSettings | undefined> = all({
  chatId: read(key("SVC_ALERT_TELEGRAM_CHAT_ID", parseChatId)),
  token: secret("SVC_RECON_CHATBOT_TOKEN"),
  apiUrl: botApiUrl
}).pipe(Effect.flatMap(({ apiUrl, chatId, token }) =>
  Option.isNone(chatId)
    ? Effect.succeed(undefined)
    : Option.isNone(token)
    ? problem("SVC_RECON_CHATBOT_TOKEN: required when SVC_ALERT_TELEGRAM_CHAT_ID is set (alerts are sent by the chat-bot)")
    : Effect.succeed({ apiUrl, token: token.value, chatId: chatId.value })
))

export interface AdminSettings {
  readonly port: number
  /** Tokens accepted on POST /internal/meta/ws/sync (the recon worker's). */
  readonly syncTokens: TokenPolicy
  /** recon_service's base URL and the admin token presented to it. */
  readonly reconUrl: string
  readonly reconToken: Redacted.Redacted<string>
  /** The worker's push/health port, for the console's loop health. */
  readonly workerHealthUrl: string | undefined
  /** Sign-in attempts per account and per address within 15 minutes. */
  readonly signInLimits: SignInLimitSettings
  readonly review: ReviewSettings
  readonly alertChat: AlertChatSettings | undefined
}

/** `local` (under `all`): the URLs of the recon and worker ports of the same process, where no URL is set. */
export const readAdminSettings = (local?: { readonly reconPort: number; readonly pushPort: number }): Settings<AdminSettings> =>
  all({
    port: port("SVC_ADMIN_PORT", 8016),
    syncTokens: readTokenPolicy("recon"),
    reconUrl: url("RECON_SERVICE_URL", ["http", "https"]).pipe(Effect.flatMap((found) =>
      Option.isSome(found)
        ? Effect.succeed(stripSlash(found.value))
        : local === undefined
        ? problem("RECON_SERVICE_URL: required (base URL of recon_service, e.g. http://127.0.0.1:8017)")
        : Effect.succeed(`http://127.0.0.1:${local.reconPort}`)
    )),
    reconToken: readCallerToken("admin"),
    workerHealthUrl: url("WORKER_HEALTH_URL", ["http", "https"]).pipe(Effect.map((found) =>
      Option.isSome(found) ? stripSlash(found.value) : local === undefined ? undefined : `http://127.0.0.1:${local.pushPort}`
    )),
    signInLimits: all({
      perAccount: int("SVC_ADMIN_SIGNIN_MAX_PER_ACCOUNT", defaultSignInLimits.perAccount, 1, 1_000_000),
      perAddress: int("SVC_ADMIN_SIGNIN_MAX_PER_ADDRESS", defaultSignInLimits.perAddress, 1, 1_000_000)
    }).pipe(Effect.map((limits) => ({ ...defaultSignInLimits, ...limits }))),
    review: readReviewSettings,
    alertChat: readAlertChatSettings
  })

/** `all --demo`'s own keys: a webhook of the person trying the demo, to watch the signed events arrive. */
export interface DemoSettings {
  readonly webhook: { readonly url: string; readonly secret: Redacted.Redacted<string> | undefined } | undefined
}

const parseWebhookUrl = (raw: string): Result.Result<string, string> =>
  Result.mapError(checkWebhookUrl(raw), (refused) => `${refused.detail}, got "${raw}"`)

/** DEMO_WEBHOOK_URL, and DEMO_WEBHOOK_SECRET (16 to 256 characters; the demo makes one when unset). */
export const readDemoSettings: Settings<DemoSettings> = all({
  url: read(key("DEMO_WEBHOOK_URL", parseWebhookUrl)),
  secret: secret("DEMO_WEBHOOK_SECRET")
}).pipe(Effect.flatMap(({ secret, url }): Settings<DemoSettings> => {
  if (Option.isSome(secret) && (Redacted.value(secret.value).length < 16 || Redacted.value(secret.value).length > 256)) {
    return problem("DEMO_WEBHOOK_SECRET: expected 16 to 256 characters (the receiver verifies X-Recon-Signature with it)")
  }
  if (Option.isNone(url)) {
    return Option.isSome(secret) ? problem("DEMO_WEBHOOK_SECRET: set DEMO_WEBHOOK_URL too (where the signed events go)") : Effect.succeed({ webhook: undefined })
  }
  return Effect.succeed({ webhook: { url: url.value, secret: Option.getOrUndefined(secret) } })
}))

/**
 * Dev tokens for `all` when none are configured: made at the first start and kept in `file`
 * (mode 0600, beside the embedded database's data), so a token a user exported keeps working
 * after a restart. `file` is absent when tokens were configured.
 */
export const withDevTokens = (env: Env, file: string): { readonly env: Env; readonly generated: Record<string, string>; readonly file?: string } => {
  const has = (key: string) => (env[key] ?? "").trim() !== ""
  // Not in stage C: whoever turned it on configures real per-caller tokens.
  const stageC = Effect.runSync(fromEnv(env, read(stageCConfig)).pipe(Effect.orElseSucceed(() => false)))
  if (stageC || has(SHARED_TOKEN_KEY) || has(tokenKeys.admin) || has(tokenKeys.recon)) return { env, generated: {} }
  const kept: Record<string, string> = {}
  if (existsSync(file)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const found = /^\s*(SVC_INTERNAL_SERVICE_TOKEN_(?:ADMIN|RECON))=(\S+)\s*$/.exec(line)
      if (found !== null) kept[found[1]!] = found[2]!
    }
  }
  const generated = {
    [tokenKeys.admin]: kept[tokenKeys.admin] ?? `dev-admin-${randomBytes(18).toString("base64url")}`,
    [tokenKeys.recon]: kept[tokenKeys.recon] ?? `dev-recon-${randomBytes(18).toString("base64url")}`
  }
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, Object.entries(generated).map(([key, value]) => `${key}=${value}\n`).join(""), { mode: 0o600 })
  chmodSync(file, 0o600)
  return { env: { ...env, ...generated }, generated, file }
}

export interface TracingSettings {
  /** Where spans are sent (OTLP/HTTP, JSON bodies). */
  readonly url: string
  /** OTEL_SERVICE_NAME: when set, every service's spans carry it instead of the service's own name. */
  readonly serviceName: string | undefined
  /** OTEL_EXPORTER_OTLP_HEADERS (a collector's API key, …): sent with every export, never logged. */
  readonly headers: Redacted.Redacted<Readonly<Record<string, string>>> | undefined
  /** OTEL_BSP_SCHEDULE_DELAY: milliseconds between two exports of the spans ended meanwhile. */
  readonly exportIntervalMs: number
}

/** `k1=v1,k2=v2`, values percent-encoded (the OpenTelemetry form); the text is a secret, so no problem line shows it. */
const parseOtlpHeaders = (raw: string): Result.Result<Readonly<Record<string, string>>, string> => {
  const headers: Record<string, string> = {}
  for (const pair of raw.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const at = pair.indexOf("=")
    const name = at > 0 ? pair.slice(0, at).trim() : ""
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return Result.fail("expected comma-separated name=value pairs")
    try {
      headers[name.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      return Result.fail(`the value of ${name} is not percent-encoded text`)
    }
  }
  return Result.succeed(headers)
}

/**
 * Traces (DESIGN section 11): on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as it is) or
 * OTEL_EXPORTER_OTLP_ENDPOINT (the collector's base URL; `/v1/traces` is appended) is set, off
 * (undefined) otherwise.
 */
export const readTracingSettings: Settings<TracingSettings | undefined> = all({
  traces: url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ["http", "https"]),
  base: url("OTEL_EXPORTER_OTLP_ENDPOINT", ["http", "https"]),
  serviceName: string("OTEL_SERVICE_NAME"),
  headers: read(secretKey("OTEL_EXPORTER_OTLP_HEADERS").pipe(Config.mapEffect(Option.match({
    onNone: () => Effect.succeedNone,
    onSome: (secret) =>
      Result.match(parseOtlpHeaders(Redacted.value(secret)), {
        onSuccess: (headers) => Effect.succeedSome(Redacted.make(headers)),
        onFailure: (message) => Effect.fail(invalid("OTEL_EXPORTER_OTLP_HEADERS", message))
      })
  })))),
  exportIntervalMs: int("OTEL_BSP_SCHEDULE_DELAY", 5_000, 10, 600_000)
}).pipe(Effect.map(({ base, exportIntervalMs, headers, serviceName, traces }) => {
  const endpoint = Option.orElse(traces, () => Option.map(base, (b) => `${stripSlash(b)}/v1/traces`))
  return Option.isNone(endpoint) ? undefined : {
    url: endpoint.value,
    serviceName: Option.getOrUndefined(serviceName),
    headers: Option.getOrUndefined(headers),
    exportIntervalMs
  }
}))

export interface HttpSettings {
  /** The address every server binds; undefined: all interfaces (IPv6 and IPv4, Node's default). */
  readonly host: string | undefined
  /** A connection must have sent a request's headers this long after it opened or began them. */
  readonly headersTimeoutMs: number
  /** The whole request, body included, must have arrived within this. */
  readonly requestTimeoutMs: number
  /** A keep-alive connection idle this long between requests is closed. */
  readonly keepAliveTimeoutMs: number
  /** Connections one server holds at once; the oldest idle one makes room for a new one. */
  readonly maxConnections: number
  /** Every server answers GET /metrics (SVC_METRICS, on unless `off`). */
  readonly metrics: boolean
}

export const BIND_HOST_KEY = "SVC_BIND_HOST"

/** An IP address, "localhost", or "*" (all interfaces: undefined). */
const parseHost = (raw: string): Result.Result<Option.Option<string>, string> =>
  raw === "*"
    ? Result.succeed(Option.none())
    : raw === "localhost" || isIP(raw) !== 0
    ? Result.succeed(Option.some(raw))
    : Result.fail(`expected an IP address, "localhost" or "*" (all interfaces), got "${raw}"`)

/**
 * The servers' bind address and connection limits. `all` (a developer's machine) binds loopback
 * by default, the single-service commands (containers) every interface.
 */
export const readHttpSettings = (defaultHost: "loopback" | "all"): Settings<HttpSettings> =>
  all({
    host: read(key(BIND_HOST_KEY, parseHost)).pipe(Effect.map(Option.match({
      onNone: () => defaultHost === "loopback" ? "127.0.0.1" : undefined,
      onSome: Option.getOrUndefined
    }))),
    headersTimeoutMs: int("SVC_HTTP_HEADERS_TIMEOUT_MS", 10_000, 10, 600_000),
    requestTimeoutMs: int("SVC_HTTP_REQUEST_TIMEOUT_MS", 30_000, 10, 3_600_000),
    keepAliveTimeoutMs: int("SVC_HTTP_KEEPALIVE_TIMEOUT_MS", 5_000, 10, 600_000),
    maxConnections: int("SVC_HTTP_MAX_CONNECTIONS", 1_024, 2, 1_000_000),
    metrics: read(key("SVC_METRICS", parseOneOf(ON_OFF))).pipe(Effect.map(Option.match({ onNone: () => true, onSome: isOn })))
  }).pipe(Effect.tap(({ headersTimeoutMs, requestTimeoutMs }) =>
    headersTimeoutMs > requestTimeoutMs ? problem("SVC_HTTP_HEADERS_TIMEOUT_MS: must not exceed SVC_HTTP_REQUEST_TIMEOUT_MS") : Effect.void
  ))
