-- SuggestionStore.forSms (SuggestionStore.ts): the pending deposits each search finds, by the
-- loose name key (migration 0014's C-collation index): equal to one of its keys, starting with its
-- truncated name, or matching its masked name from the start or (reversed) from the end; each
-- range bounded by a LIMIT. A deposit another SMS is being approved against is taken. $1: the
-- searches, [{sms_id, keys, truncated, masked_prefix, masked_reversed, pattern}] as JSON; $2: the
-- deposits read per search at most; $3: a character above every other (`k >= p AND k < p || $3`
-- is "starts with p").
SELECT x.sms_id, d.id AS deposit_id, d.player_id, d.from_bank_owner, recon.amount_text(d.amount) AS amount, d.owner_key, d.owner_loose_key
FROM jsonb_to_recordset($1::jsonb)
  AS x(sms_id bigint, keys text[], truncated text, masked_prefix text, masked_reversed text, pattern text)
CROSS JOIN LATERAL (
  (SELECT id FROM recon.deposit WHERE status = 'pending' AND owner_loose_key = ANY (x.keys COLLATE "C") LIMIT $2)
  UNION
  (SELECT id FROM recon.deposit WHERE status = 'pending' AND x.truncated IS NOT NULL
    AND owner_loose_key >= x.truncated COLLATE "C" AND owner_loose_key < (x.truncated || $3) COLLATE "C" LIMIT $2)
  UNION
  (SELECT id FROM recon.deposit WHERE status = 'pending' AND x.masked_prefix IS NOT NULL
    AND owner_loose_key >= x.masked_prefix COLLATE "C" AND owner_loose_key < (x.masked_prefix || $3) COLLATE "C"
    AND owner_loose_key LIKE x.pattern COLLATE "C" LIMIT $2)
  UNION
  (SELECT id FROM recon.deposit WHERE status = 'pending' AND x.masked_reversed IS NOT NULL
    AND reverse(owner_loose_key) >= x.masked_reversed COLLATE "C" AND reverse(owner_loose_key) < (x.masked_reversed || $3) COLLATE "C"
    AND owner_loose_key LIKE x.pattern COLLATE "C" LIMIT $2)
) AS c
JOIN recon.deposit AS d ON d.id = c.id
WHERE NOT EXISTS (SELECT 1 FROM recon.shooter_sms AS a WHERE a.status = 'approving' AND a.deposit_id = d.id)
ORDER BY x.sms_id, d.id
