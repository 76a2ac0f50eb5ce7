// Balance placement off the money path (issue 22): parse_loop's write commits and kicks
// order_match_loop at once, and the balance facts of what it wrote are placed a moment later, in
// a transaction of their own, several SMS together. The write statement itself records each fact
// here, so none is lost to a crash in between: placing a fact deletes its row in the same
// transaction, and parse_loop's passes place the facts left here by a process that died.
// Also: the entries a new fact may repeat (same direction, amount and balance within the duplicate
// window) looked up by balance, not scanned: in a burst one account held hundreds of entries of the
// same amount inside the window, and that scan took 2.5 ms per account per placement (most of
// PostgreSQL's time in bench/pipeline.ts's burst after matching, ingest and the wallet).
export default [
  `CREATE TABLE recon.balance_pending (
    sms_id bigint PRIMARY KEY REFERENCES recon.shooter_sms (id) ON DELETE CASCADE,
    fact jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX balance_pending_created_idx ON recon.balance_pending (created_at)`,
  `CREATE INDEX balance_entry_repeat_idx ON recon.balance_entry (account_id, balance, received_at) WHERE duplicate_of IS NULL`
]
