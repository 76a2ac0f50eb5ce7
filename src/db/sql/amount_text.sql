-- Repeatable definition (src/db/sql/index.ts): an amount as DESIGN section 4 writes it (no
-- trailing zeros of a whole amount), for events' data and answers (db/BalanceStore.ts,
-- db/SuggestionStore.ts, the trigger function recon.sms_webhook_event). First defined by
-- migration 0014; version 1 is that text.
CREATE OR REPLACE FUNCTION recon.amount_text(p numeric) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN CASE WHEN p = trunc(p) THEN trunc(p)::text ELSE p::text END
