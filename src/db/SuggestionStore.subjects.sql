-- SuggestionStore.forSms (SuggestionStore.ts): the SMS that get suggestions, each with its
-- siblings (the payer's other SMS waiting for a person within 24 hours, the nearest first).
-- $1: the siblings per SMS at most; $2: the SMS ids, a JSON array; $3: the statuses that get
-- suggestions, a JSON array.
SELECT s.id, s.payer_name, s.payer_key, s.amount::text AS amount,
  COALESCE(jsonb_agg(jsonb_build_object('sms_id', o.id, 'amount', recon.amount_text(o.amount)) ORDER BY o.distance, o.id)
    FILTER (WHERE o.id IS NOT NULL), '[]'::jsonb) AS siblings
FROM recon.shooter_sms AS s
LEFT JOIN LATERAL (
  SELECT o.id, o.amount, abs(extract(epoch FROM o.received_at - s.received_at)) AS distance
  FROM recon.shooter_sms AS o
  WHERE o.status IN ('unmatched', 'manual_review') AND o.payer_key = s.payer_key AND o.id <> s.id AND o.amount IS NOT NULL
    AND o.received_at BETWEEN s.received_at - interval '24 hours' AND s.received_at + interval '24 hours'
  ORDER BY distance, o.id LIMIT $1) AS o ON true
WHERE s.id = ANY (ARRAY(SELECT jsonb_array_elements_text($2::jsonb)::bigint))
  AND s.status = ANY (ARRAY(SELECT jsonb_array_elements_text($3::jsonb)))
GROUP BY s.id
