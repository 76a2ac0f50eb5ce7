-- WhitelistStore.moveOn (WhitelistStore.ts): need_check SMS whose sender is now whitelisted and
-- whose device is now trusted, and which no operator has judged (check_result unset), moved on to
-- `received`, the oldest first, a batch at a time (SKIP LOCKED; FOR NO KEY UPDATE, which a foreign
-- key check's lock on the row, e.g. a copy's duplicate_of, does not conflict with). $1: the batch.
WITH held AS (
  SELECT s.id FROM recon.shooter_sms AS s
  JOIN recon.shooter_phone AS p ON p.phone = s.sender_normalized
  JOIN recon.shooter_device AS d ON d.device_id = s.device_id AND d.trusted
  WHERE s.status = 'need_check' AND s.check_result IS NULL
  ORDER BY s.id LIMIT $1
  FOR NO KEY UPDATE OF s SKIP LOCKED)
UPDATE recon.shooter_sms AS s SET status = 'received', updated_at = now()
FROM held WHERE s.id = held.id
RETURNING s.id
