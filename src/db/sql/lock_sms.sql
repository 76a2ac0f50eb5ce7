-- Repeatable definition (src/db/sql/index.ts): the locks of an ingest, for
-- recon.ingest_sms_batch (ingest_sms_batch.sql): every body lock, then every remote-id lock, each
-- set in key order. One order for every caller, so concurrent ingests (in any process) never
-- deadlock. First defined by migration 0005; version 1 is that text.
CREATE OR REPLACE FUNCTION recon.lock_sms(p_bodies text[], p_remotes text[])
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
    $fn$
