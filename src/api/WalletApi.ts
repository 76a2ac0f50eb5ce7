// The wallet_service API of DESIGN section 7 as a pure HttpApi definition: served by WalletServer,
// and the source of the worker's typed WalletClient. Every route takes the recon caller's token.
// Beyond DESIGN: /deposit/agree_batch, several approvals in one transaction (docs/API.md).
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { CallerAuth } from "./CallerAuth.ts"
import { ErrorEnvelopes, Ok } from "./Envelope.ts"

const Id = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

export const AgreeResult = Schema.Struct({
  deposit_id: Schema.Int,
  status: Schema.Literal("approved"),
  /** True when the deposit was approved before (this call credited nothing). */
  replayed: Schema.Boolean
})
export type AgreeResult = typeof AgreeResult.Type

/** Approvals in one agree_batch call at most. */
export const AGREE_BATCH_MAX = 32

export const AgreeItem = Schema.Struct({ deposit_id: Id, sms_id: Schema.optionalKey(Schema.NullOr(Id)) })

/** One item's answer: what agree would have answered it (200 approved or replayed, 409, 404). */
export const AgreeItemResult = Schema.Struct({
  deposit_id: Schema.Int,
  outcome: Schema.Literals(["approved", "replayed", "conflict", "not_found"]),
  /** Why, for a conflict or an unknown deposit; null otherwise. */
  detail: Schema.NullOr(Schema.String)
})
export type AgreeItemResult = typeof AgreeItemResult.Type

export const Balance = Schema.Struct({
  player_id: Schema.Int,
  /** A decimal string ("0" for a player never credited). */
  balance: Schema.String
})
export type Balance = typeof Balance.Type

export class WalletGroup extends HttpApiGroup.make("wallet").add(
  HttpApiEndpoint.post("agree", "/deposit/agree", {
    payload: Schema.Struct({ deposit_id: Id, sms_id: Schema.optionalKey(Schema.NullOr(Id)) }),
    success: Ok(AgreeResult),
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.post("agreeBatch", "/deposit/agree_batch", {
    payload: Schema.Struct({ items: Schema.Array(AgreeItem).check(Schema.isMinLength(1), Schema.isMaxLength(AGREE_BATCH_MAX)) }),
    success: Ok(Schema.Struct({ items: Schema.Array(AgreeItemResult) })),
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.get("balance", "/balance", {
    query: { player_id: Id },
    success: Ok(Balance),
    error: ErrorEnvelopes
  })
) {}

export class WalletApi extends HttpApi.make("wallet")
  .add(WalletGroup)
  .middleware(CallerAuth)
  .prefix("/internal/wallet")
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "wallet_service",
    description: "The final writer of money. Every route takes the recon worker's X-Internal-Service-Token."
  }))
{}
