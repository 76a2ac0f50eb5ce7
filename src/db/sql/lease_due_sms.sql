-- Repeatable definition (src/db/sql/index.ts): approving SMS due for a wallet call (never sent,
-- lease run out, backoff over, or leased by a process that has died), leased to the first of
-- p_owners until p_until: [[sms id, deposit id, calls made], …]. Called by recon.match_pass.
-- First defined by migration 0017.
--
-- Version 3 (issue 32): a lease names its owner (match_owner, migration 0025), a number the
-- leasing process holds a session advisory lock on (hashtext('recon.match_owner'), owner) for as
-- long as it lives (loops/MatchStore.ts). A lease whose owner no session holds any more (the
-- process was killed, or its connection to the server was lost) is due at once, not when its time
-- runs out: the try lock below succeeds only when no other session holds the owner's lock. The
-- caller's own numbers, p_owners (its current one first, then those it held before a lost
-- connection), are never taken over: what it leased under them may still be in a call.
-- p_owners empty: the leases name no owner (a process of an earlier release, through migration
-- 0025's wrapper), and are only ever due when their time runs out.
--
-- plpgsql, not LANGUAGE sql (version 2, issue 32): before PostgreSQL 18 a LANGUAGE sql function
-- that is not inlined (this one writes) is parsed and planned again at every call; every pass of
-- order_match_loop calls it once or twice, and on PostgreSQL 15 it spent 0.72 ms a call of its own
-- for a statement that runs in 0.04 ms. plpgsql keeps the plan per connection (0.18 ms a call).
--
-- Version 4: due SMS claimed FOR NO KEY UPDATE, not FOR UPDATE, which a foreign key check's FOR
-- KEY SHARE on the row (a balance placement, a person's approval request, a decision recorded)
-- made SKIP LOCKED pass over (recon.match_pass v3 says more).
CREATE OR REPLACE FUNCTION recon.lease_due_sms(p_now timestamptz, p_until timestamptz, p_limit integer, p_owners integer[])
  RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
  DECLARE
    v_leased jsonb;
    v_dead integer[];
  BEGIN
    -- The other owners of leases still running (a few: one per worker process), and of those the
    -- ones whose session is gone. A try lock taken holds until this transaction ends.
    SELECT coalesce(array_agg(others.owner), '{}') INTO v_dead FROM (
      SELECT DISTINCT match_owner AS owner FROM recon.shooter_sms
      WHERE status = 'approving' AND match_next_at > p_now AND match_owner IS NOT NULL
        AND match_owner <> ALL (p_owners)) AS others
    WHERE pg_try_advisory_xact_lock(hashtext('recon.match_owner'), others.owner);
    WITH due AS (
      SELECT id FROM recon.shooter_sms
      WHERE status = 'approving' AND deposit_id IS NOT NULL
        AND (match_next_at IS NULL OR match_next_at <= p_now OR match_owner = ANY (v_dead))
      ORDER BY match_next_at NULLS FIRST, id LIMIT greatest(p_limit, 0) FOR NO KEY UPDATE SKIP LOCKED
    ), leased AS (
      UPDATE recon.shooter_sms AS s SET match_next_at = p_until, match_owner = p_owners[1] FROM due WHERE s.id = due.id
      RETURNING s.id, s.deposit_id, s.match_attempts
    )
    SELECT coalesce(jsonb_agg(jsonb_build_array(leased.id, leased.deposit_id, leased.match_attempts) ORDER BY leased.id), '[]'::jsonb)
      INTO v_leased FROM leased;
    RETURN v_leased;
  END
$fn$
