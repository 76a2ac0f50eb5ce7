// Parsing (DESIGN section 6): where the parse loop writes what it read besides the record's own
// columns (the transaction time and the balance printed in the text), the stable key of each
// built-in template, and the built-in templates themselves (src/db/templates/builtin-v1.json; how
// they are kept and written: db/BuiltinTemplates.ts).
import { builtins0007, builtinUpsert } from "../BuiltinTemplates.ts"

export default [
  `ALTER TABLE recon.shooter_sms ADD COLUMN txn_at timestamptz`,
  `ALTER TABLE recon.shooter_sms ADD COLUMN balance numeric(18, 2)`,
  `ALTER TABLE recon.shooter_template_recharge ADD COLUMN builtin_key text`,
  `ALTER TABLE recon.shooter_template_recharge ADD CONSTRAINT shooter_template_builtin_key_check
    CHECK ((rule_source = 'builtin') = (builtin_key IS NOT NULL))`,
  `CREATE UNIQUE INDEX shooter_template_builtin_key_idx ON recon.shooter_template_recharge (builtin_key)
    WHERE rule_source = 'builtin'`,
  // One rule per bank, compared by its digest: a btree entry holds at most ~2,700 bytes, and a
  // rule may be 2,000 characters of Hangul (6,000 bytes in UTF-8).
  `ALTER TABLE recon.shooter_template_recharge DROP CONSTRAINT shooter_template_recharge_bank_rule_key`,
  `CREATE UNIQUE INDEX shooter_template_bank_rule_idx ON recon.shooter_template_recharge (bank, md5(rule))`,
  // The parse loop claims the received SMS oldest first.
  `CREATE INDEX shooter_sms_received_idx ON recon.shooter_sms (id) WHERE status = 'received'`,
  ...builtinUpsert(builtins0007)
]
