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
  `CREATE INDEX ledger_player_idx ON wallet.ledger (player_id)`
]
