-- Repeatable definition (src/db/sql/index.ts): the ingest statement (loops/IngestStore.ts). Each
-- SMS stored by recon.store_sms (migration 0005), its SmsForwarder signature recorded (a signature
-- seen before with another message is a replay, answered `replay` with nothing stored) and the
-- trace of the request that brought it (no statement and commit of their own). Signature locks are
-- taken after the body and remote-id locks, in key order, so concurrent batches never deadlock on
-- them. First defined by migration 0005, this text by migration 0017.
CREATE OR REPLACE FUNCTION recon.ingest_sms_batch(p_items jsonb, p_window interval)
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
$fn$
