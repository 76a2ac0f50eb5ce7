// No function of the money path is planned again at every call. Before PostgreSQL
// 18 a LANGUAGE sql function that is not inlined (one that writes, like recon.lease_due_sms, which
// every pass of order_match_loop calls) is parsed and planned at each call; plpgsql keeps its plans
// per connection. IMMUTABLE or STABLE one-expression SQL functions are inlined into their caller.
import { Effect } from "effect"
import { assert, beforeAll, describe, it } from "vitest"
import { createMigratedDatabase, sql } from "../support/database.ts"

let db: string
beforeAll(async () => {
  db = await createMigratedDatabase("plan_caching")
}, 60_000)

describe("plan caching", () => {
  it("no VOLATILE LANGUAGE sql function in recon or wallet: each would be planned again at every call on PostgreSQL 15 to 17", async () => {
    const found = await sql(db, (s) => Effect.map(s<{ name: string }>`
      SELECT n.nspname || '.' || p.proname AS name FROM pg_proc AS p
        JOIN pg_namespace AS n ON n.oid = p.pronamespace JOIN pg_language AS l ON l.oid = p.prolang
      WHERE n.nspname IN ('recon', 'wallet') AND l.lanname = 'sql' AND p.provolatile = 'v' ORDER BY 1`, (rows) => rows.map((r) => r.name)))
    assert.deepStrictEqual(found, [])
  })

  it("recon.lease_due_sms leases the due approving SMS, oldest lease first, as before", async () => {
    const leased = await sql(db, (s) => Effect.gen(function*() {
      yield* s`INSERT INTO recon.shooter_sms (id, device_id, sender, body, normalized_body, received_at, status, deposit_id, match_next_at)
        VALUES (9001, 'lease', '1', 'a', 'a', now(), 'approving', 1, now() - interval '1 minute'),
               (9002, 'lease', '1', 'b', 'b', now(), 'approving', 2, NULL),
               (9003, 'lease', '1', 'c', 'c', now(), 'approving', 3, now() + interval '1 hour'),
               (9004, 'lease', '1', 'd', 'd', now(), 'parsed', NULL, NULL)`
      // Leases as a pass left them (the insert trigger starts every approving SMS due at once).
      yield* s`UPDATE recon.shooter_sms SET match_next_at = CASE id WHEN 9001 THEN now() - interval '1 minute' WHEN 9003 THEN now() + interval '1 hour' END
        WHERE id IN (9001, 9002, 9003)`
      const first = yield* s<{ leased: unknown }>`SELECT recon.lease_due_sms(now(), now() + interval '30 seconds', 10, '{7}') AS leased`
      const again = yield* s<{ leased: unknown }>`SELECT recon.lease_due_sms(now(), now() + interval '30 seconds', 10, '{7}') AS leased`
      return [first[0]!.leased, again[0]!.leased]
    }))
    assert.deepStrictEqual(leased, [[[9001, 1, 0], [9002, 2, 0]], []])
  })
})
