-- ParseStore's write (ParseStore.ts): what parse_loop read of each claimed SMS, written only while
-- it is still `received` and the templates it was read with are still the table's (its version);
-- and the balance facts it left to be placed (recon.balance_pending, migration 0019), in the same
-- statement. Answers the table's version and the SMS written. $1: the SMS, [{id, status, bank,
-- payer_name, amount, template_id, txn_at, balance, detail, fact}] as JSON; $2: the templates'
-- version read with.
WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, status text, bank text,
    payer_name text, amount text, template_id bigint, txn_at timestamptz, balance text, detail jsonb, fact jsonb)),
written AS (
  UPDATE recon.shooter_sms AS s SET status = x.status, bank = x.bank, payer_name = x.payer_name,
    amount = x.amount::numeric, template_id = x.template_id, txn_at = x.txn_at, balance = x.balance::numeric,
    parse_detail = x.detail, updated_at = now()
  FROM x
  WHERE s.id = x.id AND s.status = 'received'
    AND EXISTS (SELECT 1 FROM recon.template_version WHERE version::text = $2)
  RETURNING s.id),
pending AS (
  INSERT INTO recon.balance_pending (sms_id, fact)
  SELECT x.id, x.fact FROM x JOIN written AS w ON w.id = x.id WHERE x.fact IS NOT NULL
  ON CONFLICT (sms_id) DO UPDATE SET fact = EXCLUDED.fact, created_at = now())
SELECT version::text AS version, ARRAY(SELECT id FROM written) AS ids FROM recon.template_version
