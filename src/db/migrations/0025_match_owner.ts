// A lease names its owner (issue 32). order_match_loop leases an approving SMS for a wallet call
// until its time runs out (loops/OrderMatchLoop.ts LEASE, the wallet's timeout + 3 s), so a worker
// killed mid-call held its SMS back from every other worker for those 8 s: the slowest credits of
// the chaos run. Now each lease names a number its process holds a session advisory lock on while
// it lives (loops/MatchStore.ts); another process takes over the leases of an owner whose lock is
// free at once (src/db/sql/lease_due_sms.sql, match_pass.sql: their new texts take the caller's
// owners, p_owners).
//
// The signatures of recon.match_pass and recon.lease_due_sms grow that argument, so the repeatable
// definitions create them beside the old ones. The old ones stay for processes of the earlier
// release during a rolling upgrade, as wrappers: the same pass, its leases naming no owner (they
// run out as before). A later release drops them.
export default [
  `ALTER TABLE recon.shooter_sms ADD COLUMN match_owner integer`,
  `COMMENT ON COLUMN recon.shooter_sms.match_owner IS
    'The process an approving SMS is leased to (until match_next_at): the key of its session advisory lock (hashtext(''recon.match_owner''), owner). NULL: not leased, or leased by a process of an earlier release.'`,
  `CREATE OR REPLACE FUNCTION recon.lease_due_sms(p_now timestamptz, p_until timestamptz, p_limit integer)
  RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
  BEGIN
    RETURN recon.lease_due_sms(p_now, p_until, p_limit, '{}'::integer[]);
  END
  $fn$`,
  `CREATE OR REPLACE FUNCTION recon.match_pass(p_now timestamptz, p_until timestamptz, p_room integer, p_batch integer, p_window interval)
  RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $fn$
  BEGIN
    RETURN recon.match_pass(p_now, p_until, p_room, p_batch, p_window, '{}'::integer[]);
  END
  $fn$`
]
