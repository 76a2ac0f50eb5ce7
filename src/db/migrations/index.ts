// The list of migrations, in order. Forward-only: a released migration is never edited (nor the
// files it reads), a new change is a new file and a new line here; test/db/FrozenMigrations.test.ts
// holds the released ones to their checksums. Stored functions the code calls are repeatable
// definitions instead (src/db/sql/), applied after these whenever their text changes.
import type { Migration } from "../Migrations.ts"
import recon from "./0001_recon_tables.ts"
import wallet from "./0002_wallet_tables.ts"
import admin from "./0003_admin_tables.ts"
import smsStatusCounts from "./0004_sms_status_counts.ts"
import worker from "./0005_worker.ts"
import adminSessions from "./0006_admin_sessions.ts"
import parse from "./0007_parse.ts"
import walletConstraints from "./0008_wallet_constraints.ts"
import orderMatch from "./0009_order_match.ts"
import pushSignatures from "./0010_push_signatures.ts"
import smsDecisions from "./0011_sms_decisions.ts"
import reader from "./0012_reader.ts"
import operatorConsole from "./0013_operator_console.ts"
import reconciliationAids from "./0014_reconciliation_aids.ts"
import smsTrace from "./0016_sms_trace.ts"
import pipeline from "./0017_pipeline.ts"
import plannerGuards from "./0018_planner_guards.ts"
import balancePending from "./0019_balance_pending.ts"
import matchPass from "./0020_match_pass.ts"
import statusCountSlots from "./0021_status_count_slots.ts"
import balanceChain from "./0022_balance_chain.ts"
import templateVersionChanges from "./0023_template_version_changes.ts"
import sqlFiles from "./0024_sql_files.ts"
import matchOwner from "./0025_match_owner.ts"

export const migrations: ReadonlyArray<Migration> = [
  { id: 1, name: "recon_tables", statements: recon },
  { id: 2, name: "wallet_tables", statements: wallet },
  { id: 3, name: "admin_tables", statements: admin },
  { id: 4, name: "sms_status_counts", statements: smsStatusCounts },
  { id: 5, name: "worker", statements: worker },
  { id: 6, name: "admin_sessions", statements: adminSessions },
  { id: 7, name: "parse", statements: parse },
  { id: 8, name: "wallet_constraints", statements: walletConstraints },
  { id: 9, name: "order_match", statements: orderMatch },
  { id: 10, name: "push_signatures", statements: pushSignatures },
  { id: 11, name: "sms_decisions", statements: smsDecisions },
  { id: 12, name: "reader", statements: reader },
  { id: 13, name: "operator_console", statements: operatorConsole },
  { id: 14, name: "reconciliation_aids", statements: reconciliationAids },
  { id: 16, name: "sms_trace", statements: smsTrace },
  { id: 17, name: "pipeline", statements: pipeline },
  { id: 18, name: "planner_guards", statements: plannerGuards },
  { id: 19, name: "balance_pending", statements: balancePending },
  { id: 20, name: "match_pass", statements: matchPass },
  { id: 21, name: "status_count_slots", statements: statusCountSlots },
  { id: 22, name: "balance_chain", statements: balanceChain },
  { id: 23, name: "template_version_changes", statements: templateVersionChanges },
  { id: 24, name: "sql_files", statements: sqlFiles },
  { id: 25, name: "match_owner", statements: matchOwner }
]
