// Benchmark of the reconciliation aids (figures printed, nothing asserted): balance facts recorded
// per second in parse_loop's batches of 500, suggestions for one SMS and for a page of 50 among
// 100,000 pending deposits (and the console's review page of 50 that carries them), and webhook
// events delivered per second (and from commit to receipt) by webhook_delivery_loop to a local
// receiver.
// node bench/aids.ts — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
import { Context, Deferred, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { cpus, loadavg } from "node:os"
import { join } from "node:path"
import { Fatal } from "../src/commands/Lifecycle.ts"
import { BalanceStore } from "../src/db/BalanceStore.ts"
import { pgLayer } from "../src/db/Database.ts"
import { ReviewStore } from "../src/admin/ReviewStore.ts"
import { SuggestionStore } from "../src/db/SuggestionStore.ts"
import type { BalanceFact } from "../src/domain/BalanceSequence.ts"
import { HealthRegistry } from "../src/health/HealthRegistry.ts"
import { workerCore } from "../src/worker/Runtime.ts"
import { WebhookDeliveryLoop } from "../src/loops/WebhookDeliveryLoop.ts"
import { benchDatabase } from "./support.ts"

const db = await benchDatabase("aids")
const sqlLayer = Layer.orDie(pgLayer(Redacted.make(db.url)))
const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const ms = (n: number) => `${n.toFixed(2)} ms`
const report = (line: string) => console.log(line)
const timed = async <A>(f: () => Promise<A>) => {
  const started = performance.now()
  const value = await f()
  return { value, millis: performance.now() - started }
}
report(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, ${db.embedded ? "embedded PostgreSQL" : "DATABASE_URL"}, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`)

// Balance facts: 200 accounts × 25 NH-style messages (every fifth outgoing, every 25th missing), received in order.
{
  const ACCOUNTS = 200
  const PER_ACCOUNT = 25
  const start = Date.parse("2026-07-09T00:00:00Z")
  const rows = await db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ id: bigint; g: number }>`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
      SELECT 'bench', '15882100', 'balance ' || g, 'balance' || g, now(), 'parsed' FROM generate_series(0, ${ACCOUNTS * PER_ACCOUNT - 1}) AS g
      RETURNING id, (body::text)`.pipe(Effect.map((rs) => rs.map((r, g) => ({ id: r.id, g }))))
  }))
  const facts: Array<BalanceFact> = []
  const balances = new Array<number>(ACCOUNTS).fill(1_000_000)
  for (const { id, g } of rows) {
    const account = g % ACCOUNTS
    const step = Math.floor(g / ACCOUNTS)
    const out = step % 5 === 4
    const amount = 1000 + (g % 97) * 100
    balances[account] = balances[account]! + (out ? -amount : amount)
    if (step % 25 === 12) continue
    facts.push({
      smsId: Number(id),
      receivedAt: new Date(start + g * 1000),
      deviceId: "bench",
      sender: "15882100",
      bank: "NH농협",
      account: `352-****-${String(1000 + account)}-43`,
      direction: out ? "out" : "in",
      amount: String(amount),
      balance: String(balances[account]),
      txnAt: null
    })
  }
  const batches: Array<number> = []
  let opened = 0
  for (let i = 0; i < facts.length; i += 500) {
    const { millis, value } = await timed(() => db.run(Effect.flatMap(BalanceStore.make, (store) => store.record(facts.slice(i, i + 500)))))
    batches.push(millis)
    opened += value.opened
  }
  const total = batches.reduce((a, b) => a + b, 0)
  report(`balance facts: ${facts.length} in batches of 500 over ${ACCOUNTS} accounts: ${(facts.length / (total / 1000)).toFixed(0)} facts/s, ` +
    `${ms(total / batches.length)} per batch (p50 ${ms(percentile([...batches].sort((a, b) => a - b), 50))}), ${opened} gaps opened`)
}

// Suggestions among 100,000 pending deposits.
if (process.env.ONLY_BALANCE === undefined) {
  await db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`WITH p AS (INSERT INTO recon.player (name)
        SELECT (ARRAY['김','이','박','최','정','강','조','윤'])[1 + g % 8] || (ARRAY['민','서','준','지','현','우','예','도'])[1 + (g / 8) % 8]
          || (ARRAY['수','영','호','희','철','석','연','아'])[1 + (g / 64) % 8] || CASE WHEN g >= 512 THEN g::text ELSE '' END
        FROM generate_series(0, 99999) AS g RETURNING id, name)
      INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT id, name, (1 + id % 50) * 1000 FROM p`
    yield* sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status, payer_name, amount)
      SELECT 'bench', '16449999', 'sg ' || g, 'sg' || g, now(), 'unmatched',
        (ARRAY['김.민수', 'coin' || g || ' 이서영', '박*호', '최지희철', '국민정우석', '강도연' || g])[1 + g % 6], (1 + g % 50) * 1000 + 500
      FROM generate_series(1, 200) AS g`
    yield* sql`ANALYZE`
  }))
  const ids = await db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return (yield* sql<{ id: bigint }>`SELECT id FROM recon.shooter_sms WHERE status = 'unmatched' ORDER BY id`).map((r) => Number(r.id))
  }))
  await Effect.runPromise(Effect.gen(function*() {
    const store = yield* SuggestionStore
    const one: Array<number> = []
    let found = 0
    for (const id of ids) {
      const started = performance.now()
      const result = yield* store.forSms([id])
      one.push(performance.now() - started)
      found += result.get(id)?.length ?? 0
    }
    one.sort((a, b) => a - b)
    const pages: Array<number> = []
    for (let i = 0; i + 50 <= ids.length; i += 50) {
      const started = performance.now()
      yield* store.forSms(ids.slice(i, i + 50))
      pages.push(performance.now() - started)
    }
    pages.sort((a, b) => a - b)
    report(`suggestions among 100,000 pending deposits: one SMS p50 ${ms(percentile(one, 50))}, p99 ${ms(percentile(one, 99))} (${ids.length} SMS, ` +
      `${found} suggestions); a page of 50 p50 ${ms(percentile(pages, 50))}, max ${ms(pages[pages.length - 1]!)}`)
    // The console's unmatched queue, a page of 50: candidates, suggestions (searched once) and the players' names.
    const review = yield* ReviewStore
    const queue: Array<number> = []
    for (let round = 0; round < 5; round++) {
      for (let page = 1; page * 50 <= ids.length; page++) {
        const started = performance.now()
        yield* review.queue({ status: "unmatched", page, page_size: 50 })
        queue.push(performance.now() - started)
      }
    }
    queue.sort((a, b) => a - b)
    report(`the console's review page of 50 unmatched SMS with their candidates and suggestions: p50 ${ms(percentile(queue, 50))}, ` +
      `max ${ms(queue[queue.length - 1]!)} (${queue.length} pages)`)
  }).pipe(Effect.provide(Layer.merge(SuggestionStore.layer, ReviewStore.layer).pipe(Layer.provide(sqlLayer)))))
}

