-- Repeatable definition (src/db/sql/index.ts): one SMS stored, for recon.ingest_sms_batch
-- (ingest_sms_batch.sql): duplicate detection and the need_check rule (DESIGN section 6). The
-- caller holds the advisory locks of the SMS's body (and remote id, recon.lock_sms); VOLATILE, so
-- under READ COMMITTED each statement takes a fresh snapshot, taken after those locks were
-- granted: it sees any concurrent copy that held them before. First defined by migration 0005;
-- version 1 is that text.
CREATE OR REPLACE FUNCTION recon.store_sms(
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
    $fn$
