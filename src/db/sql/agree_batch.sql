-- Repeatable definition (src/db/sql/index.ts): wallet_service's POST /deposit/agree_batch
-- (wallet/WalletStore.ts). Each item decided exactly as wallet.agree decides one (the same
-- function, the same constraints), all in one transaction and one commit. Each in its own
-- subtransaction, so the unique_violation of two deposits racing for one SMS makes that item a
-- conflict, not the batch a failure. Items are taken in (player, deposit) order, the order in
-- which an approval locks its deposit and then its player's balance, so concurrent batches never
-- wait on each other in a circle. Answers each item's outcome by its place in p_items.
-- First defined by migration 0017.
CREATE OR REPLACE FUNCTION wallet.agree_batch(p_items jsonb)
RETURNS TABLE (ord bigint, outcome text, detail text)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_item record;
  v_outcome text;
  v_detail text;
BEGIN
  FOR v_item IN
    SELECT i.ord AS item_ord, x.deposit_id AS item_deposit, x.sms_id AS item_sms
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(item, ord),
      jsonb_to_record(i.item) AS x(deposit_id bigint, sms_id bigint)
    LEFT JOIN recon.deposit AS d ON d.id = x.deposit_id
    ORDER BY d.player_id NULLS LAST, x.deposit_id, i.ord
  LOOP
    BEGIN
      SELECT a.outcome, a.detail INTO v_outcome, v_detail FROM wallet.agree(v_item.item_deposit, v_item.item_sms) AS a;
    EXCEPTION WHEN unique_violation THEN
      v_outcome := 'conflict';
      v_detail := CASE WHEN v_item.item_sms IS NULL THEN 'the SMS already funds another deposit'
        ELSE format('SMS %s already funds another deposit', v_item.item_sms) END;
    END;
    RETURN QUERY SELECT v_item.item_ord, v_outcome, v_detail;
  END LOOP;
END
$fn$
