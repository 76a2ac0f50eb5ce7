// The SmsForwarder signatures seen, per registration, while their timestamp is still fresh: the
// signature covers only the timestamp, so the same `sign` with another message is a replay.
// Shared by every worker process; rows past their expiry are pruned by the push endpoint.
export default [
  `CREATE TABLE recon.push_signature (
    device_id text NOT NULL,
    signature text NOT NULL,
    -- sha256 of the message the signature first came with (sender and text).
    digest text NOT NULL,
    -- The signature's timestamp plus the freshness window: refused as stale after that anyway.
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (device_id, signature)
  )`,
  `CREATE INDEX push_signature_expires_idx ON recon.push_signature (expires_at)`
]
