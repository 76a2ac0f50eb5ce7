// Migration 0022 on a database that placed balances the earlier way (received order, gaps by
// their ends only): existing entries get their positions in received order, open gaps the keys a
// late message is fitted by (and count as announced), and placement goes on from there: the
// missing message closes the old gap, the last balance stays the newest message's.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BalanceStore } from "../../src/db/BalanceStore.ts"
import { runMigrations } from "../../src/db/Migrations.ts"
import type { BalanceFact } from "../../src/domain/BalanceSequence.ts"
import { createTestDatabase, runSql } from "../support/database.ts"

describe("migration 0022", () => {
  it("places what the earlier code placed in a chain; a late message still closes the gap it left", async () => {
    const url = await createTestDatabase()
    await runSql(url, runMigrations())
    // Back to what 0014 and 0019 left, with an account placed the earlier way: 1, 2, 4 (and a copy of 2), a gap 2 → 4.
    const ids = await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`DROP TABLE recon.balance_action`)
      yield* sql.unsafe(`DROP INDEX recon.balance_gap_unexplained_idx`)
      yield* sql.unsafe(`ALTER TABLE recon.balance_entry DROP COLUMN pos, DROP COLUMN origin_account_id`)
      yield* sql.unsafe(`CREATE INDEX balance_entry_placed_idx ON recon.balance_entry (account_id, received_at, sms_id) WHERE balance IS NOT NULL AND duplicate_of IS NULL`)
      yield* sql.unsafe(`ALTER TABLE recon.balance_account DROP COLUMN end_pos, DROP COLUMN tail_between, DROP COLUMN merged_into, DROP COLUMN merged_at`)
      yield* sql.unsafe(`ALTER TABLE recon.balance_gap DROP COLUMN from_balance, DROP COLUMN before_key, DROP COLUMN between_sum, DROP COLUMN announced_at,
        DROP COLUMN explained_at, DROP COLUMN explained_by, DROP COLUMN explained_reason, DROP COLUMN explained_amount`)
      yield* sql`DELETE FROM recon.schema_migrations WHERE id = 22`
      const sms = yield* sql<{ id: bigint }>`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
        SELECT 'phone-a', '15882100', 'm' || g, 'm' || g, now(), 'parsed' FROM generate_series(1, 5) AS g RETURNING id`
      const [s1, s2, s4, copy, s3] = sms.map((r) => Number(r.id))
      const [account] = yield* sql<{ id: bigint }>`INSERT INTO recon.balance_account (account_key, bank, account, last_balance, last_at, last_sms_id)
        VALUES ('account:nh농협:352****777743', 'NH농협', '352-****-7777-43', 1050, '2026-07-09T05:21:00Z', ${s4}) RETURNING id`
      const a = Number(account!.id)
      yield* sql`INSERT INTO recon.balance_entry (sms_id, account_id, received_at, txn_at, device_id, direction, amount, balance, duplicate_of) VALUES
        (${s1}, ${a}, '2026-07-09T05:00:00Z', '2026-07-09T05:00:00Z', 'phone-a', 'in', 100, 1100, NULL),
        (${s2}, ${a}, '2026-07-09T05:07:00Z', '2026-07-09T05:07:00Z', 'phone-a', 'out', 40, 1060, NULL),
        (${copy}, ${a}, '2026-07-09T05:07:02Z', '2026-07-09T05:07:00Z', 'phone-b', 'out', 40, 1060, ${s2}),
        (${s4}, ${a}, '2026-07-09T05:21:00Z', '2026-07-09T05:21:00Z', 'phone-a', 'in', 5, 1050, NULL)`
      yield* sql`INSERT INTO recon.balance_gap (account_id, after_sms_id, before_sms_id, unexplained, since)
        VALUES (${a}, ${s2}, ${s4}, -15, '2026-07-09T05:21:01Z')`
      return { s1, s2, s3, s4 }
    }))
    assert.deepStrictEqual(await runSql(url, runMigrations()), ["0022_balance_chain"])
    const gap = await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return (yield* sql<{ from_balance: string; before_key: string; between_sum: string; announced: boolean }>`
        SELECT from_balance::text, before_key::text, between_sum::text, announced_at IS NOT NULL AS announced FROM recon.balance_gap`)[0]!
    }))
    assert.deepStrictEqual(gap, { from_balance: "1060.00", before_key: "1045.00", between_sum: "0.00", announced: true })
    // The missing withdrawal of 15 arrives.
    const late: BalanceFact = {
      smsId: ids.s3, receivedAt: new Date("2026-07-09T05:30:00Z"), txnAt: new Date("2026-07-09T05:14:00Z"), deviceId: "phone-a", sender: "15882100",
      bank: "NH농협", account: "352-****-7777-43", direction: "out", amount: "15", balance: "1045"
    }
    assert.deepStrictEqual(await runSql(url, Effect.flatMap(BalanceStore.make, (store) => store.record([late]))), { placed: 1, duplicates: 0, opened: 0, closed: 1 })
    const after = await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const chain = yield* sql<{ sms_id: bigint }>`SELECT sms_id FROM recon.balance_entry WHERE pos IS NOT NULL ORDER BY pos`
      const [account] = yield* sql<{ last_sms_id: bigint }>`SELECT last_sms_id FROM recon.balance_account`
      return { chain: chain.map((r) => Number(r.sms_id)), last: Number(account!.last_sms_id) }
    }))
    assert.deepStrictEqual(after, { chain: [ids.s1, ids.s2, ids.s3, ids.s4], last: ids.s4 })
  })
})
