-- Repeatable definition (src/db/sql/index.ts): the advisory locks of the name keys a match
-- decides on (recon.match_pass) and of the accounts a balance check decides on
-- (db/BalanceStore.ts), every one in key order, so that two worker processes never decide on the
-- same key at once and never deadlock. First defined by migration 0009; version 1 is that text.
CREATE OR REPLACE FUNCTION recon.lock_match_keys(p_keys text[])
RETURNS void LANGUAGE plpgsql VOLATILE AS $fn$
  DECLARE
    v_key bigint;
  BEGIN
    FOR v_key IN SELECT DISTINCT hashtextextended('match-key:' || k, 0) FROM unnest(p_keys) AS k ORDER BY 1 LOOP
      PERFORM pg_advisory_xact_lock(v_key);
    END LOOP;
  END
  $fn$
