-- MatchStore's record of the wallet's answers (MatchStore.ts): each approving SMS, still approving
-- with the same deposit, takes its outcome (approved, manual_review, or approving again with its
-- next attempt due), the wallet's answer and, when not approved, the reason in its match_detail;
-- its lease ends (no owner: a backoff is not a lease another process may take over). A retry
-- (approving again) is recorded only while the lease the call was made under stands: once another
-- process has taken it over (its owner's session was lost), that process's call is in flight, and
-- a backoff written now would let a third send it meanwhile. A final answer is always recorded.
-- $1: the outcomes, [{id, deposit_id, owner, status, attempts, next_at, wallet, reason}] as JSON.
UPDATE recon.shooter_sms AS s SET
  status = x.status,
  match_attempts = x.attempts,
  match_next_at = x.next_at,
  match_owner = NULL,
  match_detail = COALESCE(s.match_detail, '{}'::jsonb) || jsonb_build_object('wallet', x.wallet)
    || CASE WHEN x.status = 'approved' THEN jsonb_build_object('decision', 'approved')
      WHEN x.reason IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('decision', 'manual_review', 'reason', x.reason) END,
  updated_at = now()
FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, deposit_id bigint, owner integer, status text, attempts integer, next_at timestamptz, wallet jsonb, reason text)
WHERE s.id = x.id AND s.status = 'approving' AND s.deposit_id = x.deposit_id
  AND (x.status <> 'approving' OR s.match_owner IS NOT DISTINCT FROM x.owner)
RETURNING s.id, s.status
