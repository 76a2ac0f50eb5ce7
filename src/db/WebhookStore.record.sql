-- WebhookDeliveries.record (WebhookStore.ts): the attempt and the delivery's new state in one
-- statement; nothing when the delivery moved on meanwhile (its attempts no longer the one before
-- this) or was deleted. $1: the delivery's new status; $2: the attempt (1 for the first); $3: when
-- it is due again (NULL: never); $4: the delivery; $5: the attempt before this one; $6: the
-- attempt's status; $7: the HTTP status answered; $8: the error; $9: when it was made.
WITH moved AS (
  UPDATE recon.webhook_delivery SET status = $1, attempts = $2, next_at = $3
  WHERE id = $4 AND status = 'pending' AND attempts = $5
  RETURNING id, event_id, webhook_id)
INSERT INTO recon.webhook_attempt (delivery_id, event_id, webhook_id, attempt, status, http_status, error, at)
SELECT id, event_id, webhook_id, $2, $6, $7, $8, $9 FROM moved
RETURNING id
