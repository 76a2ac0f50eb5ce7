// The key that signs operator session tokens: one row, shared by every admin_service process and
// kept across restarts. The row itself is written by the first admin process to start.
export default [
  `CREATE TABLE admin.signing_key (
    id smallint PRIMARY KEY CHECK (id = 1),
    secret text NOT NULL CHECK (length(secret) >= 43),
    created_at timestamptz NOT NULL DEFAULT now()
  )`
]
