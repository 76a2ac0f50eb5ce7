// The four top-info counters kept by a trigger, so reading them costs the same at a million SMS
// as at ten. Only the counted statuses have a row: other status changes touch nothing here.
export default [
  `CREATE TABLE recon.sms_status_count (
    status text PRIMARY KEY,
    n bigint NOT NULL DEFAULT 0 CHECK (n >= 0)
  )`,
  `INSERT INTO recon.sms_status_count (status, n)
    SELECT s, (SELECT count(*) FROM recon.shooter_sms WHERE status = s)
    FROM unnest(ARRAY['need_check', 'parse_failed', 'unmatched', 'duplicate']) AS s`,
  `CREATE FUNCTION recon.count_sms_status() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
      UPDATE recon.sms_status_count SET n = n - 1 WHERE status = OLD.status;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      UPDATE recon.sms_status_count SET n = n + 1 WHERE status = NEW.status;
    END IF;
    RETURN NULL;
  END
  $$`,
  // The WHEN clauses keep the trigger off the hot path of the statuses nobody counts.
  `CREATE TRIGGER shooter_sms_count_insert AFTER INSERT ON recon.shooter_sms FOR EACH ROW
    WHEN (NEW.status IN ('need_check', 'parse_failed', 'unmatched', 'duplicate'))
    EXECUTE FUNCTION recon.count_sms_status()`,
  `CREATE TRIGGER shooter_sms_count_update AFTER UPDATE OF status ON recon.shooter_sms FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status AND (OLD.status IN ('need_check', 'parse_failed', 'unmatched', 'duplicate')
      OR NEW.status IN ('need_check', 'parse_failed', 'unmatched', 'duplicate')))
    EXECUTE FUNCTION recon.count_sms_status()`,
  `CREATE TRIGGER shooter_sms_count_delete AFTER DELETE ON recon.shooter_sms FOR EACH ROW
    WHEN (OLD.status IN ('need_check', 'parse_failed', 'unmatched', 'duplicate'))
    EXECUTE FUNCTION recon.count_sms_status()`
]
