// Back-office operators (schema admin).
export default [
  `CREATE SCHEMA IF NOT EXISTS admin`,
  `CREATE TABLE admin.operator (
    id bigserial PRIMARY KEY,
    account text NOT NULL UNIQUE,
    password_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
]
