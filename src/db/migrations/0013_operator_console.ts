// The operator's console (DESIGN section 11): every decision kept with who confirmed it and why
// (`assign` of an SMS read by eye among them), the requests that wait for a second operator's
// approval, the alerts already sent to the chat, and a default silence window for phones.
export default [
  `ALTER TABLE recon.sms_decision DROP CONSTRAINT sms_decision_action_check`,
  `ALTER TABLE recon.sms_decision ADD CONSTRAINT sms_decision_action_check
    CHECK (action IN ('pass', 'reject', 'approve', 'assign'))`,
  // second_operator: who confirmed a decision over SVC_REVIEW_SECOND_APPROVAL_OVER; payer_name and
  // amount: what an `assign` read by eye (amount also: what an `approve` moved).
  `ALTER TABLE recon.sms_decision
    ADD COLUMN second_operator text CHECK (second_operator IS NULL OR length(second_operator) BETWEEN 1 AND 64),
    ADD COLUMN reason text CHECK (reason IS NULL OR length(reason) <= 500),
    ADD COLUMN payer_name text,
    ADD COLUMN amount numeric(18, 2),
    ADD CONSTRAINT sms_decision_assign_check CHECK (action <> 'assign' OR (payer_name IS NOT NULL AND amount IS NOT NULL)),
    ADD CONSTRAINT sms_decision_payer_check CHECK (payer_name IS NULL OR action = 'assign'),
    ADD CONSTRAINT sms_decision_second_check CHECK (second_operator IS NULL OR second_operator IS DISTINCT FROM operator)`,
  // The audit view: newest first, by operator (first or second).
  `CREATE INDEX sms_decision_decided_idx ON recon.sms_decision (decided_at DESC, id DESC)`,
  `CREATE INDEX sms_decision_operator_idx ON recon.sms_decision (operator)`,
  `CREATE INDEX sms_decision_second_operator_idx ON recon.sms_decision (second_operator) WHERE second_operator IS NOT NULL`,

  // A decision over the second-approval amount waits here until a different operator makes the
  // same one (confirmed), another decision replaces it (superseded), or the SMS is decided
  // otherwise (void). At most one pending request per SMS.
  `CREATE TABLE admin.approval_request (
    id bigserial PRIMARY KEY,
    sms_id bigint NOT NULL REFERENCES recon.shooter_sms (id),
    action text NOT NULL CHECK (action IN ('approve', 'assign')),
    deposit_id bigint REFERENCES recon.deposit (id),
    payer_name text,
    amount numeric(18, 2) NOT NULL CHECK (amount > 0),
    operator text NOT NULL CHECK (length(operator) BETWEEN 1 AND 64),
    reason text CHECK (reason IS NULL OR length(reason) <= 500),
    requested_at timestamptz NOT NULL DEFAULT now(),
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'confirmed', 'superseded', 'void')),
    closed_by text,
    closed_at timestamptz,
    CHECK ((action = 'approve') = (deposit_id IS NOT NULL)),
    CHECK ((action = 'assign') = (payer_name IS NOT NULL)),
    CHECK ((state = 'pending') = (closed_at IS NULL))
  )`,
  `CREATE UNIQUE INDEX approval_request_pending_idx ON admin.approval_request (sms_id) WHERE state = 'pending'`,
  `CREATE INDEX approval_request_requested_idx ON admin.approval_request (requested_at DESC, id DESC)`,

  // Each alert (kind, subject, since) sent to the Telegram chat once, across restarts and processes.
  `CREATE TABLE admin.alert_notice (
    kind text NOT NULL,
    subject text NOT NULL,
    since timestamptz NOT NULL,
    detail text NOT NULL,
    seen_at timestamptz NOT NULL DEFAULT now(),
    sent_at timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    -- After a failed send: not before this (backoff).
    next_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, subject, since)
  )`,
  `CREATE INDEX alert_notice_unsent_idx ON admin.alert_notice (next_at) WHERE sent_at IS NULL`,

  // A phone is silent after an hour without an SMS unless its registration says otherwise (NULL: never).
  `ALTER TABLE recon.shooter_push ALTER COLUMN silence_alert_s SET DEFAULT 3600`,
  `UPDATE recon.shooter_push SET silence_alert_s = 3600 WHERE silence_alert_s IS NULL`
]
