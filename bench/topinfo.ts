// Benchmark: the four top-info counters on one million SMS rows (figures printed, nothing asserted).
// node bench/topinfo.ts   — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { SmsStore } from "../src/recon/SmsStore.ts"
import { benchDatabase } from "./support.ts"

const ROWS = 1_000_000

const db = await benchDatabase("topinfo")

const timings: Array<number> = []
await db.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const started = performance.now()
  // A realistic mix: most SMS end approved; a few percent in each counted status.
  for (let from = 1; from <= ROWS; from += 100_000) {
  yield* sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
    SELECT 'dev-' || (g % 20), '15889999', 'body ' || g, 'body' || g, now() - (g || ' seconds')::interval,
      (ARRAY['approved','approved','approved','approved','approved','approved','approved','approved','approved','approved',
             'approved','approved','approved','approved','ignored','duplicate','need_check','parse_failed','unmatched','manual_review'])[1 + g % 20]
    FROM generate_series(${from}, ${from + 99_999}) AS g`
  }
  yield* sql`VACUUM ANALYZE recon.shooter_sms`.pipe(Effect.ignore)
  console.log(`inserted ${ROWS.toLocaleString()} SMS rows in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const store = yield* SmsStore
  for (let i = 0; i < 30; i++) {
    const t = performance.now()
    yield* store.topInfo()
    timings.push(performance.now() - t)
  }
  console.log("counters:", JSON.stringify(yield* store.topInfo()))
  const t = performance.now()
  const [scan] = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.shooter_sms WHERE status = 'duplicate'`
  console.log(`check: a counting query finds ${scan!.n} duplicates in ${(performance.now() - t).toFixed(1)} ms (what the counter table saves)`)
}).pipe(Effect.provide(SmsStore.layer)))

timings.sort((a, b) => a - b)
const pct = (p: number) => timings[Math.min(timings.length - 1, Math.floor((p / 100) * timings.length))]!.toFixed(1)
console.log(`top-info over ${ROWS.toLocaleString()} rows (20% in counted statuses): p50 ${pct(50)} ms, p99 ${pct(99)} ms, min ${timings[0]!.toFixed(1)} ms`)

await db.close()
