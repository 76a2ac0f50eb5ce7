// What recon_worker runs with, as its loops read it (the `Worker` service of Loop.ts): the shape
// only. worker/Settings.ts reads it from the environment; the type lives here so that the loops
// need nothing of src/worker/ (the worker imports the loops, never the reverse).
import type { Redacted } from "effect"

export interface ChatbotSettings {
  readonly enabled: boolean
  /** The bot token; a secret (it is part of every Bot API URL), never logged. */
  readonly token: Redacted.Redacted<string> | undefined
  readonly apiUrl: string
  /** Chats whose text messages are ingested; others are skipped. */
  readonly chatIds: ReadonlyArray<string>
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
  /** SVC_DEPOSIT_TTL_H: a pending deposit older than this many hours is expired by order_match_loop. */
  readonly depositTtlHours: number
  /** SVC_BALANCE_GAP_GRACE_S (default 120): a balance gap is announced (balance.gap) only once open this long. */
  readonly balanceGapGraceS?: number | undefined
}
