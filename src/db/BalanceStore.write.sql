-- BalanceStore.record (BalanceStore.ts, write): the new entries and each account's end, in one
-- statement. An original inserted by the same statement satisfies duplicate_of's key: it is
-- checked at the statement's end. $1: the entries as JSON; $2: the accounts' ends as JSON.
WITH entry AS (INSERT INTO recon.balance_entry (sms_id, account_id, origin_account_id, received_at, txn_at, device_id, direction, amount, balance, duplicate_of, pos)
  SELECT x.sms_id, x.account_id, x.origin_account_id, x.received_at, x.txn_at, x.device_id, x.direction, x.amount::numeric, x.balance::numeric, x.duplicate_of, x.pos::numeric
  FROM jsonb_to_recordset($1::jsonb) AS x(sms_id bigint, account_id bigint, origin_account_id bigint, received_at timestamptz, txn_at timestamptz,
    device_id text, direction text, amount text, balance text, duplicate_of bigint, pos text)),
ends AS (UPDATE recon.balance_account AS a SET last_balance = x.balance::numeric, last_at = x.at, last_sms_id = x.sms_id,
    end_pos = x.end_pos::numeric, tail_between = x.tail_between::numeric
  FROM jsonb_to_recordset($2::jsonb) AS x(id bigint, balance text, at timestamptz, sms_id bigint, end_pos text, tail_between text) WHERE a.id = x.id)
SELECT 1
