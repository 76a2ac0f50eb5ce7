-- Repeatable definition (src/db/sql/index.ts): approving SMS due for a wallet call (never sent,
-- lease run out, backoff over), leased until p_until: [[sms id, deposit id, calls made], …].
-- Called by recon.match_pass. First defined by migration 0017.
CREATE OR REPLACE FUNCTION recon.lease_due_sms(p_now timestamptz, p_until timestamptz, p_limit integer)
  RETURNS jsonb LANGUAGE sql VOLATILE AS $fn$
  WITH due AS (
    SELECT id FROM recon.shooter_sms
    WHERE status = 'approving' AND deposit_id IS NOT NULL AND (match_next_at IS NULL OR match_next_at <= p_now)
    ORDER BY match_next_at NULLS FIRST, id LIMIT greatest(p_limit, 0) FOR UPDATE SKIP LOCKED
  ), leased AS (
    UPDATE recon.shooter_sms AS s SET match_next_at = p_until FROM due WHERE s.id = due.id
    RETURNING s.id, s.deposit_id, s.match_attempts
  )
  SELECT coalesce(jsonb_agg(jsonb_build_array(id, deposit_id, match_attempts) ORDER BY id), '[]'::jsonb) FROM leased
$fn$
