-- Repeatable definition (src/db/sql/index.ts): order_match_loop's pass (loops/MatchStore.ts).
-- One pass in one statement (DESIGN section 6), for at most p_room wallet calls: approving SMS
-- due again take up to half of the room first (retries keep their share however many new SMS
-- wait); then up to p_batch parsed SMS, and the unmatched SMS of the deposits queued in
-- match_recheck, are claimed (SKIP LOCKED) and decided under the locks of their names
-- (recon.lock_match_keys, key order), each seeing the approvals decided before it; the room left
-- goes to due SMS again. Times come from the caller's clock (p_now, p_until: the lease of the
-- approvals it will send); the 24 h window of unmatched SMS is the server's. The decisions are
-- gathered in arrays appended in place and written by one statement at the end; a deposit's
-- "being approved" is asked of the SMS that name it (shooter_sms_deposit_idx, migration 0020).
-- First defined by migration 0017, this text by migration 0024 (0024_match_pass_text.sql);
-- version 1 is that text.
--
-- Version 2 (issue 32): the leases name their owner, the first of p_owners (recon.lease_due_sms
-- says how a dead owner's leases are taken over at once). A caller whose own owner's session is
-- gone (its lock free: the server restarted, or cut the connection) gets {"owner_lost": true} and
-- nothing else: it must take a new owner before it leases anything, or every other process would
-- take its new leases over while it sends them. p_owners empty: leases without an owner (0025's
-- wrapper for processes of an earlier release).
--
-- Version 3 (issue 32): SMS are claimed FOR NO KEY UPDATE, the lock a pass's own UPDATE takes
-- (it never changes an id), not FOR UPDATE. FOR UPDATE also conflicts with the FOR KEY SHARE a
-- foreign key check takes on the row it points to: the second phone's copy of an SMS (its
-- duplicate_of), a balance placement (balance_entry.sms_id) and balance_pending all hold one on
-- the SMS until they commit, and SKIP LOCKED skipped the SMS meanwhile, leaving it `parsed` with
-- no pass to come before the loop's next tick, 5 s later (bench/probe.ts PROBE_WHOLE=1: one SMS
-- in ten from two phones waited for it). Passes still exclude each other.
CREATE OR REPLACE FUNCTION recon.match_pass(p_now timestamptz, p_until timestamptz, p_room integer, p_batch integer, p_window interval, p_owners integer[])
RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_due jsonb := '[]';
  v_first integer := 0;
  v_budget integer;
  v_parsed bigint[];
  v_recheck bigint[];
  v_retried bigint[];
  v_sms record;
  v_candidates jsonb;
  v_n integer;
  v_players jsonb;
  v_player_count integer;
  v_decision text;
  v_reason text;
  v_deposit bigint;
  v_approving jsonb[] := '{}';
  v_writes jsonb[] := '{}';
  v_decided jsonb[] := '{}';
  v_taken bigint[] := '{}';
  v_approvals integer := 0;
  v_reviews integer := 0;
  v_unmatched_changed integer := 0;
  v_flagged bigint[] := '{}';
  v_decided_at text := to_char(p_now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  v_next double precision;
BEGIN
  -- Free only when no session holds it (taken, it holds until this transaction ends).
  IF cardinality(p_owners) > 0 AND pg_try_advisory_xact_lock(hashtext('recon.match_owner'), p_owners[1]) THEN
    RETURN jsonb_build_object('owner_lost', true);
  END IF;
  IF p_room > 0 THEN
    v_due := recon.lease_due_sms(p_now, p_until, (p_room + 1) / 2, p_owners);
    v_first := jsonb_array_length(v_due);
  END IF;
  v_budget := greatest(least(p_batch, p_room - v_first), 0);
  SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO v_parsed FROM (
    SELECT id FROM recon.shooter_sms WHERE status = 'parsed' ORDER BY id LIMIT v_budget FOR NO KEY UPDATE SKIP LOCKED) AS p;
  SELECT coalesce(array_agg(deposit_id), '{}') INTO v_recheck FROM (
    SELECT deposit_id FROM recon.match_recheck ORDER BY deposit_id
    LIMIT greatest(v_budget - cardinality(v_parsed), 0) FOR UPDATE SKIP LOCKED) AS r;
  DELETE FROM recon.match_recheck WHERE deposit_id = ANY (v_recheck);
  -- From here on no other process decides on these names until we commit, and every statement
  -- below sees the decisions committed before.
  PERFORM recon.lock_match_keys(ARRAY(
    SELECT payer_key FROM recon.shooter_sms WHERE id = ANY (v_parsed) AND payer_key <> ''
    UNION SELECT owner_key FROM recon.deposit WHERE id = ANY (v_recheck) AND status = 'pending' AND owner_key <> ''));
  SELECT coalesce(array_agg(id), '{}') INTO v_retried FROM (
    SELECT s.id FROM recon.shooter_sms AS s
    WHERE s.status = 'unmatched' AND s.match_started_at > now() - p_window
      AND (s.payer_key, s.amount) IN (SELECT d.owner_key, d.amount FROM recon.deposit AS d WHERE d.id = ANY (v_recheck) AND d.status = 'pending')
    ORDER BY s.id FOR NO KEY UPDATE OF s SKIP LOCKED) AS u;

  FOR v_sms IN SELECT s.id, s.status, s.payer_key AS key, s.amount FROM recon.shooter_sms AS s
      WHERE s.id = ANY (v_parsed || v_retried) ORDER BY s.id LOOP
    v_candidates := '[]';
    v_n := 0;
    v_players := '[]';
    v_player_count := 0;
    v_deposit := NULL;
    IF v_sms.key IS NULL OR v_sms.key = '' OR v_sms.amount IS NULL THEN
      v_decision := 'unmatched';
      v_reason := 'the SMS has no payer name or amount to match on';
    ELSE
      -- Pending deposits of this name and amount that no SMS is being approved against, nor
      -- taken by an approval decided earlier in this loop.
      SELECT coalesce(jsonb_agg(jsonb_build_object('deposit_id', d.id, 'player_id', d.player_id,
          'from_bank_owner', d.from_bank_owner, 'amount', d.amount::text) ORDER BY d.id), '[]'), count(*)
        INTO v_candidates, v_n
        FROM recon.deposit AS d
        WHERE d.status = 'pending' AND d.owner_key = v_sms.key AND d.amount = v_sms.amount AND d.id <> ALL (v_taken)
          AND (SELECT bool_or(a.status = 'approving') FROM recon.shooter_sms AS a WHERE a.deposit_id = d.id) IS NOT TRUE;
      SELECT count(*), coalesce(to_jsonb((array_agg(id ORDER BY id))[1:10]), '[]')
        INTO v_player_count, v_players
        FROM recon.player WHERE name_key = v_sms.key;
      IF v_n = 0 THEN
        v_decision := 'unmatched';
        v_reason := 'no pending deposit with this name and amount';
      ELSIF v_player_count > 1 THEN
        v_decision := 'manual_review';
        v_reason := format('%s players share the name', v_player_count);
      ELSIF v_n > 1 THEN
        v_decision := 'manual_review';
        v_reason := format('%s pending deposits match the name and amount', v_n);
      ELSE
        v_decision := 'approving';
        v_reason := 'exactly one pending deposit matches';
        v_deposit := (v_candidates -> 0 ->> 'deposit_id')::bigint;
      END IF;
    END IF;
    -- An unmatched SMS still without a candidate is left as it is.
    CONTINUE WHEN v_sms.status = 'unmatched' AND v_decision = 'unmatched';
    v_decided := array_append(v_decided, jsonb_build_array(v_sms.id, v_decision));
    v_writes := array_append(v_writes, jsonb_build_object('id', v_sms.id, 'status', v_decision, 'deposit_id', v_deposit,
      'detail', jsonb_build_object('decision', v_decision, 'reason', v_reason, 'name_key', v_sms.key,
        'amount', v_sms.amount::text, 'candidates', v_candidates, 'players', v_players,
        'player_count', v_player_count, 'decided_at', v_decided_at)));
    IF v_decision = 'approving' THEN
      v_taken := v_taken || v_deposit;
      v_approving := array_append(v_approving, jsonb_build_array(v_sms.id, v_deposit, 0));
      v_approvals := v_approvals + 1;
    ELSIF v_decision = 'manual_review' THEN
      v_reviews := v_reviews + 1;
      v_flagged := v_flagged || ARRAY(SELECT (c ->> 'deposit_id')::bigint FROM jsonb_array_elements(v_candidates) AS c);
    END IF;
    IF (v_sms.status = 'unmatched') <> (v_decision = 'unmatched') THEN
      v_unmatched_changed := v_unmatched_changed + 1;
    END IF;
  END LOOP;
  -- The decisions in one statement (each approval leased until p_until).
  UPDATE recon.shooter_sms AS s SET
    status = x.status, deposit_id = x.deposit_id, match_detail = x.detail, match_attempts = 0,
    match_next_at = CASE WHEN x.status = 'approving' THEN p_until END,
    match_owner = CASE WHEN x.status = 'approving' THEN p_owners[1] END, updated_at = now()
  FROM unnest(v_writes) AS w(item), jsonb_to_record(w.item) AS x(id bigint, status text, deposit_id bigint, detail jsonb)
  WHERE s.id = x.id;
  UPDATE recon.deposit SET task_status = 6
    WHERE id = ANY (v_flagged) AND status = 'pending' AND task_status IS DISTINCT FROM 6;

  IF v_first = (p_room + 1) / 2 AND p_room - v_first - v_approvals > 0 THEN
    v_due := v_due || recon.lease_due_sms(p_now, p_until, p_room - v_first - v_approvals, p_owners);
  END IF;
  -- When the next approving SMS is due (now: one is due already), in ms since the epoch.
  SELECT extract(epoch FROM coalesce(match_next_at, p_now)) * 1000 INTO v_next
    FROM recon.shooter_sms WHERE status = 'approving' AND deposit_id IS NOT NULL ORDER BY match_next_at NULLS FIRST, id LIMIT 1;
  RETURN jsonb_build_object(
    'due', v_due,
    'decided', to_jsonb(v_decided),
    'approving', to_jsonb(v_approving),
    'reviews', v_reviews,
    'unmatched_changed', v_unmatched_changed,
    'claimed', cardinality(v_parsed) + cardinality(v_retried),
    'more', v_budget > 0 AND cardinality(v_parsed) + cardinality(v_recheck) >= v_budget,
    'next_due_ms', v_next);
END
$fn$
