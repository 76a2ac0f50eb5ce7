// Reads and checks the configuration of DESIGN section 3. Every command checks its keys before
// it does anything; each problem is one line naming the key (never a secret's value).
import { Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { isIP } from "node:net"
import { defaultSignInLimits, type SignInLimitSettings } from "../admin/SignInLimits.ts"

export type Env = Readonly<Record<string, string | undefined>>
export type Caller = "admin" | "recon"

export class ConfigProblems extends Error {
  readonly problems: ReadonlyArray<string>
  constructor(problems: ReadonlyArray<string>) {
    super(problems.join("\n"))
    this.problems = problems
  }
}

/** Accumulates problems while reading keys, so one run reports all of them. */
export class ConfigReader {
  readonly problems: Array<string> = []
  readonly env: Env
  constructor(env: Env) {
    this.env = env
  }
  string(key: string): string | undefined {
    const value = this.env[key]
    return value === undefined || value.trim() === "" ? undefined : value.trim()
  }
  /** Records a problem once: services read in one process (`all`) share keys. */
  problem(line: string): void {
    if (!this.problems.includes(line)) this.problems.push(line)
  }
  port(key: string, fallback: number): number {
    const raw = this.string(key)
    if (raw === undefined) return fallback
    const port = Number(raw)
    if (!/^\d+$/.test(raw) || port > 65535) {
      this.problem(`${key}: expected a port number from 0 to 65535, got "${raw}"`)
      return fallback
    }
    return port
  }
  url(key: string, schemes: ReadonlyArray<string>, options?: { readonly secret?: boolean }): string | undefined {
    const raw = this.string(key)
    if (raw === undefined) return undefined
    let scheme: string | undefined
    try {
      scheme = new URL(raw).protocol.replace(/:$/, "")
    } catch {
      scheme = undefined
    }
    if (scheme === undefined || !schemes.includes(scheme)) {
      const shown = options?.secret ? "" : `, got "${raw}"`
      this.problem(`${key}: expected a ${schemes.map((s) => `${s}://`).join(" or ")} URL${shown}`)
      return undefined
    }
    return raw
  }
  int(key: string, fallback: number, min: number, max: number): number {
    const raw = this.string(key)
    if (raw === undefined) return fallback
    const n = Number(raw)
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      this.problem(`${key}: expected a whole number from ${min} to ${max}, got "${raw}"`)
      return fallback
    }
    return n
  }
  oneOf<const T extends string>(key: string, values: ReadonlyArray<T>, fallback: T): T {
    const raw = this.string(key)
    if (raw === undefined) return fallback
    const found = values.find((v) => v === raw.toLowerCase())
    if (found === undefined) {
      this.problem(`${key}: expected one of ${values.join(", ")}, got "${raw}"`)
      return fallback
    }
    return found
  }
  /** Throws every problem found so far, if any. */
  done(): void {
    if (this.problems.length > 0) throw new ConfigProblems(this.problems)
  }
}

export const tokenKeys: Record<Caller, string> = {
  admin: "SVC_INTERNAL_SERVICE_TOKEN_ADMIN",
  recon: "SVC_INTERNAL_SERVICE_TOKEN_RECON"
}
export const SHARED_TOKEN_KEY = "SVC_INTERNAL_SERVICE_TOKEN"
export const STAGE_KEY = "SVC_PER_CALLER_TOKEN_REQUIRED"

export interface TokenPolicy {
  readonly stage: "A" | "B" | "C"
  /** The tokens a receiver accepts from its caller: the caller's own, and the shared one before stage C. */
  readonly accepted: ReadonlyArray<string>
}

const STAGE_C_VALUES: ReadonlyArray<string> = ["on", "true", "1"]

/** The stage key read once per reader: a bad value is one problem, and every reader of it agrees. */
const stageCOf = new WeakMap<ConfigReader, boolean>()

/** Whether stage C is on (`SVC_PER_CALLER_TOKEN_REQUIRED`); in stage C the shared token must be empty. */
export const readStageC = (config: ConfigReader): boolean => {
  const known = stageCOf.get(config)
  if (known !== undefined) return known
  const stageC = STAGE_C_VALUES.includes(config.oneOf(STAGE_KEY, ["on", "off", "true", "false", "1", "0"], "off"))
  if (stageC && config.string(SHARED_TOKEN_KEY) !== undefined) {
    config.problem(`${SHARED_TOKEN_KEY}: must be empty once ${STAGE_KEY}=on (stage C accepts only per-caller tokens)`)
  }
  stageCOf.set(config, stageC)
  return stageC
}

/** The tokens a receiver for `caller` accepts, by the migration stages of DESIGN section 3. */
export const readTokenPolicy = (config: ConfigReader, caller: Caller): TokenPolicy => {
  const stageC = readStageC(config)
  const shared = config.string(SHARED_TOKEN_KEY)
  const own = config.string(tokenKeys[caller])
  if (stageC) {
    if (own === undefined) config.problem(`${tokenKeys[caller]}: required when ${STAGE_KEY}=on`)
    return { stage: "C", accepted: own === undefined ? [] : [own] }
  }
  const accepted = [own, shared].filter((t): t is string => t !== undefined)
  if (accepted.length === 0) {
    config.problem(`${tokenKeys[caller]}: not set (set it, or the shared ${SHARED_TOKEN_KEY} during migration stages A/B)`)
  }
  return { stage: own !== undefined && shared !== undefined ? "B" : "A", accepted }
}

/** The token a caller presents: its own key, or the shared one before stage C. */
export const readCallerToken = (config: ConfigReader, caller: Caller): string | undefined => {
  const stageC = readStageC(config)
  const own = config.string(tokenKeys[caller])
  if (stageC) {
    if (own === undefined) config.problem(`${tokenKeys[caller]}: required when ${STAGE_KEY}=on`)
    return own
  }
  const token = own ?? config.string(SHARED_TOKEN_KEY)
  if (token === undefined) config.problem(`${tokenKeys[caller]}: not set (nor the shared ${SHARED_TOKEN_KEY})`)
  return token
}

export interface LogSettings {
  readonly level: "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "none"
  readonly format: "json" | "pretty"
}

export const readLogSettings = (config: ConfigReader): LogSettings => ({
  level: config.oneOf("LOG_LEVEL", ["trace", "debug", "info", "warn", "error", "fatal", "none"], "info"),
  format: config.oneOf("LOG_FORMAT", ["json", "pretty"], "pretty")
})

export const readDatabaseUrl = (config: ConfigReader): string | undefined =>
  config.url("DATABASE_URL", ["postgres", "postgresql"], { secret: true })

export interface LlmSettings {
  readonly apiKey: string | undefined
  readonly model: string
  readonly baseUrl: string
}

export const readLlmSettings = (config: ConfigReader): LlmSettings => {
  const apiKey = config.string("SVC_RECON_LLM_API_KEY")
  const model = config.string("SVC_RECON_LLM_MODEL")
  const baseUrl = config.url("SVC_RECON_LLM_BASE_URL", ["http", "https"]) ?? "https://api.openai.com/v1"
  if (apiKey !== undefined && model === undefined) {
    config.problem("SVC_RECON_LLM_MODEL: required when SVC_RECON_LLM_API_KEY is set")
  }
  return { apiKey, model: model ?? "", baseUrl }
}

export interface ReconSettings {
  readonly port: number
  readonly tokens: TokenPolicy
  readonly llm: LlmSettings
  readonly pushPublicUrl: string
}

export const readReconSettings = (config: ConfigReader): ReconSettings => {
  const pushPort = config.port("SVC_PUSH_PORT", 8019)
  return {
    port: config.port("SVC_RECON_PORT", 8017),
    tokens: readTokenPolicy(config, "admin"),
    llm: readLlmSettings(config),
    // Where phones reach the worker's push listener; the webhook_url of a registration starts with it.
    pushPublicUrl: (config.url("SVC_PUSH_PUBLIC_URL", ["http", "https"]) ?? `http://127.0.0.1:${pushPort}`).replace(/\/+$/, "")
  }
}

export interface ChatbotSettings {
  readonly enabled: boolean
  /** The bot token; a secret (it is part of every Bot API URL), never logged. */
  readonly token: string | undefined
  readonly apiUrl: string
  /** Chats whose text messages are ingested; others are skipped. */
  readonly chatIds: ReadonlyArray<string>
}

export const readChatbotSettings = (config: ConfigReader): ChatbotSettings => {
  const flag = config.oneOf("SVC_RECON_CHATBOT_ENABLED", ["on", "off", "true", "false", "1", "0"], "off")
  const enabled = flag === "on" || flag === "true" || flag === "1"
  const token = config.string("SVC_RECON_CHATBOT_TOKEN")
  const apiUrl = (config.url("SVC_RECON_CHATBOT_API_URL", ["http", "https"]) ?? "https://api.telegram.org").replace(/\/+$/, "")
  const rawIds = config.string("SVC_RECON_CHATBOT_CHAT_IDS")
  const chatIds = rawIds === undefined ? [] : rawIds.split(",").map((id) => id.trim()).filter((id) => id !== "")
  for (const id of chatIds) {
    // Updates carry the numeric chat id, so that is what is compared.
    if (!/^-?\d+$/.test(id)) config.problem(`SVC_RECON_CHATBOT_CHAT_IDS: "${id}" is not a numeric chat id`)
  }
  if (enabled && token === undefined) config.problem("SVC_RECON_CHATBOT_TOKEN: required when SVC_RECON_CHATBOT_ENABLED is on")
  if (enabled && chatIds.length === 0) config.problem("SVC_RECON_CHATBOT_CHAT_IDS: required when SVC_RECON_CHATBOT_ENABLED is on (comma-separated chat ids)")
  return { enabled, token, apiUrl, chatIds }
}

export interface WorkerSettings {
  readonly port: number
  readonly heartbeatFile: string
  readonly chatbot: ChatbotSettings
  /** Base URLs of wallet_service and admin_service (no trailing slash). */
  readonly walletUrl: string
  readonly adminUrl: string
  /** The recon caller's token the worker presents to both (its own key, or the shared one before stage C). */
  readonly callerToken: Redacted.Redacted<string> | undefined
}

/**
 * WALLET_SERVICE_URL and ADMIN_SERVICE_URL default to the services on this host at their ports
 * (SVC_WALLET_PORT, SVC_ADMIN_PORT: what `all` and a one-host deployment run); set them when the
 * services run elsewhere.
 */
export const readWorkerSettings = (config: ConfigReader): WorkerSettings => {
  const local = (key: string, portKey: string, port: number) =>
    (config.url(key, ["http", "https"]) ?? `http://127.0.0.1:${config.port(portKey, port)}`).replace(/\/+$/, "")
  const token = readCallerToken(config, "recon")
  return {
    port: config.port("SVC_PUSH_PORT", 8019),
    heartbeatFile: config.string("SVC_WORKER_HEARTBEAT_FILE") ?? "/tmp/recon-worker.heartbeat",
    chatbot: readChatbotSettings(config),
    walletUrl: local("WALLET_SERVICE_URL", "SVC_WALLET_PORT", 8018),
    adminUrl: local("ADMIN_SERVICE_URL", "SVC_ADMIN_PORT", 8016),
    callerToken: token === undefined ? undefined : Redacted.make(token)
  }
}

export interface WalletSettings {
  readonly port: number
  /** Tokens accepted on /internal/wallet/* (the recon worker's). */
  readonly tokens: TokenPolicy
}

export const readWalletSettings = (config: ConfigReader): WalletSettings => ({
  port: config.port("SVC_WALLET_PORT", 8018),
  tokens: readTokenPolicy(config, "recon")
})

export interface AdminSettings {
  readonly port: number
  /** Tokens accepted on POST /internal/meta/ws/sync (the recon worker's). */
  readonly syncTokens: TokenPolicy
  /** recon_service's base URL and the admin token presented to it. */
  readonly reconUrl: string
  readonly reconToken: string
  /** The worker's push/health port, for the dashboard's loop health. */
  readonly workerHealthUrl: string | undefined
  /** Sign-in attempts per account and per address within 15 minutes. */
  readonly signInLimits: SignInLimitSettings
}

/** `local` fills in the URLs of the services `all` runs in the same process. */
export const readAdminSettings = (config: ConfigReader, local?: { readonly reconPort: number; readonly pushPort: number }): AdminSettings => {
  const reconUrl = config.url("RECON_SERVICE_URL", ["http", "https"]) ??
    (local === undefined ? undefined : `http://127.0.0.1:${local.reconPort}`)
  if (reconUrl === undefined) config.problem("RECON_SERVICE_URL: required (base URL of recon_service, e.g. http://127.0.0.1:8017)")
  const workerHealthUrl = config.url("WORKER_HEALTH_URL", ["http", "https"]) ??
    (local === undefined ? undefined : `http://127.0.0.1:${local.pushPort}`)
  return {
    port: config.port("SVC_ADMIN_PORT", 8016),
    syncTokens: readTokenPolicy(config, "recon"),
    reconUrl: (reconUrl ?? "").replace(/\/+$/, ""),
    reconToken: readCallerToken(config, "admin") ?? "",
    workerHealthUrl: workerHealthUrl?.replace(/\/+$/, ""),
    signInLimits: {
      ...defaultSignInLimits,
      perAccount: config.int("SVC_ADMIN_SIGNIN_MAX_PER_ACCOUNT", defaultSignInLimits.perAccount, 1, 1_000_000),
      perAddress: config.int("SVC_ADMIN_SIGNIN_MAX_PER_ADDRESS", defaultSignInLimits.perAddress, 1, 1_000_000)
    }
  }
}

/**
 * Dev tokens for `all` when none are configured: made at the first start and kept in `file`
 * (mode 0600, beside the embedded database's data), so a token a user exported keeps working
 * after a restart. `file` is absent when tokens were configured.
 */
export const withDevTokens = (env: Env, file: string): { readonly env: Env; readonly generated: Record<string, string>; readonly file?: string } => {
  const has = (key: string) => (env[key] ?? "").trim() !== ""
  // Not in stage C: whoever turned it on configures real per-caller tokens.
  const stageC = STAGE_C_VALUES.includes((env[STAGE_KEY] ?? "").trim().toLowerCase())
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
}

export const BIND_HOST_KEY = "SVC_BIND_HOST"

/**
 * The servers' bind address and connection limits. `all` (a developer's machine) binds loopback
 * by default, the single-service commands (containers) every interface.
 */
export const readHttpSettings = (config: ConfigReader, defaultHost: "loopback" | "all"): HttpSettings => {
  const raw = config.string(BIND_HOST_KEY)
  const valid = raw === undefined || raw === "*" || raw === "localhost" || isIP(raw) !== 0
  if (!valid) config.problem(`${BIND_HOST_KEY}: expected an IP address, "localhost" or "*" (all interfaces), got "${raw}"`)
  const host = raw === undefined || !valid ? (defaultHost === "loopback" ? "127.0.0.1" : undefined) : raw === "*" ? undefined : raw
  const int = config.int.bind(config)
  const headersTimeoutMs = int("SVC_HTTP_HEADERS_TIMEOUT_MS", 10_000, 10, 600_000)
  const requestTimeoutMs = int("SVC_HTTP_REQUEST_TIMEOUT_MS", 30_000, 10, 3_600_000)
  if (headersTimeoutMs > requestTimeoutMs) {
    config.problem("SVC_HTTP_HEADERS_TIMEOUT_MS: must not exceed SVC_HTTP_REQUEST_TIMEOUT_MS")
  }
  return {
    host,
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: int("SVC_HTTP_KEEPALIVE_TIMEOUT_MS", 5_000, 10, 600_000),
    maxConnections: int("SVC_HTTP_MAX_CONNECTIONS", 1_024, 2, 1_000_000)
  }
}
