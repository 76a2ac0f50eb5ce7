// The wallet's balances and ledger (schema wallet): one credit per deposit, one deposit per SMS.
export default [
  `CREATE SCHEMA IF NOT EXISTS wallet`,
  `CREATE TABLE wallet.balance (
    player_id bigint PRIMARY KEY,
    balance numeric(18, 2) NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE wallet.ledger (
    id bigserial PRIMARY KEY,
    player_id bigint NOT NULL,
    deposit_id bigint NOT NULL UNIQUE,
    sms_id bigint UNIQUE,
    amount numeric(18, 2) NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
]
