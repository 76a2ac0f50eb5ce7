// admin_service's own settings (DESIGN section 3): its port, the tokens of the sync route, where
// recon_service and the worker's health are, the sign-in limits, the console's money controls and
// the alert chat.
import { Effect, Option, type Redacted, Result } from "effect"
import { readBotApiUrl } from "../config/AppConfig.ts"
import { all, int, key, port, problem, read, secret, type Settings, stripSlash, url } from "../config/Keys.ts"
import { readCallerToken, readTokenPolicy, type TokenPolicy } from "../config/Tokens.ts"
import { parseAmount } from "../domain/Money.ts"
import { defaultSignInLimits, type SignInLimitSettings } from "./SignInLimits.ts"

/** The operator console's money controls and waiting time (DESIGN section 11). */
export interface ReviewSettings {
  /** Approvals and assignments above this amount (a decimal string) need a second operator; undefined: off. */
  readonly secondApprovalOver: string | undefined
  /** An SMS awaiting a person longer than this is a `review_waiting` alert. */
  readonly waitAlertS: number
  /** A balance gap alerts once it has stayed open this long (SVC_BALANCE_GAP_GRACE_S; a message a moment late never pages anyone). */
  readonly balanceGapGraceS: number
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
  waitAlertS: int("SVC_REVIEW_WAIT_ALERT_S", 600, 1, 30 * 86_400),
  balanceGapGraceS: int("SVC_BALANCE_GAP_GRACE_S", 120, 0, 7 * 86_400)
})

/** SVC_ALERT_TELEGRAM_CHAT_ID with the chat-bot's token and Bot API URL; the token is required once a chat is set. */
export const readAlertChatSettings: Settings<AlertChatSettings | undefined> = all({
  chatId: read(key("SVC_ALERT_TELEGRAM_CHAT_ID", parseChatId)),
  token: secret("SVC_RECON_CHATBOT_TOKEN"),
  apiUrl: readBotApiUrl
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
