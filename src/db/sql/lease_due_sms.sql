-- Repeatable definition (src/db/sql/index.ts): approving SMS due for a wallet call (never sent,
-- lease run out, backoff over), leased until p_until: [[sms id, deposit id, calls made], …].
-- Called by recon.match_pass. First defined by migration 0017.
--
-- plpgsql, not LANGUAGE sql (version 2, issue 32): before PostgreSQL 18 a LANGUAGE sql function
-- that is not inlined (this one writes) is parsed and planned again at every call; every pass of
-- order_match_loop calls it once or twice, and on PostgreSQL 15 it spent 0.72 ms a call of its own
-- for a statement that runs in 0.04 ms. plpgsql keeps the plan per connection (0.18 ms a call).
CREATE OR REPLACE FUNCTION recon.lease_due_sms(p_now timestamptz, p_until timestamptz, p_limit integer)
  RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
  DECLARE
    v_leased jsonb;
  BEGIN
    WITH due AS (
      SELECT id FROM recon.shooter_sms
      WHERE status = 'approving' AND deposit_id IS NOT NULL AND (match_next_at IS NULL OR match_next_at <= p_now)
      ORDER BY match_next_at NULLS FIRST, id LIMIT greatest(p_limit, 0) FOR UPDATE SKIP LOCKED
    ), leased AS (
      UPDATE recon.shooter_sms AS s SET match_next_at = p_until FROM due WHERE s.id = due.id
      RETURNING s.id, s.deposit_id, s.match_attempts
    )
    SELECT coalesce(jsonb_agg(jsonb_build_array(leased.id, leased.deposit_id, leased.match_attempts) ORDER BY leased.id), '[]'::jsonb)
      INTO v_leased FROM leased;
    RETURN v_leased;
  END
$fn$
