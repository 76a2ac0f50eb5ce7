-- WebhookDeliveries.claim (WebhookStore.ts): due deliveries (never tried, or their backoff or a
-- dead process's lease over) leased to this process, at most $2 in flight for any webhook counting
-- this process's own ($3), the oldest first within a webhook, at most $4 in all. $1: now; $2:
-- the deliveries in flight per webhook at most; $3: this process's in flight, {webhook id: n} as
-- JSON; $4: the deliveries claimed at most; $5: the lease's end.
WITH due AS (
  SELECT d.id, d.webhook_id, row_number() OVER (PARTITION BY d.webhook_id ORDER BY d.next_at NULLS FIRST, d.id) AS rank
  FROM recon.webhook AS w
  CROSS JOIN LATERAL (
    SELECT d.id, d.webhook_id, d.next_at FROM recon.webhook_delivery AS d
    WHERE d.webhook_id = w.id AND d.status = 'pending' AND (d.next_at IS NULL OR d.next_at <= $1)
    ORDER BY d.next_at NULLS FIRST, d.id LIMIT $2
    FOR UPDATE SKIP LOCKED) AS d),
picked AS (
  SELECT due.id FROM due
  LEFT JOIN jsonb_each_text($3::jsonb) AS busy(webhook_id, n) ON busy.webhook_id = due.webhook_id::text
  WHERE due.rank <= $2 - COALESCE(busy.n::int, 0)
  ORDER BY due.rank, due.id LIMIT $4)
UPDATE recon.webhook_delivery AS d SET next_at = $5, first_attempt_at = COALESCE(d.first_attempt_at, $1)
FROM picked, recon.webhook AS w, recon.webhook_event AS e
WHERE d.id = picked.id AND w.id = d.webhook_id AND e.id = d.event_id
RETURNING d.id, d.event_id, d.webhook_id, d.attempts, d.first_attempt_at, w.url, w.secret, e.type, e.data,
  recon.iso_time(e.created_at) AS created_at
