// The money path in fewer round trips (issue 22): the SmsForwarder signature recorded in the ingest
// statement; a version of the template table that only a change moves (parse_loop reloads on it,
// read in its claim); the deposits to look at again for unmatched SMS, queued by triggers instead
// of searched on every pass; order_match_loop's whole decision as one function; and
// wallet_service's approval of several deposits in one transaction.
export default [
  // Statement-level, once per writing statement: the version parse_loop compares with the one it
  // compiled, read in the statement that claims SMS (no read of its own). A row, not a sequence: a
  // sequence moves before its writer commits, and a reload then could miss the change for good.
  // The NOTIFY reaches every worker at once whoever wrote (recon_service, or SQL by hand).
  `CREATE TABLE recon.template_version (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version bigint NOT NULL
  )`,
  `INSERT INTO recon.template_version (version) VALUES (1)`,
  `CREATE FUNCTION recon.bump_template_version() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    UPDATE recon.template_version SET version = version + 1;
    PERFORM pg_notify('recon_changes', 'shooter_template_recharge');
    RETURN NULL;
  END
  $fn$`,
  `CREATE TRIGGER shooter_template_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON recon.shooter_template_recharge
    FOR EACH STATEMENT EXECUTE FUNCTION recon.bump_template_version()`,

  // Deposits an unmatched SMS may now match: one that became pending or changed (name, amount),
  // and one an approving SMS let go of without being credited (the wallet's 409/404). Written in
  // the writer's transaction, so order_match_loop sees a row exactly when the change is committed;
  // it takes the rows (SKIP LOCKED, one worker each) and decides the unmatched SMS of those names
  // and amounts again, instead of searching every unmatched SMS on every pass.
  `CREATE TABLE recon.match_recheck (deposit_id bigint PRIMARY KEY)`,
  // The triggers of migration 0009 on a pending deposit created or changed (they also NOTIFY).
  `CREATE OR REPLACE FUNCTION recon.notify_deposit() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    INSERT INTO recon.match_recheck (deposit_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
    PERFORM pg_notify('recon_changes', 'deposit');
    RETURN NULL;
  END
  $fn$`,
  `CREATE FUNCTION recon.sms_released_deposit() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    INSERT INTO recon.match_recheck (deposit_id) VALUES (OLD.deposit_id) ON CONFLICT DO NOTHING;
    RETURN NULL;
  END
  $fn$`,
  `CREATE TRIGGER shooter_sms_deposit_released AFTER UPDATE OF status ON recon.shooter_sms FOR EACH ROW
    WHEN (OLD.status = 'approving' AND NEW.status <> 'approved' AND OLD.deposit_id IS NOT NULL)
    EXECUTE FUNCTION recon.sms_released_deposit()`,
  // Every deposit pending now is looked at once, as every pass did before this migration.
  `INSERT INTO recon.match_recheck (deposit_id) SELECT id FROM recon.deposit WHERE status = 'pending'`,

  // Approving SMS due for a wallet call (never sent, lease run out, backoff over), leased until
  // p_until: [[sms id, deposit id, calls made], …].
  `CREATE FUNCTION recon.lease_due_sms(p_now timestamptz, p_until timestamptz, p_limit integer)
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
  $fn$`,

  // One pass of order_match_loop in one statement (DESIGN section 6), for at most p_room wallet
  // calls: approving SMS due again take up to half of the room first (retries keep their share
  // however many new SMS wait); then up to p_batch parsed SMS, and the unmatched SMS of the
  // deposits queued in match_recheck, are claimed (SKIP LOCKED) and decided under the locks of
  // their names (recon.lock_match_keys, key order), each seeing the approvals decided before it;
  // the room left goes to due SMS again. Times come from the caller's clock (p_now, p_until: the
  // lease of the approvals it will send); the 24 h window of unmatched SMS is the server's. The
  // decisions are written by one statement at the end.
  `CREATE FUNCTION recon.match_pass(p_now timestamptz, p_until timestamptz, p_room integer, p_batch integer, p_window interval)
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
      v_approving jsonb := '[]';
      v_writes jsonb := '[]';
      v_decided jsonb := '[]';
      v_taken bigint[] := '{}';
      v_approvals integer := 0;
      v_reviews integer := 0;
      v_unmatched_changed integer := 0;
      v_flagged bigint[] := '{}';
      v_decided_at text := to_char(p_now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
      v_next double precision;
    BEGIN
      IF p_room > 0 THEN
        v_due := recon.lease_due_sms(p_now, p_until, (p_room + 1) / 2);
        v_first := jsonb_array_length(v_due);
      END IF;
      v_budget := greatest(least(p_batch, p_room - v_first), 0);
      SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO v_parsed FROM (
        SELECT id FROM recon.shooter_sms WHERE status = 'parsed' ORDER BY id LIMIT v_budget FOR UPDATE SKIP LOCKED) AS p;
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
        ORDER BY s.id FOR UPDATE OF s SKIP LOCKED) AS u;

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
              AND NOT EXISTS (SELECT 1 FROM recon.shooter_sms AS a WHERE a.status = 'approving' AND a.deposit_id = d.id);
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
        v_decided := v_decided || jsonb_build_array(jsonb_build_array(v_sms.id, v_decision));
        v_writes := v_writes || jsonb_build_object('id', v_sms.id, 'status', v_decision, 'deposit_id', v_deposit,
          'detail', jsonb_build_object('decision', v_decision, 'reason', v_reason, 'name_key', v_sms.key,
            'amount', v_sms.amount::text, 'candidates', v_candidates, 'players', v_players,
            'player_count', v_player_count, 'decided_at', v_decided_at));
        IF v_decision = 'approving' THEN
          v_taken := v_taken || v_deposit;
          v_approving := v_approving || jsonb_build_array(jsonb_build_array(v_sms.id, v_deposit, 0));
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
        match_next_at = CASE WHEN x.status = 'approving' THEN p_until END, updated_at = now()
      FROM jsonb_to_recordset(v_writes) AS x(id bigint, status text, deposit_id bigint, detail jsonb)
      WHERE s.id = x.id;
      UPDATE recon.deposit SET task_status = 6
        WHERE id = ANY (v_flagged) AND status = 'pending' AND task_status IS DISTINCT FROM 6;

      IF v_first = (p_room + 1) / 2 AND p_room - v_first - v_approvals > 0 THEN
        v_due := v_due || recon.lease_due_sms(p_now, p_until, p_room - v_first - v_approvals);
      END IF;
      -- When the next approving SMS is due (now: one is due already), in ms since the epoch.
      SELECT extract(epoch FROM coalesce(match_next_at, p_now)) * 1000 INTO v_next
        FROM recon.shooter_sms WHERE status = 'approving' AND deposit_id IS NOT NULL ORDER BY match_next_at NULLS FIRST, id LIMIT 1;
      RETURN jsonb_build_object(
        'due', v_due,
        'decided', v_decided,
        'approving', v_approving,
        'reviews', v_reviews,
        'unmatched_changed', v_unmatched_changed,
        'claimed', cardinality(v_parsed) + cardinality(v_retried),
        'more', v_budget > 0 AND cardinality(v_parsed) + cardinality(v_recheck) >= v_budget,
        'next_due_ms', v_next);
    END
    $fn$`,

  // The ingest statement of migration 0005, now also recording the SmsForwarder signatures of
  // its SMS and the trace of the request that brought each (no statement and commit of their
  // own): a signature seen before with another message is a replay, answered `replay` with nothing stored. Signature locks are taken after the body
  // and remote-id locks, in key order, so concurrent batches never deadlock on them.
  `CREATE OR REPLACE FUNCTION recon.ingest_sms_batch(p_items jsonb, p_window interval)
    RETURNS TABLE (ord bigint, sms_id bigint, sms_status text)
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      v_item record;
      v_key bigint;
      v_digest text;
      v_id bigint;
      v_status text;
    BEGIN
      PERFORM recon.lock_sms(
        ARRAY(SELECT x.normalized_body FROM jsonb_to_recordset(p_items) AS x(normalized_body text)),
        ARRAY(SELECT x.device_id || ':' || x.remote_id FROM jsonb_to_recordset(p_items) AS x(device_id text, remote_id text)));
      FOR v_key IN SELECT DISTINCT hashtextextended('sms-sign:' || x.device_id || ':' || x.sign, 0)
          FROM jsonb_to_recordset(p_items) AS x(device_id text, sign text) WHERE x.sign IS NOT NULL ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(v_key);
      END LOOP;
      FOR v_item IN
        SELECT x.*, i.ord FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(item, ord),
          jsonb_to_record(i.item) AS x(device_id text, sender text, sender_normalized text, body text,
            normalized_body text, remote_id text, received_at timestamptz, remote_device_id text, ensure_device boolean,
            sign text, sign_digest text, sign_expires_at timestamptz, trace_parent text)
        ORDER BY i.ord
      LOOP
        IF v_item.sign IS NOT NULL THEN
          INSERT INTO recon.push_signature (device_id, signature, digest, expires_at)
            VALUES (v_item.device_id, v_item.sign, v_item.sign_digest, v_item.sign_expires_at)
            ON CONFLICT (device_id, signature) DO NOTHING;
          SELECT ps.digest INTO v_digest FROM recon.push_signature AS ps
            WHERE ps.device_id = v_item.device_id AND ps.signature = v_item.sign;
          IF v_digest IS DISTINCT FROM v_item.sign_digest THEN
            RETURN QUERY SELECT v_item.ord, NULL::bigint, 'replay'::text;
            CONTINUE;
          END IF;
        END IF;
        SELECT stored.sms_id, stored.sms_status INTO v_id, v_status FROM recon.store_sms(
          v_item.device_id, v_item.sender, v_item.sender_normalized, v_item.body, v_item.normalized_body,
          v_item.remote_id, v_item.received_at, v_item.remote_device_id, COALESCE(v_item.ensure_device, false),
          p_window) AS stored;
        -- The trace of the request (migration 0016), in the same statement: no loop sees the SMS without it.
        IF v_item.trace_parent IS NOT NULL THEN
          UPDATE recon.shooter_sms SET trace_parent = v_item.trace_parent WHERE id = v_id;
        END IF;
        RETURN QUERY SELECT v_item.ord, v_id, v_status;
      END LOOP;
    END
    $fn$`,

  // wallet_service's POST /deposit/agree_batch: each item decided exactly as wallet.agree decides
  // one (the same function, the same constraints), all in one transaction and one commit. Each in
  // its own subtransaction, so the unique_violation of two deposits racing for one SMS makes that
  // item a conflict, not the batch a failure. Items are taken in (player, deposit) order, the order
  // in which an approval locks its deposit and then its player's balance, so concurrent batches
  // never wait on each other in a circle. Answers each item's outcome by its place in p_items.
  `CREATE FUNCTION wallet.agree_batch(p_items jsonb)
    RETURNS TABLE (ord bigint, outcome text, detail text)
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      v_item record;
      v_outcome text;
      v_detail text;
    BEGIN
      FOR v_item IN
        SELECT i.ord AS item_ord, x.deposit_id AS item_deposit, x.sms_id AS item_sms
        FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(item, ord),
          jsonb_to_record(i.item) AS x(deposit_id bigint, sms_id bigint)
        LEFT JOIN recon.deposit AS d ON d.id = x.deposit_id
        ORDER BY d.player_id NULLS LAST, x.deposit_id, i.ord
      LOOP
        BEGIN
          SELECT a.outcome, a.detail INTO v_outcome, v_detail FROM wallet.agree(v_item.item_deposit, v_item.item_sms) AS a;
        EXCEPTION WHEN unique_violation THEN
          v_outcome := 'conflict';
          v_detail := CASE WHEN v_item.item_sms IS NULL THEN 'the SMS already funds another deposit'
            ELSE format('SMS %s already funds another deposit', v_item.item_sms) END;
        END;
        RETURN QUERY SELECT v_item.item_ord, v_outcome, v_detail;
      END LOOP;
    END
    $fn$`
]
