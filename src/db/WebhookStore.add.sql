-- WebhookStore.add (WebhookStore.ts): a webhook added, answered as the list shows it (nothing
-- pending or failed yet). $1: its URL; $2: its secret; $3: its event types, a JSON array.
WITH added AS (
  INSERT INTO recon.webhook (url, secret, events)
  VALUES ($1, $2, ARRAY(SELECT jsonb_array_elements_text($3::jsonb)))
  RETURNING id, url, events, created_at)
SELECT id, url, events, created_at, 0 AS pending, 0 AS failed FROM added
