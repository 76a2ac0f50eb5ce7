-- Repeatable definition (src/db/sql/index.ts): the webhook outbox (db/WebhookStore.ts): an
-- event and its deliveries in the caller's transaction, and a NOTIFY that wakes
-- webhook_delivery_loop once it commits. Nothing at all when no webhook subscribes to the type:
-- one probe of a table of a few rows. Called by db/BalanceStore.ts and by the trigger function
-- recon.sms_webhook_event (migration 0014). First defined by migration 0014; version 1 is that text.
CREATE OR REPLACE FUNCTION recon.emit_event(p_type text, p_data jsonb)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
  DECLARE
    v_id bigint;
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM recon.webhook WHERE p_type = ANY (events)) THEN
      RETURN NULL;
    END IF;
    INSERT INTO recon.webhook_event (type, data) VALUES (p_type, p_data) RETURNING id INTO v_id;
    INSERT INTO recon.webhook_delivery (event_id, webhook_id)
      SELECT v_id, w.id FROM recon.webhook AS w WHERE p_type = ANY (w.events);
    PERFORM pg_notify('recon_changes', 'webhook_delivery');
    RETURN v_id;
  END
  $fn$
