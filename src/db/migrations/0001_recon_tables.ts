// The reconciliation tables of DESIGN section 10 (schema recon).
export default [
  `CREATE TABLE recon.shooter_device (
    id bigserial PRIMARY KEY,
    device_id text NOT NULL UNIQUE,
    name text,
    trusted boolean NOT NULL DEFAULT false,
    last_seen_at timestamptz,
    sms_count bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX shooter_device_created_idx ON recon.shooter_device (created_at DESC, id DESC)`,
  `CREATE TABLE recon.shooter_push (
    id bigserial PRIMARY KEY,
    device_id text NOT NULL UNIQUE,
    name text,
    format text NOT NULL CHECK (format IN ('smsforwarder', 'sms-gateway')),
    secret text,
    api_url text,
    silence_alert_s integer CHECK (silence_alert_s IS NULL OR silence_alert_s > 0),
    enabled boolean NOT NULL DEFAULT true,
    listener_status text NOT NULL DEFAULT 'pending',
    last_event_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX shooter_push_created_idx ON recon.shooter_push (created_at DESC, id DESC)`,
  `CREATE TABLE recon.shooter_phone (
    id bigserial PRIMARY KEY,
    phone text NOT NULL UNIQUE,
    bank text,
    note text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX shooter_phone_created_idx ON recon.shooter_phone (created_at DESC, id DESC)`,
  `CREATE TABLE recon.shooter_template_recharge (
    id bigserial PRIMARY KEY,
    bank text NOT NULL,
    sender text,
    sample text NOT NULL,
    rule text NOT NULL,
    rule_source text NOT NULL CHECK (rule_source IN ('builtin', 'manual', 'ai')),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (bank, rule)
  )`,
  `CREATE INDEX shooter_template_created_idx ON recon.shooter_template_recharge (created_at DESC, id DESC)`,
  `CREATE TABLE recon.shooter_sms (
    id bigserial PRIMARY KEY,
    device_id text NOT NULL,
    sender text NOT NULL,
    body text NOT NULL,
    normalized_body text NOT NULL,
    remote_id text,
    received_at timestamptz NOT NULL,
    status text NOT NULL DEFAULT 'received' CHECK (status IN ('received', 'need_check', 'rejected', 'duplicate',
      'ignored', 'parse_failed', 'parsed', 'unmatched', 'manual_review', 'approving', 'approved')),
    duplicate_of bigint REFERENCES recon.shooter_sms (id),
    bank text,
    payer_name text,
    amount numeric(18, 2),
    deposit_id bigint,
    template_id bigint,
    parse_detail jsonb,
    match_detail jsonb,
    check_result text CHECK (check_result IN ('pass', 'reject')),
    checked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  // The four top-info counters count one status each: an index-only count, not a table scan.
  `CREATE INDEX shooter_sms_status_idx ON recon.shooter_sms (status)`,
  `CREATE INDEX shooter_sms_created_idx ON recon.shooter_sms (created_at DESC, id DESC)`,
  `CREATE INDEX shooter_sms_device_idx ON recon.shooter_sms (device_id, created_at DESC)`,
  `CREATE INDEX shooter_sms_dedup_idx ON recon.shooter_sms (normalized_body, received_at)`,
  `CREATE INDEX shooter_sms_remote_idx ON recon.shooter_sms (device_id, remote_id) WHERE remote_id IS NOT NULL`,
  `CREATE TABLE recon.player (
    id bigserial PRIMARY KEY,
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX player_name_idx ON recon.player (name)`,
  `CREATE TABLE recon.deposit (
    id bigserial PRIMARY KEY,
    player_id bigint NOT NULL REFERENCES recon.player (id),
    from_bank_owner text NOT NULL,
    amount numeric(18, 2) NOT NULL CHECK (amount > 0),
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
    task_status smallint,
    sms_id bigint UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    approved_at timestamptz
  )`,
  `CREATE INDEX deposit_pending_idx ON recon.deposit (from_bank_owner, amount) WHERE status = 'pending'`,
  `CREATE INDEX deposit_task_status_idx ON recon.deposit (task_status) WHERE task_status IS NOT NULL`,
  // Named cursors of the worker (chat-bot update offset, sync positions).
  `CREATE TABLE recon.worker_cursor (
    name text PRIMARY KEY,
    value text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
]
