// Balance continuity through the real push webhook (issue 34): six messages of one KB account
// within one minute, the fifth withheld and pushed after the sixth; the worker's parse_loop reads
// them and its placer places them by their balances. One gap opens and closes, no other opens,
// the account's last balance is the sixth's, and nothing is announced (it closed within the grace
// period): no balance.gap event, no alert. A message that never arrives is announced once past
// the grace period, by a parse_loop pass.
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ParseLoop } from "../../src/loops/ParseLoop.ts"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { recon, startRecon } from "../support/recon.ts"
import { eventually } from "../support/time.ts"
import { buildWorker, pushForwarder, register, servePush } from "../support/worker.ts"

const account = "123456**789"
/** KB's layout (the corpus's `[KB]11/02 14:05\n123456**789\n홍길동\n입금\n50,000\n잔액1,234,567`), all in the minute 14:05. */
const kb = (word: "입금" | "출금", name: string, amount: number, balance: number) =>
  `[Web발신]\n[KB]11/02 14:05\n${account}\n${name}\n${word}\n${amount.toLocaleString("en-US")}\n잔액${balance.toLocaleString("en-US")}`

/** Kicks parse_loop and waits for a pass of it that ended after the kick (its last success moves on). */
const passAfterKick = (worker: Effect.Success<ReturnType<typeof buildWorker>>) =>
  Effect.gen(function*() {
    const lastSuccess = Effect.map(worker.registry.snapshot, (snapshot) =>
      Option.match(snapshot.loops.find((loop) => loop.name === "parse_loop")!.lastSuccessAt, { onNone: () => -1, onSome: DateTime.toEpochMillis }))
    const before = yield* lastSuccess
    yield* worker.kicks.kick("parse_loop")
    yield* eventually("a parse_loop pass after the kick", Effect.map(lastSuccess, (at) => at > before), 30_000)
  })

