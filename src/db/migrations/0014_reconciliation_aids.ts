// Reconciliation aids (DESIGN section 11): the loose name key suggestions search pending deposits
// by; deposit expiry's index; balance continuity (accounts, the balance facts of their messages,
// the open gaps); and webhooks to the merchant's platform as a transactional outbox: events written
// by triggers in the transaction of the status change that causes them, one delivery per webhook.
export default [
  // Suggestions: a name compared loosely. NFKC (㈜ is (주), full-width letters are ASCII), lower
  // case for ASCII (whatever the server's locale), and white space (the same list as
  // recon.name_key), separators (. _ · - and their look-alikes) and brackets removed. A `*` (a
  // masked character) is kept. src/domain/Suggestions.ts looseNameKey is the same function.
  `CREATE FUNCTION recon.loose_name_key(p_name text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN translate(regexp_replace(normalize(p_name, NFKC),
      '[][(){}<>\\u0009-\\u000d\\u0020\\u0085\\u00a0\\u1680\\u180e\\u2000-\\u200b\\u2028\\u2029\\u202f\\u205f\\u2060\\u3000\\ufeff._\\u00b7\\u318d\\u119e\\u30fb\\u2022\\u2027\\u2010-\\u2015\\u2212-]+', '', 'g'),
      'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`,
  // In C collation, so one index answers equality and prefix ranges (a truncated or masked name).
  `ALTER TABLE recon.deposit ADD COLUMN owner_loose_key text COLLATE "C" GENERATED ALWAYS AS (recon.loose_name_key(from_bank_owner)) STORED`,
  `CREATE INDEX deposit_pending_loose_idx ON recon.deposit (owner_loose_key) WHERE status = 'pending'`,
  // A masked name whose first character is hidden (`*철수`) is searched from its end.
  `CREATE INDEX deposit_pending_loose_reverse_idx ON recon.deposit ((reverse(owner_loose_key))) WHERE status = 'pending'`,
  // An SMS's siblings for sum_of_sms: the payer's other SMS still waiting for a person.
  `CREATE INDEX shooter_sms_review_payer_idx ON recon.shooter_sms (payer_key, received_at) WHERE status IN ('unmatched', 'manual_review')`,

  // Deposit expiry: the oldest pending deposits first.
  `CREATE INDEX deposit_pending_created_idx ON recon.deposit (created_at, id) WHERE status = 'pending'`,

  // Values as DESIGN section 4 writes them, for the events' data.
  `CREATE FUNCTION recon.amount_text(p numeric) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE WHEN p = trunc(p) THEN trunc(p)::text ELSE p::text END`,
  `CREATE FUNCTION recon.iso_time(p timestamptz) RETURNS text LANGUAGE sql STABLE STRICT PARALLEL SAFE
    RETURN to_char(p AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,

  // Balance continuity. An account: the bank and the account digits as shown, else the device and
  // the sender; its last placed balance (the latest in received order).
  `CREATE TABLE recon.balance_account (
    id bigserial PRIMARY KEY,
    account_key text NOT NULL UNIQUE,
    bank text,
    account text,
    device_id text,
    sender text,
    last_balance numeric(18, 2),
    last_at timestamptz,
    last_sms_id bigint,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX balance_account_last_idx ON recon.balance_account (last_at DESC NULLS LAST, id DESC)`,
  // One row per message that carried a transaction of the account (deposits and outgoing money).
  // balance NULL: the message showed none, so it cannot be placed; it can still explain a step.
  // duplicate_of: the same transaction seen before (another phone, another channel).
  `CREATE TABLE recon.balance_entry (
    sms_id bigint PRIMARY KEY REFERENCES recon.shooter_sms (id),
    account_id bigint NOT NULL REFERENCES recon.balance_account (id),
    received_at timestamptz NOT NULL,
    txn_at timestamptz,
    device_id text NOT NULL,
    direction text NOT NULL CHECK (direction IN ('in', 'out')),
    amount numeric(18, 2) NOT NULL CHECK (amount >= 0),
    balance numeric(18, 2),
    duplicate_of bigint REFERENCES recon.balance_entry (sms_id),
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX balance_entry_order_idx ON recon.balance_entry (account_id, received_at, sms_id)`,
  `CREATE INDEX balance_entry_placed_idx ON recon.balance_entry (account_id, received_at, sms_id)
    WHERE balance IS NOT NULL AND duplicate_of IS NULL`,
  // A step of the sequence that `previous ± amount` does not explain: open until closed_at.
  `CREATE TABLE recon.balance_gap (
    id bigserial PRIMARY KEY,
    account_id bigint NOT NULL REFERENCES recon.balance_account (id),
    after_sms_id bigint NOT NULL REFERENCES recon.balance_entry (sms_id),
    before_sms_id bigint NOT NULL REFERENCES recon.balance_entry (sms_id),
    unexplained numeric(18, 2) NOT NULL CHECK (unexplained <> 0),
    since timestamptz NOT NULL,
    closed_at timestamptz,
    closed_by_sms_id bigint
  )`,
  `CREATE UNIQUE INDEX balance_gap_open_idx ON recon.balance_gap (account_id, after_sms_id) WHERE closed_at IS NULL`,

  // Webhooks. The secret signs the deliveries (never shown again); events: the types subscribed.
  `CREATE TABLE recon.webhook (
    id bigserial PRIMARY KEY,
    url text NOT NULL CHECK (url ~ '^https?://'),
    secret text NOT NULL CHECK (length(secret) BETWEEN 16 AND 256),
    events text[] NOT NULL CHECK (cardinality(events) > 0
      AND events <@ ARRAY['deposit.approved', 'sms.manual_review', 'sms.rejected', 'balance.gap']),
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX webhook_created_idx ON recon.webhook (created_at DESC, id DESC)`,
  `CREATE TABLE recon.webhook_event (
    id bigserial PRIMARY KEY,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  // One per (event, webhook). next_at: NULL due now; else when it is due (a lease while a request
  // is in flight, a backoff after a failure). first_attempt_at starts the 24 h of retries.
  `CREATE TABLE recon.webhook_delivery (
    id bigserial PRIMARY KEY,
    event_id bigint NOT NULL REFERENCES recon.webhook_event (id),
    webhook_id bigint NOT NULL REFERENCES recon.webhook (id) ON DELETE CASCADE,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    next_at timestamptz,
    first_attempt_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (event_id, webhook_id)
  )`,
  `CREATE INDEX webhook_delivery_due_idx ON recon.webhook_delivery (webhook_id, next_at NULLS FIRST, id) WHERE status = 'pending'`,
  `CREATE INDEX webhook_delivery_failed_idx ON recon.webhook_delivery (webhook_id) WHERE status = 'failed'`,
  // Every attempt, never updated: what /webhook/deliveries lists.
  `CREATE TABLE recon.webhook_attempt (
    id bigserial PRIMARY KEY,
    delivery_id bigint NOT NULL REFERENCES recon.webhook_delivery (id) ON DELETE CASCADE,
    event_id bigint NOT NULL REFERENCES recon.webhook_event (id),
    webhook_id bigint NOT NULL,
    attempt integer NOT NULL CHECK (attempt >= 1),
    status text NOT NULL CHECK (status IN ('delivered', 'retrying', 'failed')),
    http_status integer,
    error text,
    at timestamptz NOT NULL,
    UNIQUE (delivery_id, attempt)
  )`,
  `CREATE INDEX webhook_attempt_at_idx ON recon.webhook_attempt (at DESC, id DESC)`,
  `CREATE INDEX webhook_attempt_event_idx ON recon.webhook_attempt (event_id, at DESC, id DESC)`,

  // The outbox: an event and its deliveries in the caller's transaction, and a NOTIFY that wakes
  // webhook_delivery_loop once it commits. Nothing at all when no webhook subscribes to the type:
  // one probe of a table of a few rows.
  `CREATE FUNCTION recon.emit_event(p_type text, p_data jsonb) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
  DECLARE
    v_id bigint;
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM recon.webhook WHERE p_type = ANY (events)) THEN
      RETURN NULL;
    END IF;
    INSERT INTO recon.webhook_event (type, data) VALUES (p_type, p_data) RETURNING id INTO v_id;
    INSERT INTO recon.webhook_delivery (event_id, webhook_id)
      SELECT v_id, w.id FROM recon.webhook AS w WHERE p_type = ANY (w.events);
    PERFORM pg_notify('recon_changes', 'webhook_delivery');
    RETURN v_id;
  END
  $fn$`,
  // The SMS events, from the status change itself: whichever code path makes it (the worker,
  // sms/resolve, sms/check, anything later), the event exists exactly when the change commits.
  `CREATE FUNCTION recon.sms_webhook_event() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    v_type text := CASE NEW.status WHEN 'approved' THEN 'deposit.approved'
      WHEN 'manual_review' THEN 'sms.manual_review' ELSE 'sms.rejected' END;
    v_data jsonb;
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM recon.webhook WHERE v_type = ANY (events)) THEN
      RETURN NULL;
    END IF;
    IF v_type = 'deposit.approved' THEN
      SELECT jsonb_build_object('deposit_id', d.id, 'player_id', d.player_id, 'amount', recon.amount_text(d.amount),
          'sms_id', NEW.id, 'approved_at', recon.iso_time(d.approved_at))
        INTO v_data FROM recon.deposit AS d WHERE d.id = NEW.deposit_id;
      v_data := COALESCE(v_data, jsonb_build_object('deposit_id', NEW.deposit_id, 'player_id', NULL,
        'amount', recon.amount_text(NEW.amount), 'sms_id', NEW.id, 'approved_at', NULL));
    ELSE
      v_data := jsonb_build_object('sms_id', NEW.id, 'status', NEW.status, 'device_id', NEW.device_id, 'bank', NEW.bank,
        'payer_name', NEW.payer_name, 'amount', recon.amount_text(NEW.amount), 'received_at', recon.iso_time(NEW.received_at),
        'reason', CASE WHEN NEW.status = 'manual_review' THEN NEW.match_detail ->> 'reason' END,
        'deposit_ids', CASE WHEN NEW.status = 'manual_review' AND jsonb_typeof(NEW.match_detail -> 'candidates') = 'array'
          THEN jsonb_path_query_array(NEW.match_detail, '$.candidates[*].deposit_id') ELSE '[]'::jsonb END);
    END IF;
    PERFORM recon.emit_event(v_type, v_data);
    RETURN NULL;
  END
  $fn$`,
  `CREATE TRIGGER shooter_sms_webhook_update AFTER UPDATE OF status ON recon.shooter_sms FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('approved', 'manual_review', 'rejected'))
    EXECUTE FUNCTION recon.sms_webhook_event()`,
  `CREATE TRIGGER shooter_sms_webhook_insert AFTER INSERT ON recon.shooter_sms FOR EACH ROW
    WHEN (NEW.status IN ('approved', 'manual_review', 'rejected'))
    EXECUTE FUNCTION recon.sms_webhook_event()`
]
