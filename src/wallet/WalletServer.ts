// wallet_service (DESIGN section 7): the wallet API behind the recon caller's token and the public
// GET /health, on one port, with the envelope, middleware and error mapping of recon_service.
import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { HttpSettings } from "../config/AppConfig.ts"
import type { WalletSettings } from "./Settings.ts"
import { WalletStore } from "./WalletStore.ts"
import { serveObserved } from "../http/ObservedServer.ts"
import { ok } from "../api/Envelope.ts"
import { EnvelopeMiddleware } from "../http/EnvelopeMiddleware.ts"
import { answered } from "./Failures.ts"
import { nodeServer } from "../http/NodeServer.ts"
import { HealthRoute } from "../http/HealthRoute.ts"
import { CallerAuthLive } from "../http/TokenAuth.ts"
import { WalletApi } from "../api/WalletApi.ts"

const walletHandlers = HttpApiBuilder.group(WalletApi, "wallet", Effect.fn(function*(handlers) {
  const store = yield* WalletStore
  return handlers
    .handle("agree", ({ payload }) => {
      const smsId = payload.sms_id ?? null
      return store.agree(payload.deposit_id, smsId).pipe(
        Effect.map(({ depositId, replayed }) => ok({ deposit_id: depositId, status: "approved" as const, replayed })),
        answered,
        // The transaction, in the trace of the SMS that funds the deposit (the worker's call carries it).
        Effect.withSpan("wallet.agree.transaction", { attributes: { "deposit.id": payload.deposit_id, ...(smsId === null ? {} : { "sms.id": smsId }) } }),
        Effect.annotateLogs({ deposit_id: payload.deposit_id, ...(smsId === null ? {} : { sms_id: smsId }) })
      )
    })
    .handle("agreeBatch", ({ payload }) =>
      store.agreeBatch(payload.items.map((item) => ({ depositId: item.deposit_id, smsId: item.sms_id ?? null }))).pipe(
        Effect.map((agreed) => ok({ items: agreed.map((a) => ({ deposit_id: a.depositId, outcome: a.outcome, detail: a.detail })) })),
        answered,
        Effect.withSpan("wallet.agree_batch.transaction", { attributes: { "deposit.count": payload.items.length } })
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
      Layer.provide(CallerAuthLive(settings.tokens))
    ),
    HealthRoute,
    EnvelopeMiddleware
  ).pipe(Layer.provide(WalletStore.layer))

export const WalletServerLive = (settings: WalletSettings, http: HttpSettings) =>
  serveObserved("wallet_service", walletRoutes(settings), http).pipe(
    Layer.provide(nodeServer(settings.port, http))
  )