// Webhooks: events from status changes, delivered to a receiver on loopback that answers 200 at once:
// 1,000 written at 100 a second (commit to receipt), then a backlog of 2,000 written at once (drain rate).
if (process.env.ONLY_BALANCE === undefined) {
  const STEADY = 1000
  const BACKLOG = 2000
  const latency = new Map<number, number>()
  let waiting: { readonly n: number; readonly wake: () => void } | undefined
  const receiver = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      if (!latency.has(event.id)) latency.set(event.id, Date.now() - Date.parse(event.created_at))
      res.writeHead(200).end()
      if (waiting !== undefined && latency.size >= waiting.n) waiting.wake()
    })
  })
  const received = (n: number) => new Promise<void>((wake) => latency.size >= n ? wake() : (waiting = { n, wake }))
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  await db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO recon.webhook (url, secret, events) VALUES (${url}, 'bench-secret-0123456789', '{sms.rejected}')`
    yield* sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
      SELECT 'hook', '16449999', 'hook ' || g, 'hook' || g, now(), 'unmatched' FROM generate_series(1, ${STEADY + BACKLOG}) AS g`
  }))
  const reject = (n: number) => db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE recon.shooter_sms SET status = 'rejected'
      WHERE id IN (SELECT id FROM recon.shooter_sms WHERE device_id = 'hook' AND status = 'unmatched' ORDER BY id LIMIT ${n})`
  }))
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const fatal = yield* Deferred.make<never, unknown>()
    const worker = yield* Layer.build(workerCore({
      port: 0,
      heartbeatFile: join(db.dir, "hb"),
      chatbot: { enabled: false, token: undefined, apiUrl: "http://127.0.0.1:9", chatIds: [] },
      walletUrl: "http://127.0.0.1:9",
      adminUrl: "http://127.0.0.1:9",
      callerToken: undefined,
      depositTtlHours: 24
    }, [WebhookDeliveryLoop]).pipe(Layer.provideMerge(Fatal.layerOn(fatal)), Layer.provideMerge(sqlLayer), Layer.orDie))
    const registry = Context.get(worker, HealthRegistry)
    while (!(yield* registry.ready)) yield* Effect.sleep("20 millis")
    // People rejecting SMS: 10 per transaction, 10 transactions a second.
    for (let i = 0; i < STEADY; i += 10) {
      yield* Effect.promise(() => reject(10))
      yield* Effect.sleep("100 millis")
    }
    yield* Effect.promise(() => received(STEADY))
    const steady = [...latency.values()].sort((a, b) => a - b)
    report(`webhooks at 100 events/s: commit to receipt p50 ${percentile(steady, 50)} ms, p99 ${percentile(steady, 99)} ms, max ${steady[steady.length - 1]} ms`)
    const started = Date.now()
    yield* Effect.promise(() => reject(BACKLOG))
    yield* Effect.promise(() => received(STEADY + BACKLOG))
    const seconds = (Date.now() - started) / 1000
    report(`webhooks: a backlog of ${BACKLOG} events to one receiver drained in ${seconds.toFixed(1)} s (${(BACKLOG / seconds).toFixed(0)}/s, at most 4 in flight to one webhook)`)
  })))
  receiver.close()
}

await db.close()
