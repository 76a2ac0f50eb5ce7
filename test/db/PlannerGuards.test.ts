// Migration 0018: statistics taken before a batch of pending deposits arrived must not make
// order_match_loop's candidate query (as recon.match_pass writes it) walk every pending deposit
// through the expiry or suggestions indexes; those indexes still serve their own queries.
import { Effect } from "effect"
import { assert, beforeAll, describe, it } from "vitest"
import { createMigratedDatabase, sql } from "../support/database.ts"

let db: string
const plan = (statement: string) =>
  sql(db, (s) => Effect.map(s.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN ${statement}`), (rows) => rows.map((r) => r["QUERY PLAN"]).join("\n")))

beforeAll(async () => {
  db = await createMigratedDatabase("planner_guards")
  await sql(db, (s) => Effect.gen(function*() {
    // Statistics from a day of approved deposits, then 20,000 pending ones at once (no analyze since).
    yield* s.unsafe(`INSERT INTO recon.player (name) SELECT 'old-' || g FROM generate_series(1, 20000) AS g`)
    yield* s.unsafe(`INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT id, name, 10000 FROM recon.player`)
    yield* s.unsafe(`UPDATE recon.deposit SET status = 'approved', approved_at = now()`)
    yield* s.unsafe(`ANALYZE recon.deposit`)
    yield* s.unsafe(`WITH p AS (INSERT INTO recon.player (name) SELECT 'batch-' || g FROM generate_series(1, 20000) AS g RETURNING id, name)
      INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT id, name, 10000 FROM p`)
  }))
}, 120_000)

describe("planner guards", () => {
  it("the candidate query, planned generically on stale statistics, looks the name and amount up in deposit_pending_key_idx", async () => {
    // One connection (a transaction) for the setting, the statement and its plan.
    const generic = await sql(db, (s) => s.withTransaction(Effect.gen(function*() {
      yield* s.unsafe(`SET LOCAL plan_cache_mode = force_generic_plan`)
      yield* s.unsafe(`PREPARE candidates(text, numeric, bigint[]) AS SELECT d.id FROM recon.deposit AS d
        WHERE d.status = 'pending' AND d.owner_key = $1 AND d.amount = $2 AND d.id <> ALL ($3)
          AND NOT EXISTS (SELECT 1 FROM recon.shooter_sms AS a WHERE a.status = 'approving' AND a.deposit_id = d.id)`)
      const rows = yield* s.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN EXECUTE candidates('batch-19999', 10000, '{}')`)
      return rows.map((r) => r["QUERY PLAN"]).join("\n")
    })))
    assert.include(generic, "deposit_pending_key_idx", generic)
    for (const other of ["deposit_pending_created_idx", "deposit_pending_loose_idx", "deposit_pending_loose_reverse_idx"]) assert.notInclude(generic, other, generic)
  })

  it("the expiry and the suggestions still use their indexes", async () => {
    await sql(db, (s) => s.unsafe(`ANALYZE recon.deposit`))
    assert.include(await plan(`SELECT d.id FROM recon.deposit AS d WHERE d.status = 'pending' AND d.created_at < now() - interval '1 day'
      AND d.created_at < 'infinity' ORDER BY d.created_at, d.id LIMIT 5000`), "deposit_pending_created_idx")
    assert.include(await plan(`SELECT id FROM recon.deposit WHERE status = 'pending' AND owner_loose_key = ANY (ARRAY['batch-7'] COLLATE "C") LIMIT 20`),
      "deposit_pending_loose_idx")
    assert.include(await plan(`SELECT id FROM recon.deposit WHERE status = 'pending' AND reverse(owner_loose_key) >= '7-hc' COLLATE "C"
      AND reverse(owner_loose_key) < '7-hcz' COLLATE "C" AND owner_loose_key LIKE '%ch-7' COLLATE "C" LIMIT 20`), "deposit_pending_loose_reverse_idx")
  })
})
