-- BalanceStore.record (BalanceStore.ts, loadViews): what placing reads of each account: its end,
-- its last TAIL messages, the gaps the facts may fit, the entries they may repeat. Each entry as
-- EntryRow's JSON (BalanceStore.ts, entryJson: times in epoch milliseconds, numbers as text).
-- $1: the accounts wanted, [{account_id, froms, befores, amounts, keys}] as JSON; $2: TAIL
-- (domain/BalanceChain.ts); $3: the duplicate window, an interval's text.
WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(account_id bigint, froms jsonb, befores jsonb, amounts jsonb, keys jsonb))
SELECT x.account_id, a.end_pos::text AS end_pos, a.tail_between::text AS tail_between,
  (SELECT jsonb_build_object('sms_id', l.sms_id,
      'received_at', (extract(epoch FROM l.received_at) * 1000)::bigint, 'txn_at', (extract(epoch FROM l.txn_at) * 1000)::bigint,
      'device_id', l.device_id, 'direction', l.direction, 'amount', l.amount::text,
      'balance', l.balance::text, 'duplicate_of', l.duplicate_of, 'pos', l.pos::text)
    FROM recon.balance_entry AS l WHERE l.sms_id = a.last_sms_id) AS last_balance,
  COALESCE((SELECT jsonb_agg(t.j ORDER BY t.pos) FROM (
    SELECT jsonb_build_object('sms_id', e.sms_id,
        'received_at', (extract(epoch FROM e.received_at) * 1000)::bigint, 'txn_at', (extract(epoch FROM e.txn_at) * 1000)::bigint,
        'device_id', e.device_id, 'direction', e.direction, 'amount', e.amount::text,
        'balance', e.balance::text, 'duplicate_of', e.duplicate_of, 'pos', e.pos::text) AS j, e.pos
    FROM recon.balance_entry AS e
    WHERE e.account_id = x.account_id AND e.pos IS NOT NULL ORDER BY e.pos DESC LIMIT $2) AS t), '[]'::jsonb) AS tail,
  -- A gap's ends and their neighbours by key, each a scalar subquery: never a join the
  -- planner may turn into a scan of the account's entries on stale statistics.
  COALESCE((SELECT jsonb_agg(jsonb_build_object('id', g.id,
      'after', (SELECT jsonb_build_object('sms_id', ga.sms_id,
          'received_at', (extract(epoch FROM ga.received_at) * 1000)::bigint, 'txn_at', (extract(epoch FROM ga.txn_at) * 1000)::bigint,
          'device_id', ga.device_id, 'direction', ga.direction, 'amount', ga.amount::text,
          'balance', ga.balance::text, 'duplicate_of', ga.duplicate_of, 'pos', ga.pos::text)
        FROM recon.balance_entry AS ga WHERE ga.sms_id = g.after_sms_id),
      'before', (SELECT jsonb_build_object('sms_id', gb.sms_id,
          'received_at', (extract(epoch FROM gb.received_at) * 1000)::bigint, 'txn_at', (extract(epoch FROM gb.txn_at) * 1000)::bigint,
          'device_id', gb.device_id, 'direction', gb.direction, 'amount', gb.amount::text,
          'balance', gb.balance::text, 'duplicate_of', gb.duplicate_of, 'pos', gb.pos::text)
        FROM recon.balance_entry AS gb WHERE gb.sms_id = g.before_sms_id),
      'between', g.between_sum::text, 'since', (extract(epoch FROM g.since) * 1000)::bigint,
      'after_next', (SELECT min(n.pos) FROM recon.balance_entry AS n WHERE n.account_id = g.account_id
        AND n.pos > (SELECT ga.pos FROM recon.balance_entry AS ga WHERE ga.sms_id = g.after_sms_id))::text,
      'before_prev', (SELECT max(p.pos) FROM recon.balance_entry AS p WHERE p.account_id = g.account_id
        AND p.pos < (SELECT gb.pos FROM recon.balance_entry AS gb WHERE gb.sms_id = g.before_sms_id))::text))
    FROM recon.balance_gap AS g
    -- Each key an index condition (= ANY of an array, never a join the planner may turn
    -- into a scan of the account's gaps or entries on stale statistics).
    WHERE g.id = ANY (ARRAY(
      SELECT f.id FROM recon.balance_gap AS f WHERE f.account_id = x.account_id AND f.closed_at IS NULL
        AND f.from_balance = ANY (ARRAY(SELECT jsonb_array_elements_text(x.froms)::numeric))
      UNION SELECT f.id FROM recon.balance_gap AS f WHERE f.account_id = x.account_id AND f.closed_at IS NULL
        AND f.before_key = ANY (ARRAY(SELECT jsonb_array_elements_text(x.befores)::numeric))
      UNION SELECT f.id FROM recon.balance_gap AS f WHERE f.account_id = x.account_id AND f.closed_at IS NULL
        AND f.unexplained = ANY (ARRAY(SELECT jsonb_array_elements_text(x.amounts)::numeric))
      UNION SELECT f.id FROM recon.balance_gap AS f WHERE f.account_id = x.account_id AND f.closed_at IS NULL
        AND f.after_sms_id = ANY (ARRAY(SELECT e.sms_id FROM recon.balance_entry AS e
          WHERE e.account_id = x.account_id AND e.pos IS NOT NULL ORDER BY e.pos DESC LIMIT $2))))), '[]'::jsonb) AS gaps,
  -- The entries a fact may repeat, looked up by balance (migration 0019's index), key by key.
  COALESCE((SELECT jsonb_agg(c.j) FROM (
    SELECT r.j FROM jsonb_to_recordset(x.keys) AS k(direction text, amount numeric, balance numeric, lo timestamptz, hi timestamptz)
    CROSS JOIN LATERAL (
      SELECT jsonb_build_object('sms_id', r.sms_id,
          'received_at', (extract(epoch FROM r.received_at) * 1000)::bigint, 'txn_at', (extract(epoch FROM r.txn_at) * 1000)::bigint,
          'device_id', r.device_id, 'direction', r.direction, 'amount', r.amount::text,
          'balance', r.balance::text, 'duplicate_of', r.duplicate_of, 'pos', r.pos::text) AS j
      FROM recon.balance_entry AS r
      WHERE r.account_id = x.account_id AND r.duplicate_of IS NULL AND r.balance = k.balance AND r.direction = k.direction AND r.amount = k.amount
      ORDER BY r.received_at DESC LIMIT 8) AS r
    UNION ALL
    SELECT r.j FROM jsonb_to_recordset(x.keys) AS k(direction text, amount numeric, balance numeric, lo timestamptz, hi timestamptz)
    CROSS JOIN LATERAL (
      SELECT jsonb_build_object('sms_id', r.sms_id,
          'received_at', (extract(epoch FROM r.received_at) * 1000)::bigint, 'txn_at', (extract(epoch FROM r.txn_at) * 1000)::bigint,
          'device_id', r.device_id, 'direction', r.direction, 'amount', r.amount::text,
          'balance', r.balance::text, 'duplicate_of', r.duplicate_of, 'pos', r.pos::text) AS j
      FROM recon.balance_entry AS r
      WHERE k.balance IS NULL AND r.account_id = x.account_id AND r.duplicate_of IS NULL AND r.balance IS NULL
        AND r.direction = k.direction AND r.amount = k.amount
        AND r.received_at BETWEEN k.lo - $3::interval AND k.hi + $3::interval
      LIMIT 8) AS r) AS c), '[]'::jsonb) AS candidates
FROM x JOIN recon.balance_account AS a ON a.id = x.account_id
