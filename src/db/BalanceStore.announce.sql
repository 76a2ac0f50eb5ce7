-- BalanceStore.announce (BalanceStore.ts): `balance.gap` sent (recon.emit_event) for the gaps
-- open past the grace period and not explained, each once, at most a batch of them; answers how
-- many. $1: now; $2: now less the grace period; $3: the batch.
WITH due AS (UPDATE recon.balance_gap AS g SET announced_at = $1
  WHERE g.id IN (SELECT id FROM recon.balance_gap WHERE closed_at IS NULL AND announced_at IS NULL AND since <= $2
      AND explained_at IS NULL
    ORDER BY since, id LIMIT $3 FOR UPDATE SKIP LOCKED)
  RETURNING g.account_id, g.after_sms_id, g.before_sms_id, g.unexplained, g.since)
SELECT count(recon.emit_event('balance.gap', jsonb_build_object('account', a.account, 'bank', a.bank, 'device_id', a.device_id,
    'sender', a.sender, 'after_sms_id', due.after_sms_id, 'before_sms_id', due.before_sms_id,
    'unexplained', recon.amount_text(due.unexplained), 'since', recon.iso_time(due.since)))) AS sent
FROM due JOIN recon.balance_account AS a ON a.id = due.account_id
