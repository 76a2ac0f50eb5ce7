// The settings every service shares (DESIGN section 3): the log, the database, the servers' bind
// address and limits, traces, and the Telegram Bot API the worker's chat-bot and admin's alerts both
// use. Each service's own settings are in its folder (`recon/Settings.ts`, …); `commands/ServiceCommands.ts`
// reads what a command runs, every problem at once.
import { Config, Effect, Option, Redacted, Result } from "effect"
import { isIP } from "node:net"
import { all, flagConfig, int, invalid, key, oneOf, problem, read, schemeOf, secretKey, type Settings, string, stripSlash, url, urlProblem } from "./Keys.ts"

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

/** The Telegram Bot API base: the chat-bot's ingestion and the alert chat share it. */
export const readBotApiUrl: Settings<string> = url("SVC_RECON_CHATBOT_API_URL", ["http", "https"]).pipe(
  Effect.map((u) => stripSlash(Option.getOrElse(u, () => "https://api.telegram.org")))
)

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
    metrics: read(flagConfig("SVC_METRICS", true))
  }).pipe(Effect.tap(({ headersTimeoutMs, requestTimeoutMs }) =>
    headersTimeoutMs > requestTimeoutMs ? problem("SVC_HTTP_HEADERS_TIMEOUT_MS: must not exceed SVC_HTTP_REQUEST_TIMEOUT_MS") : Effect.void
  ))
