// wallet_service on loopback for tests: the real routes on a real HTTP server (port 0) over a
// real database; players and deposits arranged as the platform writes them; what the wallet wrote.
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type Env, readSync } from "../../src/config/Keys.ts"
import { readWalletSettings } from "../../src/wallet/Settings.ts"
import { DepositStore } from "../../src/db/DepositStore.ts"
import { walletRoutes } from "../../src/wallet/WalletServer.ts"
import { runSql, sqlLayer } from "./database.ts"
import { httpSettings, post, RECON_TOKEN, serveLayer } from "./recon.ts"

/** wallet_service on a database URL with the given environment (tokens; default: the recon token). */
export const startWallet = (databaseUrl: string, env: Env = { SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN }, sql: Layer.Layer<SqlClient.SqlClient, unknown> = sqlLayer(databaseUrl)) => {
  const settings = readSync(env, readWalletSettings)
  return serveLayer(walletRoutes(settings).pipe(Layer.provide(sql), Layer.orDie), httpSettings(env))
}

/** POST /internal/wallet/deposit/agree with the recon token (or `token`). */
export const agree = (base: string, body: unknown, options: Parameters<typeof post>[3] = {}) =>
  post(base, "/internal/wallet/deposit/agree", body, { token: RECON_TOKEN, ...options })

/** GET /internal/wallet/balance?player_id=… with the recon token (or `token`; null: none). */
export const balance = async (base: string, playerId: string | number, token: string | null = RECON_TOKEN) => {
  const response = await fetch(`${base}/internal/wallet/balance?player_id=${playerId}`, {
    headers: token === null ? {} : { "x-internal-service-token": token }
  })
  return { http: response.status, body: await response.json() as any }
}

/** A pending deposit as `deposit create` makes it: answers its id and its player's. */
export const createDeposit = (databaseUrl: string, player: string, amount: string, owner?: string) =>
  runSql(databaseUrl, Effect.gen(function*() {
    const store = yield* DepositStore
    return yield* store.create({ player, amount, owner })
  }).pipe(Effect.provide(DepositStore.layer), Effect.orDie))

/** Runs SQL on the database (errors as a rejected promise, for tests that expect the database to refuse). */
export const query = <A>(databaseUrl: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  runSql(databaseUrl, Effect.gen(function*() {
    return yield* f(yield* SqlClient.SqlClient)
  }) as Effect.Effect<A, unknown, SqlClient.SqlClient>)

/** The wallet's state of a deposit: its row, its ledger rows, its player's balance row. */
export const walletState = (databaseUrl: string, depositId: number) =>
  query(databaseUrl, (sql) => Effect.gen(function*() {
    const [deposit] = yield* sql<{ status: string; sms_id: bigint | null; approved_at: Date | null; player_id: bigint }>`
      SELECT status, sms_id, approved_at, player_id FROM recon.deposit WHERE id = ${depositId}`
    const ledger = yield* sql<{ sms_id: bigint | null; amount: string }>`
      SELECT sms_id, amount::text AS amount FROM wallet.ledger WHERE deposit_id = ${depositId}`
    const [balanceRow] = yield* sql<{ balance: string }>`SELECT balance::text AS balance FROM wallet.balance WHERE player_id = ${deposit!.player_id}`
    return {
      status: deposit!.status,
      smsId: deposit!.sms_id === null ? null : Number(deposit!.sms_id),
      approvedAt: deposit!.approved_at,
      ledger: ledger.map((row) => ({ smsId: row.sms_id === null ? null : Number(row.sms_id), amount: row.amount })),
      balance: balanceRow?.balance ?? null
    }
  }))
