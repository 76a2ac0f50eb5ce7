// Partial indexes over pending deposits that order_match_loop's candidate query cannot be planned
// on. With statistics taken before many deposits arrived at once (20,000 in a batch, until the
// next autoanalyze), PostgreSQL judged "every pending deposit" tiny and walked the expiry index
// (created_at) or a suggestions index, filtering each pending deposit, for every SMS: 6 ms per SMS
// instead of 0.03 ms (bench/pipeline.ts's backlog at ~500 approvals/s instead of ~2,300). Each
// index's predicate now holds a clause only its own queries state (the expiry query repeats
// `created_at < 'infinity'`; the suggestions' conditions on owner_loose_key imply it is not null),
// so the candidate query can only use deposit_pending_key_idx (owner_key, amount).
export default [
  `DROP INDEX recon.deposit_pending_created_idx`,
  `CREATE INDEX deposit_pending_created_idx ON recon.deposit (created_at, id) WHERE status = 'pending' AND created_at < 'infinity'`,
  `DROP INDEX recon.deposit_pending_loose_idx`,
  `CREATE INDEX deposit_pending_loose_idx ON recon.deposit (owner_loose_key) WHERE status = 'pending' AND owner_loose_key IS NOT NULL`,
  `DROP INDEX recon.deposit_pending_loose_reverse_idx`,
  `CREATE INDEX deposit_pending_loose_reverse_idx ON recon.deposit ((reverse(owner_loose_key))) WHERE status = 'pending' AND owner_loose_key IS NOT NULL`
]
