// Balance continuity on a busy account (issue 34): messages placed by the balance chain, not by
// arrival (domain/BalanceChain.ts), at a bounded cost per message; operators explain gaps and merge
// device-accounts; gaps announced only past a grace period.
//
// - balance_entry.pos: the message's place in its account's chain (NULL for a copy). Placing a
//   message reads the chain's end from its account row (end_pos, tail_between, last_sms_id), the
//   open gaps its balance or amount fits (by the keys below) and, when late and fitting nothing,
//   the chain's last messages by pos: never a range that grows with the account's history.
// - balance_gap: from_balance (its first end's balance) and before_key (the balance right before
//   its last end) are what a late message is fitted by; between the balance-less amounts inside it.
//   announced_at: when balance.gap was sent (gaps are announced past SVC_BALANCE_GAP_GRACE_S);
//   explained_*: an operator's explanation (it stops alerting; a message still closes the gap).
// - balance_account.merged_into: a device-account an operator merged into another (its entries
//   move there, origin_account_id remembers where from, so the merge can be undone).
// - balance_action: every operator action on balances (explain, unexplain, merge, unmerge).
export default [
  `ALTER TABLE recon.balance_entry ADD COLUMN pos numeric, ADD COLUMN origin_account_id bigint REFERENCES recon.balance_account (id)`,
  `UPDATE recon.balance_entry AS e SET pos = r.n, origin_account_id = e.account_id
    FROM (SELECT sms_id, row_number() OVER (PARTITION BY account_id ORDER BY received_at, sms_id) AS n
      FROM recon.balance_entry WHERE duplicate_of IS NULL) AS r WHERE r.sms_id = e.sms_id`,
  `UPDATE recon.balance_entry SET origin_account_id = account_id WHERE origin_account_id IS NULL`,
  `ALTER TABLE recon.balance_entry ALTER COLUMN origin_account_id SET NOT NULL`,
  `CREATE INDEX balance_entry_pos_idx ON recon.balance_entry (account_id, pos) WHERE pos IS NOT NULL`,
  `CREATE INDEX balance_entry_origin_idx ON recon.balance_entry (origin_account_id) WHERE origin_account_id <> account_id`,
  // Replaced by the chain's order and the repeat index (migration 0019).
  `DROP INDEX recon.balance_entry_placed_idx`,

  `ALTER TABLE recon.balance_account ADD COLUMN end_pos numeric, ADD COLUMN tail_between numeric(18, 2) NOT NULL DEFAULT 0,
    ADD COLUMN merged_into bigint REFERENCES recon.balance_account (id), ADD COLUMN merged_at timestamptz`,
  `UPDATE recon.balance_account AS a SET end_pos = (SELECT max(e.pos) FROM recon.balance_entry AS e WHERE e.account_id = a.id),
    tail_between = COALESCE((SELECT sum(CASE e.direction WHEN 'in' THEN e.amount ELSE -e.amount END) FROM recon.balance_entry AS e
      WHERE e.account_id = a.id AND e.pos > (SELECT l.pos FROM recon.balance_entry AS l WHERE l.sms_id = a.last_sms_id) AND e.balance IS NULL), 0)`,

  `ALTER TABLE recon.balance_gap ADD COLUMN from_balance numeric(18, 2), ADD COLUMN before_key numeric(18, 2),
    ADD COLUMN between_sum numeric(18, 2) NOT NULL DEFAULT 0, ADD COLUMN announced_at timestamptz,
    ADD COLUMN explained_at timestamptz, ADD COLUMN explained_by text, ADD COLUMN explained_reason text,
    ADD COLUMN explained_amount numeric(18, 2)`,
  // The open gaps found by the code before this one were announced when they opened.
  `UPDATE recon.balance_gap AS g SET announced_at = g.since, from_balance = a.balance,
    before_key = b.balance - CASE b.direction WHEN 'in' THEN b.amount ELSE -b.amount END,
    between_sum = b.balance - CASE b.direction WHEN 'in' THEN b.amount ELSE -b.amount END - a.balance - g.unexplained
    FROM recon.balance_entry AS a, recon.balance_entry AS b WHERE a.sms_id = g.after_sms_id AND b.sms_id = g.before_sms_id`,
  `CREATE INDEX balance_gap_from_idx ON recon.balance_gap (account_id, from_balance) WHERE closed_at IS NULL`,
  `CREATE INDEX balance_gap_before_idx ON recon.balance_gap (account_id, before_key) WHERE closed_at IS NULL`,
  `CREATE INDEX balance_gap_unexplained_idx ON recon.balance_gap (account_id, unexplained) WHERE closed_at IS NULL`,
  // What the announcer looks at: open gaps not announced yet, the oldest first.
  `CREATE INDEX balance_gap_unannounced_idx ON recon.balance_gap (since) WHERE closed_at IS NULL AND announced_at IS NULL`,

  `CREATE TABLE recon.balance_action (
    id bigserial PRIMARY KEY,
    action text NOT NULL CHECK (action IN ('explain', 'unexplain', 'merge', 'unmerge')),
    operator text NOT NULL,
    account_id bigint NOT NULL REFERENCES recon.balance_account (id),
    gap_id bigint REFERENCES recon.balance_gap (id),
    other_account_id bigint REFERENCES recon.balance_account (id),
    reason text,
    amount numeric(18, 2),
    at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX balance_action_at_idx ON recon.balance_action (at DESC, id DESC)`,
  `CREATE INDEX balance_action_account_idx ON recon.balance_action (account_id, at DESC)`
]
