// What order_match_loop makes of wallet_service's answers (DESIGN section 6), as plain functions:
// the answer recorded under the SMS's `match.wallet`, the status it leads to, why a person is
// needed, and when to send again. The decision itself (one candidate, several, none) is the
// database's: recon.match_pass (src/db/sql/match_pass.sql), which writes the rest of `match`.
/** What a call to wallet_service's `deposit/agree` came to (the worker's wallet client answers it). */
export type AgreeOutcome =
  | { readonly _tag: "Approved"; readonly depositId: number }
  | { readonly _tag: "Replayed"; readonly depositId: number }
  /** HTTP 409: the SMS funds another deposit, or the deposit is not pending (nor approved with this SMS). */
  | { readonly _tag: "Conflict"; readonly detail: string }
  /** HTTP 404: no such deposit. */
  | { readonly _tag: "NotFound"; readonly detail: string }
  /** No decision was made, or none is known: timeout, refused, 5xx, 401, an unexpected answer. Safe to send again. */
  | { readonly _tag: "Unavailable"; readonly reason: string; readonly timedOut?: true }

/** The wallet's answer as recorded under `match.wallet`. */
export interface WalletAnswer {
  readonly answer: "approved" | "replayed" | "conflict" | "not_found" | "unavailable"
  readonly deposit_id: number
  readonly detail?: string
  readonly attempts: number
  readonly at: string
}

export const walletAnswer = (outcome: AgreeOutcome, depositId: number, attempts: number, at: string): WalletAnswer => {
  switch (outcome._tag) {
    case "Approved":
      return { answer: "approved", deposit_id: depositId, attempts, at }
    case "Replayed":
      return { answer: "replayed", deposit_id: depositId, attempts, at }
    case "Conflict":
      return { answer: "conflict", deposit_id: depositId, detail: outcome.detail, attempts, at }
    case "NotFound":
      return { answer: "not_found", deposit_id: depositId, detail: outcome.detail, attempts, at }
    case "Unavailable":
      return { answer: "unavailable", deposit_id: depositId, detail: outcome.reason, attempts, at }
  }
}

/** The SMS status a wallet answer leads to; `approving` means send again later. */
export const statusAfter = (outcome: AgreeOutcome): "approved" | "manual_review" | "approving" =>
  outcome._tag === "Approved" || outcome._tag === "Replayed"
    ? "approved"
    : outcome._tag === "Unavailable"
    ? "approving"
    : "manual_review"

/** Why a wallet answer sends the SMS to a person. */
export const reviewReason = (outcome: AgreeOutcome): string | undefined =>
  outcome._tag === "Conflict"
    ? `wallet_service refused the approval (409): ${outcome.detail}`
    : outcome._tag === "NotFound"
    ? `wallet_service does not know the deposit (404): ${outcome.detail}`
    : undefined

/**
 * Delay before an approving SMS is sent again after the wallet was unavailable: 1 s, 2 s, 4 s …
 * capped at 60 s, times `jitter` (0.8–1.2), so a recovered wallet is not hit by every SMS at once.
 */
export const walletBackoffMillis = (attempts: number, jitter: number): number =>
  Math.round(Math.min(1000 * 2 ** Math.max(0, attempts - 1), 60_000) * jitter)
