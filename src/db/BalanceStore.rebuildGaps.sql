-- BalanceStore's rebuild (BalanceStore.ts, a merge or its undo): the account's open gaps with the
-- same ends as a wanted one keep their rows (since, announcement, explanation) and take its sums;
-- the wanted ones not open yet open. $1: the wanted gaps as JSON; $2: the account; $3: now.
WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS x(after_sms_id bigint, before_sms_id bigint, unexplained text, from_balance text, before_key text, between text)),
  kept AS (UPDATE recon.balance_gap AS g SET unexplained = x.unexplained::numeric, from_balance = x.from_balance::numeric,
      before_key = x.before_key::numeric, between_sum = x.between::numeric
    FROM x WHERE g.account_id = $2 AND g.closed_at IS NULL AND g.after_sms_id = x.after_sms_id AND g.before_sms_id = x.before_sms_id
    RETURNING g.after_sms_id)
INSERT INTO recon.balance_gap (account_id, after_sms_id, before_sms_id, unexplained, from_balance, before_key, between_sum, since)
SELECT $2, x.after_sms_id, x.before_sms_id, x.unexplained::numeric, x.from_balance::numeric, x.before_key::numeric, x.between::numeric, $3
FROM x WHERE NOT EXISTS (SELECT 1 FROM recon.balance_gap AS g WHERE g.account_id = $2 AND g.closed_at IS NULL
  AND g.after_sms_id = x.after_sms_id AND g.before_sms_id = x.before_sms_id)
