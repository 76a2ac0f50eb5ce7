-- Repeatable definition (src/db/sql/index.ts): wallet_service's approval
-- (wallet/WalletStore.ts, and each item of wallet.agree_batch) as one statement: the deposit row
-- locked, approved with its SMS, the ledger row written and the balance credited; or why not.
-- Two deposits racing for one SMS: the loser's UPDATE waits on deposit_sms_id_key and fails with
-- unique_violation once the winner commits (the caller answers that as a conflict too). The keys
-- of migration 0008 back every rule. First defined by migration 0008; version 1 is that text.
CREATE OR REPLACE FUNCTION wallet.agree(p_deposit_id bigint, p_sms_id bigint)
RETURNS TABLE (outcome text, detail text)
LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      v_player bigint;
      v_amount numeric;
      v_status text;
      v_linked bigint;
      v_sms bigint;
    BEGIN
      SELECT d.player_id, d.amount, d.status, d.sms_id INTO v_player, v_amount, v_status, v_linked
        FROM recon.deposit AS d WHERE d.id = p_deposit_id FOR UPDATE;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'not_found', format('deposit %s not found', p_deposit_id);
        RETURN;
      END IF;
      IF v_status = 'approved' THEN
        IF p_sms_id IS NOT NULL AND v_linked IS DISTINCT FROM p_sms_id THEN
          RETURN QUERY SELECT 'conflict', format('deposit %s was approved with another SMS', p_deposit_id);
        ELSE
          RETURN QUERY SELECT 'replayed', NULL::text;
        END IF;
        RETURN;
      END IF;
      IF v_status <> 'pending' THEN
        RETURN QUERY SELECT 'conflict', format('deposit %s is %s, not pending', p_deposit_id, v_status);
        RETURN;
      END IF;
      IF p_sms_id IS NOT NULL AND v_linked IS NOT NULL AND v_linked <> p_sms_id THEN
        RETURN QUERY SELECT 'conflict', format('deposit %s is linked to another SMS', p_deposit_id);
        RETURN;
      END IF;
      v_sms := COALESCE(p_sms_id, v_linked);
      IF v_sms IS NOT NULL AND EXISTS (SELECT 1 FROM recon.deposit AS d WHERE d.sms_id = v_sms AND d.id <> p_deposit_id) THEN
        RETURN QUERY SELECT 'conflict', format('SMS %s already funds another deposit', v_sms);
        RETURN;
      END IF;
      UPDATE recon.deposit SET status = 'approved', approved_at = now(), sms_id = v_sms WHERE id = p_deposit_id;
      INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (v_player, p_deposit_id, v_sms, v_amount);
      INSERT INTO wallet.balance (player_id, balance) VALUES (v_player, v_amount)
        ON CONFLICT (player_id) DO UPDATE SET balance = wallet.balance.balance + EXCLUDED.balance, updated_at = now();
      RETURN QUERY SELECT 'approved', NULL::text;
    END
    $fn$
