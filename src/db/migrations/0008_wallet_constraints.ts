// "One credit per deposit, one deposit per SMS" held by the database itself, whatever a caller
// does: the ledger points at the deposit it credits (same player, same amount, approved, same
// SMS), so a credit can't name another player, amount or SMS, nor a deposit that is not approved;
// and a credited deposit can't change its player, amount, status or SMS afterwards.
export default [
  `ALTER TABLE wallet.ledger ADD CONSTRAINT ledger_amount_positive CHECK (amount > 0)`,
  `ALTER TABLE wallet.ledger ADD CONSTRAINT ledger_player_fk FOREIGN KEY (player_id) REFERENCES recon.player (id)`,
  `ALTER TABLE wallet.ledger ADD CONSTRAINT ledger_deposit_fk FOREIGN KEY (deposit_id) REFERENCES recon.deposit (id)`,
  // Always 'approved': with the key below, a ledger row needs its deposit approved, and keeps it so.
  `ALTER TABLE wallet.ledger ADD COLUMN deposit_status text NOT NULL GENERATED ALWAYS AS ('approved') STORED`,
  `ALTER TABLE recon.deposit ADD CONSTRAINT deposit_credit_key UNIQUE (id, player_id, amount, status)`,
  `ALTER TABLE wallet.ledger ADD CONSTRAINT ledger_deposit_credit_fk FOREIGN KEY (deposit_id, player_id, amount, deposit_status)
    REFERENCES recon.deposit (id, player_id, amount, status)`,
  // The SMS of a credit is the SMS stored on its deposit (checked when the ledger names one).
  `ALTER TABLE recon.deposit ADD CONSTRAINT deposit_sms_key UNIQUE (id, sms_id)`,
  `ALTER TABLE wallet.ledger ADD CONSTRAINT ledger_deposit_sms_fk FOREIGN KEY (deposit_id, sms_id)
    REFERENCES recon.deposit (id, sms_id)`,
  `ALTER TABLE wallet.balance ADD CONSTRAINT balance_player_fk FOREIGN KEY (player_id) REFERENCES recon.player (id)`,
  `ALTER TABLE wallet.balance ADD CONSTRAINT balance_not_negative CHECK (balance >= 0)`,
  `CREATE INDEX ledger_player_idx ON wallet.ledger (player_id)`,
  // wallet_service's approval as one statement (one round trip, its own transaction): the deposit
  // row locked, approved with its SMS, the ledger row written and the balance credited; or why not.
  // Two deposits racing for one SMS: the loser's UPDATE waits on deposit_sms_id_key and fails
  // with unique_violation once the winner commits (the caller answers that as a conflict too).
  `CREATE FUNCTION wallet.agree(p_deposit_id bigint, p_sms_id bigint)
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
    $fn$`
]