describe("balance continuity through the push webhook", () => {
  it.live("six messages of one KB account in one minute, the fifth pushed after the sixth: one gap closed, none opened, the last balance the sixth's", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("balance-webhook"))
      yield* Effect.promise(() => register(db, { deviceId: "phone-1", format: "smsforwarder", trusted: true }))
      const query = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
        Effect.promise(() => runSql(db, Effect.flatMap(Effect.service(SqlClient.SqlClient), f).pipe(Effect.orDie)))
      yield* query((sql) => sql`INSERT INTO recon.shooter_phone (phone) VALUES ('16449999')`)
      // A merchant's webhook subscribed to balance.gap: the outbox writes an event only when a gap is announced.
      yield* query((sql) => sql`INSERT INTO recon.webhook (url, secret, events) VALUES ('http://127.0.0.1:9/hook', 'a-secret-of-16-chars', '{balance.gap}')`)
      const server = yield* Effect.acquireRelease(Effect.promise(() => startRecon(db)), (s) => Effect.promise(() => s.close()))
      const heartbeat = join(mkdtempSync(join(tmpdir(), "recon-balance-")), "worker.heartbeat")
      const worker = yield* buildWorker(db, heartbeat, { loops: [ParseLoop] })
      const push = yield* servePush(worker)

      let balance = 4_000_000
      const messages = ([["입금", "김민준", 50_000], ["출금", "쿠팡", 12_000], ["입금", "이서연", 300_000], ["출금", "파우PC", 2_500], ["입금", "신동수", 10_000], ["입금", "박지훈", 6_000]] as const)
        .map(([word, name, amount]) => {
          balance += word === "입금" ? amount : -amount
          return { text: kb(word, name, amount, balance), balance }
        })
      const start = Date.parse("2026-11-02T05:05:05Z")
      const send = (i: number, at: number) =>
        Effect.promise(() => pushForwarder(push, "phone-1", { from: "16449999", sms: messages[i]!.text, timestamp: at })).pipe(
          Effect.map((answer) => assert.strictEqual(answer.http, 200, JSON.stringify(answer.body)))
        )
      const smsIds = () => query((sql) => sql<{ id: bigint; body: string }>`SELECT id, body FROM recon.shooter_sms ORDER BY id`)
      const gaps = () => query((sql) => sql<{ after_sms_id: bigint; before_sms_id: bigint; unexplained: string; closed_by_sms_id: bigint | null }>`
        SELECT g.after_sms_id, g.before_sms_id, g.unexplained::text AS unexplained, g.closed_by_sms_id
        FROM recon.balance_gap AS g JOIN recon.balance_account AS a ON a.id = g.account_id WHERE a.account = ${account} ORDER BY g.id`)

      for (const i of [0, 1, 2, 3, 5]) yield* send(i, start + i * 8_000)
      // The sixth, placed after the fourth, opens the gap the fifth left (10,000 came in unseen).
      yield* eventually("the gap opened", Effect.map(gaps(), (rows) => rows.length === 1), 30_000)
      const ids = new Map((yield* smsIds()).map((r) => [r.body, Number(r.id)]))
      const id = (i: number) => ids.get(messages[i]!.text)!
      assert.deepStrictEqual((yield* gaps()).map((g) => [Number(g.after_sms_id), Number(g.before_sms_id), Number(g.unexplained)]), [[id(3), id(5), 10_000]])

      // A second later the fifth arrives: same printed minute, later than the sixth by arrival.
      yield* send(4, start + 5 * 8_000 + 1_000)
      yield* eventually("the gap closed", Effect.map(gaps(), (rows) => rows.every((g) => g.closed_by_sms_id !== null)), 30_000)
      const fifth = Number((yield* query((sql) => sql<{ id: bigint }>`SELECT id FROM recon.shooter_sms WHERE body = ${messages[4]!.text}`))[0]!.id)
      assert.deepStrictEqual((yield* gaps()).map((g) => Number(g.closed_by_sms_id)), [fifth], "one gap, closed by the fifth; no new one")

      const listed = yield* Effect.promise(() => recon(server.url)("/accounts/list", { page_size: 200 }))
      const item = listed.body.data.items.find((a: any) => a.account === account)
      assert.deepInclude(item, { bank: "KB국민", last_balance: String(messages[5]!.balance), gaps: [] })
      // Closed within the grace period: never announced, also by a pass after it closed.
      yield* passAfterKick(worker)
      assert.deepStrictEqual(yield* query((sql) => sql`SELECT id FROM recon.webhook_event WHERE type = 'balance.gap'`), [])
    }).pipe(Effect.scoped), 90_000)

  it.live("a message that never arrives: the gap is announced by a parse_loop pass once past SVC_BALANCE_GAP_GRACE_S, once", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("balance-grace"))
      yield* Effect.promise(() => register(db, { deviceId: "phone-1", format: "smsforwarder", trusted: true }))
      const query = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
        Effect.promise(() => runSql(db, Effect.flatMap(Effect.service(SqlClient.SqlClient), f).pipe(Effect.orDie)))
      yield* query((sql) => sql`INSERT INTO recon.shooter_phone (phone) VALUES ('16449999')`)
      yield* query((sql) => sql`INSERT INTO recon.webhook (url, secret, events) VALUES ('http://127.0.0.1:9/hook', 'a-secret-of-16-chars', '{balance.gap}')`)
      const heartbeat = join(mkdtempSync(join(tmpdir(), "recon-balance-")), "worker.heartbeat")
      const worker = yield* buildWorker(db, heartbeat, { loops: [ParseLoop], settings: { balanceGapGraceS: 1 } })
      const push = yield* servePush(worker)
      const start = Date.parse("2026-11-02T05:05:05Z")
      // 4,000,000 + 50,000 = 4,050,000; the 12,000 out (4,038,000) never arrives; + 300,000 = 4,338,000.
      for (const [i, text] of [kb("입금", "김민준", 50_000, 4_050_000), kb("입금", "이서연", 300_000, 4_338_000)].entries()) {
        const answer = yield* Effect.promise(() => pushForwarder(push, "phone-1", { from: "16449999", sms: text, timestamp: start + i * 8_000 }))
        assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
      }
      const events = () => query((sql) => sql<{ data: any }>`SELECT data FROM recon.webhook_event WHERE type = 'balance.gap'`)
      // A pass comes every 5 s; kicked here so the test need not wait for it.
      yield* eventually("the gap announced", Effect.andThen(worker.kicks.kick("parse_loop"), Effect.map(events(), (rows) => rows.length > 0)), 30_000)
      const [event] = yield* events()
      assert.deepInclude(event!.data, { account, bank: "KB국민", unexplained: "-12000" })
      yield* passAfterKick(worker)
      assert.strictEqual((yield* events()).length, 1, "announced once")
    }).pipe(Effect.scoped), 90_000)
})
