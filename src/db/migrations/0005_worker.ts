// What the worker keeps beside the SMS: the SMS Gateway's own id of each phone (its export API
// asks for it), the sender in the whitelist's form, the indexes the loops look up by, and the
// ingest of one SMS as one statement.
export default [
  // normalizePhone(sender) at ingest, so phone_whitelist_loop compares exactly as the push endpoint did.
  `ALTER TABLE recon.shooter_sms ADD COLUMN sender_normalized text`,
  // The newest SMS of a device (silence, export windows, last_event_at).
  `CREATE INDEX shooter_sms_device_received_idx ON recon.shooter_sms (device_id, received_at DESC)`,
  `CREATE INDEX shooter_sms_need_check_idx ON recon.shooter_sms (sender_normalized) WHERE status = 'need_check'`,
  `ALTER TABLE recon.shooter_push ADD COLUMN remote_device_id text`,
  // The original an SMS is a duplicate of: looked up by duplicate_of when links are repaired.
  `CREATE INDEX shooter_sms_duplicate_of_idx ON recon.shooter_sms (duplicate_of) WHERE duplicate_of IS NOT NULL`,
  // One SMS stored: duplicate detection and the need_check rule (DESIGN section 6). The caller
  // holds the advisory locks of the SMS's body (and remote id); VOLATILE, so under READ COMMITTED
  // each statement takes a fresh snapshot, taken after those locks were granted: it sees any
  // concurrent copy that held them before.
  `CREATE FUNCTION recon.store_sms(
      p_device_id text, p_sender text, p_sender_normalized text, p_body text, p_normalized_body text,
      p_remote_id text, p_received_at timestamptz, p_remote_device_id text, p_ensure_device boolean,
      p_window interval)
    RETURNS TABLE (sms_id bigint, sms_status text)
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      v_original bigint;
      v_status text;
      v_id bigint;
    BEGIN
      IF p_ensure_device THEN
        INSERT INTO recon.shooter_device (device_id) VALUES (p_device_id) ON CONFLICT (device_id) DO NOTHING;
      END IF;
      IF p_remote_device_id IS NOT NULL THEN
        UPDATE recon.shooter_push SET remote_device_id = p_remote_device_id
          WHERE device_id = p_device_id AND remote_device_id IS DISTINCT FROM p_remote_device_id;
      END IF;
      SELECT min(found.id) INTO v_original FROM (
        (SELECT s.id FROM recon.shooter_sms AS s
          WHERE s.normalized_body = p_normalized_body AND s.status <> 'duplicate'
            AND s.received_at BETWEEN p_received_at - p_window AND p_received_at + p_window
          ORDER BY s.id LIMIT 1)
        UNION ALL
        (SELECT s.id FROM recon.shooter_sms AS s
          WHERE p_remote_id IS NOT NULL AND s.device_id = p_device_id AND s.remote_id = p_remote_id
            AND s.status <> 'duplicate'
          ORDER BY s.id LIMIT 1)
      ) AS found;
      IF v_original IS NOT NULL THEN
        v_status := 'duplicate';
      ELSIF COALESCE((SELECT d.trusted FROM recon.shooter_device AS d WHERE d.device_id = p_device_id), false)
        AND EXISTS (SELECT 1 FROM recon.shooter_phone AS ph WHERE ph.phone = p_sender_normalized) THEN
        v_status := 'received';
      ELSE
        v_status := 'need_check';
      END IF;
      INSERT INTO recon.shooter_sms
          (device_id, sender, sender_normalized, body, normalized_body, remote_id, received_at, status, duplicate_of)
        VALUES (p_device_id, p_sender, p_sender_normalized, p_body, p_normalized_body, p_remote_id, p_received_at,
          v_status, v_original)
        RETURNING id INTO v_id;
      RETURN QUERY SELECT v_id, v_status;
    END
    $fn$`,
  // The locks: every body lock, then every remote-id lock, each set in key order. One order for
  // every caller, so concurrent ingests (single or batched, in any process) never deadlock.
  `CREATE FUNCTION recon.lock_sms(p_bodies text[], p_remotes text[])
    RETURNS void LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      v_key bigint;
    BEGIN
      FOR v_key IN SELECT DISTINCT hashtextextended('sms-body:' || b, 0) FROM unnest(p_bodies) AS b ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(v_key);
      END LOOP;
      FOR v_key IN SELECT DISTINCT hashtextextended('sms-remote:' || r, 0) FROM unnest(p_remotes) AS r
          WHERE r IS NOT NULL ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(v_key);
      END LOOP;
    END
    $fn$`,
  // A batch of SMS (JSON array) in one statement and one transaction: the locks of all, then
  // each stored in order; a copy later in the batch is a duplicate of one earlier in it.
  `CREATE FUNCTION recon.ingest_sms_batch(p_items jsonb, p_window interval)
    RETURNS TABLE (ord bigint, sms_id bigint, sms_status text)
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      v_item record;
    BEGIN
      PERFORM recon.lock_sms(
        ARRAY(SELECT x.normalized_body FROM jsonb_to_recordset(p_items) AS x(normalized_body text)),
        ARRAY(SELECT x.device_id || ':' || x.remote_id FROM jsonb_to_recordset(p_items) AS x(device_id text, remote_id text)));
      FOR v_item IN
        SELECT x.*, i.ord FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(item, ord),
          jsonb_to_record(i.item) AS x(device_id text, sender text, sender_normalized text, body text,
            normalized_body text, remote_id text, received_at timestamptz, remote_device_id text, ensure_device boolean)
        ORDER BY i.ord
      LOOP
        RETURN QUERY SELECT v_item.ord, stored.sms_id, stored.sms_status FROM recon.store_sms(
          v_item.device_id, v_item.sender, v_item.sender_normalized, v_item.body, v_item.normalized_body,
          v_item.remote_id, v_item.received_at, v_item.remote_device_id, COALESCE(v_item.ensure_device, false),
          p_window) AS stored;
      END LOOP;
    END
    $fn$`
]
