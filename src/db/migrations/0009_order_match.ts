// What order_match_loop needs (DESIGN section 6): the name key compared after Unicode NFC and
// white-space removal, computed once in SQL so that recon and the back office agree, kept in
// indexed columns; the SMS's match window and wallet retry state; and a NOTIFY when a pending
// deposit appears or changes, so a deposit created after its SMS matches at once.
export default [
  // IMMUTABLE: normalize() and regexp_replace() are (PostgreSQL 13+). The white space is listed
  // explicitly rather than as \s or [[:space:]], whose meaning follows the locale. NFC follows
  // the server's Unicode tables: after a major upgrade that changes them, recompute the columns
  // (UPDATE ... SET name = name) and REINDEX.
  `CREATE FUNCTION recon.name_key(p_name text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN regexp_replace(normalize(p_name, NFC),
      '[\\u0009-\\u000d\\u0020\\u0085\\u00a0\\u1680\\u180e\\u2000-\\u200b\\u2028\\u2029\\u202f\\u205f\\u2060\\u3000\\ufeff]+', '', 'g')`,
  `ALTER TABLE recon.player ADD COLUMN name_key text GENERATED ALWAYS AS (recon.name_key(name)) STORED`,
  `CREATE INDEX player_name_key_idx ON recon.player (name_key)`,
  `ALTER TABLE recon.deposit ADD COLUMN owner_key text GENERATED ALWAYS AS (recon.name_key(from_bank_owner)) STORED`,
  `CREATE INDEX deposit_pending_key_idx ON recon.deposit (owner_key, amount) WHERE status = 'pending'`,
  // Superseded by the key index. Left in place, a planner with stale statistics (a bulk load not
  // yet analysed) chose it for a skip scan on amount and compared every pending row's key.
  `DROP INDEX recon.deposit_pending_idx`,

  // match_started_at: when the SMS (last) became parsed; an unmatched SMS is retried for 24 h from it.
  // match_attempts / match_next_at: wallet calls made for an approving SMS, and when it may be sent
  // (again): a lease while a call is in flight, a backoff after the wallet was unavailable.
  // The payer's key beside the deposit's: every match compares two plain columns.
  `ALTER TABLE recon.shooter_sms ADD COLUMN payer_key text GENERATED ALWAYS AS (recon.name_key(payer_name)) STORED`,
  `ALTER TABLE recon.shooter_sms ADD COLUMN match_started_at timestamptz,
    ADD COLUMN match_attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN match_next_at timestamptz`,
  `CREATE FUNCTION recon.sms_match_state() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF NEW.status = 'parsed' THEN
      NEW.match_started_at := now();
    END IF;
    -- A new approval (by the loop or by a person through sms/resolve) starts with no attempts, due now,
    -- unless the writer set its own lease.
    IF NEW.status = 'approving' AND (TG_OP = 'INSERT' OR OLD.match_next_at IS NOT DISTINCT FROM NEW.match_next_at) THEN
      NEW.match_attempts := 0;
      NEW.match_next_at := NULL;
    END IF;
    RETURN NEW;
  END
  $fn$`,
  `CREATE TRIGGER shooter_sms_match_state_insert BEFORE INSERT ON recon.shooter_sms FOR EACH ROW
    WHEN (NEW.status IN ('parsed', 'approving'))
    EXECUTE FUNCTION recon.sms_match_state()`,
  `CREATE TRIGGER shooter_sms_match_state_update BEFORE UPDATE OF status ON recon.shooter_sms FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('parsed', 'approving'))
    EXECUTE FUNCTION recon.sms_match_state()`,
  // Parsed SMS were never timed: their window starts now.
  `UPDATE recon.shooter_sms SET match_started_at = updated_at WHERE status IN ('parsed', 'unmatched')`,
  `CREATE INDEX shooter_sms_parsed_idx ON recon.shooter_sms (id) WHERE status = 'parsed'`,
  `CREATE INDEX shooter_sms_approving_idx ON recon.shooter_sms (match_next_at NULLS FIRST, id) WHERE status = 'approving'`,
  `CREATE INDEX shooter_sms_approving_deposit_idx ON recon.shooter_sms (deposit_id) WHERE status = 'approving'`,
  `CREATE INDEX shooter_sms_unmatched_idx ON recon.shooter_sms (payer_key, amount) WHERE status = 'unmatched'`,

  // A pending deposit created or changed: order_match_loop looks at once (NOTIFY recon_changes,
  // payload 'deposit'; PostgreSQL sends one per transaction however many rows it wrote).
  `CREATE FUNCTION recon.notify_deposit() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM pg_notify('recon_changes', 'deposit');
    RETURN NULL;
  END
  $fn$`,
  `CREATE TRIGGER deposit_notify_insert AFTER INSERT ON recon.deposit FOR EACH ROW
    WHEN (NEW.status = 'pending')
    EXECUTE FUNCTION recon.notify_deposit()`,
  `CREATE TRIGGER deposit_notify_update AFTER UPDATE OF status, from_bank_owner, amount ON recon.deposit FOR EACH ROW
    WHEN (NEW.status = 'pending' AND (OLD.status, OLD.from_bank_owner, OLD.amount) IS DISTINCT FROM (NEW.status, NEW.from_bank_owner, NEW.amount))
    EXECUTE FUNCTION recon.notify_deposit()`,

  // Matching takes the locks of the name keys it decides on, every one in key order, so that two
  // worker processes never decide on the same name at once and never deadlock.
  `CREATE FUNCTION recon.lock_match_keys(p_keys text[]) RETURNS void LANGUAGE plpgsql VOLATILE AS $fn$
  DECLARE
    v_key bigint;
  BEGIN
    FOR v_key IN SELECT DISTINCT hashtextextended('match-key:' || k, 0) FROM unnest(p_keys) AS k ORDER BY 1 LOOP
      PERFORM pg_advisory_xact_lock(v_key);
    END LOOP;
  END
  $fn$`
]
