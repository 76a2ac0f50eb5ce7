// Who ended a review, and how (DESIGN section 5, /shooter/sms/check and /shooter/sms/resolve):
// one row per decision, never updated, shown with the SMS in /shooter/sms/get.
export default [
  `CREATE TABLE recon.sms_decision (
    id bigserial PRIMARY KEY,
    sms_id bigint NOT NULL REFERENCES recon.shooter_sms (id),
    operator text CHECK (operator IS NULL OR length(operator) BETWEEN 1 AND 64),
    action text NOT NULL CHECK (action IN ('pass', 'reject', 'approve')),
    deposit_id bigint REFERENCES recon.deposit (id),
    from_status text NOT NULL,
    to_status text NOT NULL,
    decided_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((action = 'approve') = (deposit_id IS NOT NULL))
  )`,
  `CREATE INDEX sms_decision_sms_idx ON recon.sms_decision (sms_id, id)`
]
