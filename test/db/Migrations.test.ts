import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../../src/db/Migrations.ts"
import { createTestDatabase, runSql } from "../support/database.ts"

describe("migrations", () => {
  it("apply once, in order, and are a no-op the second time, also when started together", async () => {
    const url = await createTestDatabase()
    const results = await Promise.all([1, 2, 3].map(() => runSql(url, runMigrations())))
    const applied = results.flat()
    assert.deepStrictEqual(applied, ["0001_recon_tables", "0002_wallet_tables", "0003_admin_tables", "0004_sms_status_counts", "0005_worker", "0006_admin_sessions", "0007_parse",
      "0008_wallet_constraints", "0009_order_match", "0010_push_signatures", "0011_sms_decisions", "0012_reader", "0013_operator_console", "0014_reconciliation_aids", "0016_sms_trace", "0017_pipeline", "0018_planner_guards", "0019_balance_pending", "0020_match_pass", "0021_status_count_slots", "0022_balance_chain", "0023_template_version_changes", "0024_sql_files", "0025_match_owner"])
    assert.deepStrictEqual(await runSql(url, runMigrations()), [])
    const tables = await runSql(url, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ name: string }>`SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
        WHERE table_schema IN ('recon', 'wallet', 'admin') ORDER BY 1`
    }))
    assert.deepStrictEqual(tables.map((t) => t.name), [
      "admin.alert_notice", "admin.approval_request", "admin.operator", "admin.signing_key", "recon.balance_account", "recon.balance_action", "recon.balance_entry", "recon.balance_gap", "recon.balance_pending", "recon.deposit", "recon.match_recheck", "recon.player", "recon.push_signature", "recon.schema_definition", "recon.schema_migrations", "recon.shooter_device",
      "recon.shooter_phone", "recon.shooter_push", "recon.shooter_sms", "recon.shooter_template_recharge", "recon.sms_decision", "recon.sms_status_count", "recon.sms_status_count_slot", "recon.template_version",
      "recon.webhook", "recon.webhook_attempt", "recon.webhook_delivery", "recon.webhook_event", "recon.worker_cursor", "wallet.balance", "wallet.ledger"
    ])
  })
})
