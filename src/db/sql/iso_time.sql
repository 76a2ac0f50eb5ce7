-- Repeatable definition (src/db/sql/index.ts): a time as DESIGN section 4 writes it (UTC, ISO
-- 8601, milliseconds), for events' data and answers (db/BalanceStore.ts, db/WebhookStore.ts, the
-- trigger function recon.sms_webhook_event). First defined by migration 0014; version 1 is that text.
CREATE OR REPLACE FUNCTION recon.iso_time(p timestamptz) RETURNS text LANGUAGE sql STABLE STRICT PARALLEL SAFE
  RETURN to_char(p AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
