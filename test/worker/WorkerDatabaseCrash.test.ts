// PostgreSQL crashes under a running worker process (an immediate shutdown, as a power cut: no
// checkpoint, connections cut, the server recovers from its WAL) while SMS arrive and are parsed,
// matched and credited: after recovery every acknowledged SMS is stored once, approved, and
// credited once to its own deposit. On the run's outage cluster (test/support/outage.ts), a
// durable server, which it crashes.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { depositSms, trustedPhone } from "../support/allProcess.ts"
import { runSql } from "../support/database.ts"
import { addDeposit, addPlayer, credits, smsStatuses } from "../support/match.ts"
import { type OutageCluster, takeOutageCluster } from "../support/outage.ts"
import { waitForUrl, workerProcess } from "../support/process.ts"
import { RECON_TOKEN, serve } from "../support/recon.ts"
import { eventually, realWait } from "../support/time.ts"
import { startWallet } from "../support/wallet.ts"
import { pushForwarder } from "../support/worker.ts"

let cluster: OutageCluster

beforeAll(async () => {
  cluster = await takeOutageCluster("crash")
})
afterAll(async () => {
  await cluster.release()
})

const PAYER = "정약용"
const SENDER = "15778000"
const N = 40
const amount = (i: number) => 10_000 + i * 100

describe("PostgreSQL crashes", () => {
  it.live("mid-flow, SMS acknowledged and being parsed, matched and credited: after recovery each is stored once and credited once", () =>
    Effect.gen(function*() {
      const db = cluster.url
      yield* Effect.promise(() => trustedPhone(db, "crash-1", SENDER))
      const player = yield* Effect.promise(() => addPlayer(db, PAYER))
      const deposits = yield* Effect.forEach(Array.from({ length: N }, (_, i) => i), (i) => Effect.promise(() => addDeposit(db, player, PAYER, String(amount(i)))))
      const wallet = yield* serve(startWallet(db))
      const worker = yield* workerProcess(db, wallet.url, RECON_TOKEN)
      assert.isTrue(yield* Effect.promise(() => waitForUrl(`${worker.base}/health/ready`, 60_000)), worker.output())

      const stamp = Date.now() - 60_000
      let acknowledged = 0
      /** One SMS pushed until acknowledged, as a forwarder does (refused while the server is away). */
      const deliver = (i: number) =>
        Effect.gen(function*() {
          for (;;) {
            const answer = yield* Effect.promise(() =>
              pushForwarder(worker.base, "crash-1", { from: SENDER, sms: depositSms(PAYER, amount(i)), timestamp: stamp + i }).catch(() => undefined)
            )
            if (answer?.http === 200) return void acknowledged++
            yield* realWait(200)
          }
        })
      const phones = yield* Effect.forkChild(Effect.forEach(Array.from({ length: N }, (_, i) => i), deliver, { concurrency: 4 }))
      // Crashed while SMS arrive and the loops parse, match and credit those acknowledged.
      yield* eventually("a quarter acknowledged", Effect.sync(() => acknowledged >= N / 4), 30_000)
      yield* Effect.promise(() => cluster.crash())
      yield* Effect.promise(() => cluster.start())
      yield* Fiber.join(phones)

      yield* eventually("every SMS approved", Effect.promise(async () => (await smsStatuses(db)).approved === N), 90_000)
      // A delivery the crash cut off after its commit (no answer, or 503: the worker could not read
      // the result) is sent again by the phone and stored as a duplicate of the first: nothing else.
      const { approved, duplicate = 0, ...others } = yield* Effect.promise(() => smsStatuses(db))
      assert.deepStrictEqual([approved, others], [N, {}], "each stored and approved, nothing left half-way")
      const copies = yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.shooter_sms AS c JOIN recon.shooter_sms AS o ON o.id = c.duplicate_of
          WHERE c.status = 'duplicate' AND o.status = 'approved' AND o.normalized_body = c.normalized_body`
      })))
      assert.strictEqual(Number(copies[0]!.n), duplicate, "every copy names its approved original")
      const c = yield* Effect.promise(() => credits(db))
      assert.deepStrictEqual([c.ledgerRows, c.depositsCredited, c.creditedTwice, c.approvedDeposits, c.wrongSms], [N, N, 0, N, 0])
      assert.strictEqual(c.balanceTotal, c.ledgerTotal)
      const total = Array.from({ length: N }, (_, i) => amount(i)).reduce((a, b) => a + b, 0)
      assert.strictEqual(Number(c.ledgerTotal), total)
      // Each deposit credited with an SMS of its own amount.
      const pairs = yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.deposit AS d JOIN recon.shooter_sms AS s ON s.id = d.sms_id
          WHERE d.id IN ${sql.in(deposits)} AND s.amount = d.amount AND s.deposit_id = d.id`
      })))
      assert.strictEqual(Number(pairs[0]!.n), N)
    }), 180_000)
})
