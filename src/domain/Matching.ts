// The matching decision of DESIGN section 6 as plain functions: one parsed SMS, the pending
// deposits with its name key and amount, the players sharing the name → approve one deposit,
// send to manual review, or leave unmatched; and what is recorded in the SMS's match detail.
import type { AgreeOutcome } from "../clients/WalletClient.ts"

export interface Candidate {
  readonly deposit_id: number
  readonly player_id: number
  readonly from_bank_owner: string
  readonly amount: string
}

export interface MatchInput {
  readonly payerName: string | null
  readonly amount: string | null
  /** recon.name_key(payer_name): NFC, white space removed. */
  readonly key: string | null
  /** Pending deposits with that key and amount that no other SMS is being approved against. */
  readonly candidates: ReadonlyArray<Candidate>
  /** Players whose name has that key (at most a few, for the record), and how many there are. */
  readonly players: ReadonlyArray<number>
  readonly playerCount: number
}

export type Decision =
  | { readonly _tag: "Approve"; readonly depositId: number; readonly detail: MatchDetail }
  | { readonly _tag: "Review"; readonly depositIds: ReadonlyArray<number>; readonly detail: MatchDetail }
  | { readonly _tag: "Unmatched"; readonly detail: MatchDetail }

/**
 * The `match` of sms/get: what was looked for, what was found, what was decided and why, and the
 * wallet's answer. Once the wallet has answered, MatchStore sets `decision` to what happened last
 * (`approved`, or `manual_review` with the wallet's reason).
 */
export interface MatchDetail {
  readonly decision: "approving" | "manual_review" | "unmatched"
  readonly reason: string
  readonly name_key: string | null
  readonly amount: string | null
  readonly candidates: ReadonlyArray<Candidate>
  readonly players: ReadonlyArray<number>
  readonly player_count: number
  readonly decided_at: string
}

export const decide = (input: MatchInput, decidedAt: string): Decision => {
  const detail = (decision: MatchDetail["decision"], reason: string): MatchDetail => ({
    decision,
    reason,
    name_key: input.key,
    amount: input.amount,
    candidates: input.candidates,
    players: input.players,
    player_count: input.playerCount,
    decided_at: decidedAt
  })
  if (input.key === null || input.key === "" || input.amount === null) {
    return { _tag: "Unmatched", detail: detail("unmatched", "the SMS has no payer name or amount to match on") }
  }
  const n = input.candidates.length
  if (n === 0) return { _tag: "Unmatched", detail: detail("unmatched", "no pending deposit with this name and amount") }
  if (input.playerCount > 1) {
    return {
      _tag: "Review",
      depositIds: input.candidates.map((c) => c.deposit_id),
      detail: detail("manual_review", `${input.playerCount} players share the name`)
    }
  }
  if (n > 1) {
    return {
      _tag: "Review",
      depositIds: input.candidates.map((c) => c.deposit_id),
      detail: detail("manual_review", `${n} pending deposits match the name and amount`)
    }
  }
  return { _tag: "Approve", depositId: input.candidates[0]!.deposit_id, detail: detail("approving", "exactly one pending deposit matches") }
}

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
