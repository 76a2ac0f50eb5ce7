// wallet_service while PostgreSQL is stopped: agree and balance answer the 503 envelope (the
// worker's client sees Unavailable, safe to send again), nothing is written, and once the
// server is back the same call approves and credits once, without a restart. On the run's outage
// cluster (test/support/outage.ts), which it may stop.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { WalletClient } from "../../src/clients/WalletClient.ts"
import { type OutageCluster, takeOutageCluster } from "../support/outage.ts"
import { RECON_TOKEN, type Running } from "../support/recon.ts"
import { agree, balance, createDeposit, startWallet, walletState } from "../support/wallet.ts"
import { eventuallyAsync } from "../support/time.ts"

let cluster: OutageCluster
let db: string
let wallet: Running

beforeAll(async () => {
  cluster = await takeOutageCluster("wallet_down")
  db = cluster.url
  wallet = await startWallet(db)
})
afterAll(async () => {
  await wallet.close()
  await cluster.release()
})

const agreeThroughClient = (depositId: number, smsId: number) =>
  Effect.runPromise(Effect.gen(function*() {
    return yield* (yield* WalletClient).agree({ depositId, smsId })
  }).pipe(Effect.provide(WalletClient.layer({ baseUrl: wallet.url, token: Redacted.make(RECON_TOKEN) }).pipe(Layer.provide(FetchHttpClient.layer)))))

describe("wallet_service and the database going away", () => {
  it("503 while down, nothing written; the same call approves once it is back", async () => {
    const { depositId, playerId } = await createDeposit(db, "Down Kim", "4000")
    await cluster.stop()
    try {
      const answer = await agree(wallet.url, { deposit_id: depositId, sms_id: 9 })
      assert.deepStrictEqual([answer.http, answer.body], [503, { status: 503, msg: "unavailable", data: { detail: "the database is unreachable", issues: [] } }])
      assert.strictEqual((await balance(wallet.url, playerId)).http, 503)
      assert.deepStrictEqual(await agreeThroughClient(depositId, 9), { _tag: "Unavailable", reason: "wallet_service answered 503 unavailable" })
    } finally {
      await cluster.start()
    }
    assert.deepStrictEqual((await walletState(db, depositId)).ledger, [])
    // Unavailable until the pool has reconnected, on its own schedule.
    let outcome: Awaited<ReturnType<typeof agreeThroughClient>> | undefined
    await eventuallyAsync("an answer other than unavailable", async () => (outcome = await agreeThroughClient(depositId, 9))._tag !== "Unavailable", {
      everyMs: 200,
      detail: () => JSON.stringify(outcome)
    })
    assert.deepStrictEqual(outcome, { _tag: "Approved", depositId })
    const state = await walletState(db, depositId)
    assert.deepStrictEqual([state.status, state.ledger.length, state.balance], ["approved", 1, "4000.00"])
  })
})
