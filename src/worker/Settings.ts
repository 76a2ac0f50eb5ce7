// recon_worker's own settings (DESIGN section 3): its push/health port and heartbeat file, the
// Telegram chat-bot it polls, where wallet_service and admin_service are and the token it presents
// to them, and how long a pending deposit waits.
import { Effect, Option } from "effect"
import { readBotApiUrl } from "../config/AppConfig.ts"
import { all, flagConfig, int, orElse, port, problem, problems, read, secret, type Settings, string, stripSlash, url } from "../config/Keys.ts"
import { readCallerToken } from "../config/Tokens.ts"
import type { ChatbotSettings, WorkerSettings } from "../loops/Settings.ts"

/** Comma-separated numeric chat ids (updates carry the numeric chat id, so that is what is compared). */
const chatIds: Settings<ReadonlyArray<string>> = string("SVC_RECON_CHATBOT_CHAT_IDS").pipe(Effect.flatMap((raw) => {
  const ids = Option.match(raw, { onNone: () => [], onSome: (s) => s.split(",").map((id) => id.trim()).filter((id) => id !== "") })
  const bad = ids.filter((id) => !/^-?\d+$/.test(id))
  return bad.length === 0
    ? Effect.succeed(ids)
    : Effect.fail(problems(bad.map((id) => `SVC_RECON_CHATBOT_CHAT_IDS: "${id}" is not a numeric chat id`)))
}))

export const readChatbotSettings: Settings<ChatbotSettings> = all({
  enabled: read(flagConfig("SVC_RECON_CHATBOT_ENABLED")),
  token: secret("SVC_RECON_CHATBOT_TOKEN"),
  apiUrl: readBotApiUrl,
  chatIds
}).pipe(Effect.flatMap(({ apiUrl, chatIds, enabled, token }) =>
  all({
    token: enabled && Option.isNone(token) ? problem("SVC_RECON_CHATBOT_TOKEN: required when SVC_RECON_CHATBOT_ENABLED is on") : Effect.void,
    chatIds: enabled && chatIds.length === 0
      ? problem("SVC_RECON_CHATBOT_CHAT_IDS: required when SVC_RECON_CHATBOT_ENABLED is on (comma-separated chat ids)")
      : Effect.void
  }).pipe(Effect.as({ enabled, token: Option.getOrUndefined(token), apiUrl, chatIds }))
))

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
  depositTtlHours: int("SVC_DEPOSIT_TTL_H", 24, 1, 24 * 366),
  balanceGapGraceS: int("SVC_BALANCE_GAP_GRACE_S", 120, 0, 7 * 86_400)
})
