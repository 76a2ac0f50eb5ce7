// Plans kept between calls on PostgreSQL 15 to 17 (issue 32). A LANGUAGE sql function that is not
// inlined is parsed and planned again at every call before PostgreSQL 18: recon.lease_due_sms,
// called once or twice by every pass of order_match_loop, spent 0.7 ms a call planning its
// two-CTE statement (pg_stat_user_functions on Debian's 15: 0.72 ms of its own time a call, its
// statement 0.04 ms). The same statement in plpgsql is planned once per connection.
export default [
  `CREATE OR REPLACE FUNCTION recon.lease_due_sms(p_now timestamptz, p_until timestamptz, p_limit integer)
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
    $fn$`

]
