// Benchmark: the four top-info counters on one million SMS rows (figures printed, nothing asserted).
// node bench/topinfo.ts   — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pgLayer } from "../src/db/Database.ts"
import { startEmbeddedPostgres } from "../src/db/EmbeddedPostgres.ts"
import { runMigrations } from "../src/db/Migrations.ts"
import { ReconStore } from "../src/db/ReconStore.ts"

const ROWS = 1_000_000

const dir = mkdtempSync(join(tmpdir(), "recon-bench-pg-"))
chmodSync(dir, 0o755)
const external = process.env.DATABASE_URL
const cluster = external ? undefined : await startEmbeddedPostgres({ dir: join(dir, "data"), persistent: false })
const serverUrl = external ?? cluster!.url
const dbName = `bench_${Date.now().toString(36)}`

const run = <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient.SqlClient | ReconStore>) =>
  Effect.runPromise(effect.pipe(Effect.provide(ReconStore.layer.pipe(Layer.provideMerge(Layer.orDie(pgLayer(Redacted.make(url))))))))

await run(serverUrl, Effect.gen(function*() { yield* (yield* SqlClient.SqlClient).unsafe(`CREATE DATABASE ${dbName}`) }))
const parsed = new URL(serverUrl)
parsed.pathname = `/${dbName}`
const url = parsed.toString()

const timings: Array<number> = []
await run(url, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* runMigrations()
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
  const store = yield* ReconStore
  for (let i = 0; i < 30; i++) {
    const t = performance.now()
    yield* store.topInfo()
    timings.push(performance.now() - t)
  }
  console.log("counters:", JSON.stringify(yield* store.topInfo()))
  const t = performance.now()
  const [scan] = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.shooter_sms WHERE status = 'duplicate'`
  console.log(`check: a counting query finds ${scan!.n} duplicates in ${(performance.now() - t).toFixed(1)} ms (what the counter table saves)`)
}))

timings.sort((a, b) => a - b)
const pct = (p: number) => timings[Math.min(timings.length - 1, Math.floor((p / 100) * timings.length))]!.toFixed(1)
console.log(`top-info over ${ROWS.toLocaleString()} rows (20% in counted statuses): p50 ${pct(50)} ms, p99 ${pct(99)} ms, min ${timings[0]!.toFixed(1)} ms`)

await run(serverUrl, Effect.gen(function*() { yield* (yield* SqlClient.SqlClient).unsafe(`DROP DATABASE ${dbName}`) })).catch(() => {})
await cluster?.stop()
rmSync(dir, { recursive: true, force: true })
