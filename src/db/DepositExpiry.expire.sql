-- DepositExpiry.expire (DepositExpiry.ts): pending deposits created before the cutoff, none that an
-- SMS is being approved against, become `expired` (their review flag goes with them), the oldest
-- first, a batch at a time. $1: the cutoff; $2: the batch.
WITH due AS (
  SELECT d.id FROM recon.deposit AS d
  -- The last clause is the index's (migration 0018): without it the index is not used.
  WHERE d.status = 'pending' AND d.created_at < $1 AND d.created_at < 'infinity'
    AND NOT EXISTS (SELECT 1 FROM recon.shooter_sms AS a WHERE a.status = 'approving' AND a.deposit_id = d.id)
  ORDER BY d.created_at, d.id LIMIT $2
  FOR UPDATE SKIP LOCKED)
UPDATE recon.deposit AS d SET status = 'expired', task_status = NULL FROM due WHERE d.id = due.id
RETURNING d.id
