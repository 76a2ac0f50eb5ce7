-- BalanceStore.record (BalanceStore.ts): the accounts of the facts, those seen before and the new
-- ones (no other writer adds these keys: the caller holds their locks; a merge takes them too),
-- and which of the SMS were recorded before (a re-parse). $1: the accounts, [{key, bank, account,
-- device_id, sender}] as JSON; $2: the SMS ids, a JSON array.
WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(key text, bank text, account text, device_id text, sender text)),
added AS (INSERT INTO recon.balance_account (account_key, bank, account, device_id, sender)
  SELECT x.key, x.bank, x.account, x.device_id, x.sender FROM x ON CONFLICT (account_key) DO NOTHING
  RETURNING id, account_key, merged_into)
SELECT found.id, found.account_key, found.merged_into, (SELECT array_agg(e.sms_id) FROM recon.balance_entry AS e
    WHERE e.sms_id = ANY (ARRAY(SELECT jsonb_array_elements_text($2::jsonb)::bigint))) AS recorded
FROM (SELECT id, account_key, merged_into FROM added
  UNION ALL SELECT a.id, a.account_key, a.merged_into FROM recon.balance_account AS a JOIN x ON x.key = a.account_key) AS found
