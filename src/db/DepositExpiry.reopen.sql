-- DepositExpiry.expire (DepositExpiry.ts): a manual review that named an expired deposit and has
-- no candidate left pending goes back to `unmatched`. Candidates as order_match_loop records them:
-- objects with deposit_id (plain ids accepted too). $1: the deposits just expired, a JSON array.
WITH review AS (
  SELECT s.id, ARRAY(SELECT COALESCE(c ->> 'deposit_id', CASE WHEN jsonb_typeof(c) = 'number' THEN c #>> '{}' END)::bigint
    FROM jsonb_array_elements(s.match_detail -> 'candidates') AS c) AS candidates
  FROM recon.shooter_sms AS s
  WHERE s.status = 'manual_review' AND jsonb_typeof(s.match_detail -> 'candidates') = 'array')
UPDATE recon.shooter_sms AS s SET status = 'unmatched', deposit_id = NULL, updated_at = now(),
  match_detail = s.match_detail || jsonb_build_object('decision', 'unmatched',
    'reason', 'every candidate deposit expired before a person decided', 'expired_deposits', to_jsonb(review.candidates))
FROM review
WHERE s.id = review.id
  AND review.candidates && ARRAY(SELECT jsonb_array_elements_text($1::jsonb)::bigint)
  AND NOT EXISTS (SELECT 1 FROM recon.deposit AS d WHERE d.id = ANY (review.candidates) AND d.status = 'pending')
RETURNING s.id
