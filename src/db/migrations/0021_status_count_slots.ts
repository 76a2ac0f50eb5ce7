// The top-info counters of migration 0004 without a row every writer queues on. With one merchant
// account forwarded by two phones, every other SMS is stored as `duplicate`, so every ingest
// statement of every worker updated the one `duplicate` row and held its lock until its commit:
// the ingest of all workers ran one transaction at a time behind it. Each counter is now spread
// over 16 slots (a backend always writes the slot of its pid), created on first use; readers sum
// them through a view of the old table's name and columns. A slot may go below zero (a change
// counted down on another backend than the one that counted it up); the sums cannot.
export default [
  `CREATE TABLE recon.sms_status_count_slot (
    status text NOT NULL,
    slot smallint NOT NULL,
    n bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (status, slot)
  )`,
  `INSERT INTO recon.sms_status_count_slot (status, slot, n) SELECT status, 0, n FROM recon.sms_status_count`,
  `DROP TABLE recon.sms_status_count`,
  `CREATE VIEW recon.sms_status_count AS
    SELECT status, sum(n)::bigint AS n FROM recon.sms_status_count_slot GROUP BY status`,
  `CREATE OR REPLACE FUNCTION recon.count_sms_status() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    v_slot smallint := pg_backend_pid() % 16;
  BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
      INSERT INTO recon.sms_status_count_slot AS c (status, slot, n) VALUES (OLD.status, v_slot, -1)
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n - 1;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      INSERT INTO recon.sms_status_count_slot AS c (status, slot, n) VALUES (NEW.status, v_slot, 1)
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + 1;
    END IF;
    RETURN NULL;
  END
  $$`
]
