// wallet_service (DESIGN section 7): the wallet API behind the recon caller's token and the public
// GET /health, on one port, with the envelope, middleware and error mapping of recon_service.
import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { HttpSettings, WalletSettings } from "../config/AppConfig.ts"
import { WalletStore } from "../db/WalletStore.ts"
import { ok } from "./Envelope.ts"
import { EnvelopeMiddleware } from "./EnvelopeMiddleware.ts"
import { answered } from "./Failures.ts"
import { nodeServer } from "./NodeServer.ts"
import { HealthRoute } from "./HealthRoute.ts"
import { CallerAuthLive } from "./TokenAuth.ts"
import { WalletApi } from "./WalletApi.ts"

const walletHandlers = HttpApiBuilder.group(WalletApi, "wallet", Effect.fn(function*(handlers) {
  const store = yield* WalletStore
  return handlers
    .handle("agree", ({ payload }) =>
      store.agree(payload.deposit_id, payload.sms_id ?? null).pipe(
        Effect.map(({ depositId, replayed }) => ok({ deposit_id: depositId, status: "approved" as const, replayed })),
        answered
      ))
    .handle("agreeBatch", ({ payload }) =>
      store.agreeBatch(payload.items.map((item) => ({ depositId: item.deposit_id, smsId: item.sms_id ?? null }))).pipe(
        Effect.map((agreed) => ok({ items: agreed.map((a) => ({ deposit_id: a.depositId, outcome: a.outcome, detail: a.detail })) })),
        answered
      ))
    .handle("balance", ({ query }) =>
      store.balance(query.player_id).pipe(
        Effect.map((balance) => ok({ player_id: query.player_id, balance })),
        answered
      ))
}))

/** The routes of wallet_service, given a SqlClient (tests serve them on port 0). */
export const walletRoutes = (settings: WalletSettings) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(WalletApi).pipe(
      Layer.provide(walletHandlers),
      Layer.provide(CallerAuthLive(settings.tokens.accepted))
    ),
    HealthRoute,
    EnvelopeMiddleware
  ).pipe(Layer.provide(WalletStore.layer))

export const WalletServerLive = (settings: WalletSettings, http: HttpSettings) =>
  HttpRouter.serve(walletRoutes(settings)).pipe(
    Layer.provide(nodeServer(settings.port, http))
  )
