// Migration 0008: "one credit per deposit, one deposit per SMS" held by the database against a
// caller that writes the tables the wrong way round, not only through wallet_service's route.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { createMigratedDatabase } from "../support/database.ts"
import type { Running } from "../support/recon.ts"
import { agree, createDeposit, query, startWallet, walletState } from "../support/wallet.ts"

let db: string
let wallet: Running
beforeAll(async () => {
  db = await createMigratedDatabase("wallet_keys")
  wallet = await startWallet(db)
})
afterAll(() => wallet.close())

/** The statement is refused by the named constraint. */
const refused = async (constraint: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) => {
  const error = await query(db, f).then(() => undefined, (e: unknown) => e)
  assert.isDefined(error, `expected ${constraint} to refuse the statement`)
  assert.include(String((error as { cause?: unknown }).cause ?? error) + JSON.stringify(error), constraint)
}

/** A deposit approved and credited through the route, with SMS `smsId`. */
const credited = async (name: string, smsId: number) => {
  const deposit = await createDeposit(db, name, "500")
  assert.strictEqual((await agree(wallet.url, { deposit_id: deposit.depositId, sms_id: smsId })).http, 200)
  return deposit
}

describe("wallet keys against a buggy caller", () => {
  it("a second ledger row for the same deposit, or for the same SMS, is refused", async () => {
    const a = await credited("Key A", 11)
    await refused("ledger_deposit_id_key", (sql) =>
      sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (${a.playerId}, ${a.depositId}, NULL, 500)`)
    const b = await createDeposit(db, "Key B", "500")
    await query(db, (sql) => sql`UPDATE recon.deposit SET status = 'approved', approved_at = now() WHERE id = ${b.depositId}`)
    await refused("ledger_sms_id_key", (sql) =>
      sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (${b.playerId}, ${b.depositId}, 11, 500)`)
    assert.deepStrictEqual((await walletState(db, a.depositId)).ledger, [{ smsId: 11, amount: "500.00" }])
  })

  it("two deposits can't hold the same SMS", async () => {
    const a = await credited("Key C", 21)
    const b = await createDeposit(db, "Key C2", "500")
    await refused("deposit_sms_id_key", (sql) => sql`UPDATE recon.deposit SET sms_id = 21 WHERE id = ${b.depositId}`)
    assert.strictEqual((await walletState(db, a.depositId)).smsId, 21)
  })

  it("a credit names its deposit as it is: approved, same player, same amount, same SMS", async () => {
    const pending = await createDeposit(db, "Key D", "500")
    await refused("ledger_deposit_credit_fk", (sql) =>
      sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (${pending.playerId}, ${pending.depositId}, NULL, 500)`)
    await query(db, (sql) => sql`UPDATE recon.deposit SET status = 'approved', approved_at = now(), sms_id = 31 WHERE id = ${pending.depositId}`)
    const other = await createDeposit(db, "Key D other player", "1")
    await refused("ledger_deposit_credit_fk", (sql) =>
      sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (${other.playerId}, ${pending.depositId}, 31, 500)`)
    await refused("ledger_deposit_credit_fk", (sql) =>
      sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (${pending.playerId}, ${pending.depositId}, 31, 5000)`)
    await refused("ledger_deposit_sms_fk", (sql) =>
      sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (${pending.playerId}, ${pending.depositId}, 32, 500)`)
    await refused("ledger_deposit_fk", (sql) =>
      sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (${pending.playerId}, 987654, NULL, 500)`)
    await refused("ledger_player_fk", (sql) =>
      sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (987654, ${pending.depositId}, 31, 500)`)
    await refused("ledger_amount_positive", (sql) =>
      sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (${pending.playerId}, ${pending.depositId}, 31, -500)`)
    // Named as it is, it goes in: the keys refuse only what is wrong.
    await query(db, (sql) =>
      sql`INSERT INTO wallet.ledger (player_id, deposit_id, sms_id, amount) VALUES (${pending.playerId}, ${pending.depositId}, 31, 500)`)
  })

  it("a credited deposit keeps its player, amount, status and SMS", async () => {
    const a = await credited("Key E", 41)
    const other = await createDeposit(db, "Key E other", "1")
    await refused("ledger_deposit_credit_fk", (sql) => sql`UPDATE recon.deposit SET amount = 5000 WHERE id = ${a.depositId}`)
    await refused("ledger_deposit_credit_fk", (sql) => sql`UPDATE recon.deposit SET status = 'pending' WHERE id = ${a.depositId}`)
    await refused("ledger_deposit_credit_fk", (sql) => sql`UPDATE recon.deposit SET player_id = ${other.playerId} WHERE id = ${a.depositId}`)
    await refused("ledger_deposit_sms_fk", (sql) => sql`UPDATE recon.deposit SET sms_id = 42 WHERE id = ${a.depositId}`)
    await refused("ledger_deposit_fk", (sql) => sql`DELETE FROM recon.deposit WHERE id = ${a.depositId}`)
    const state = await walletState(db, a.depositId)
    assert.deepStrictEqual([state.status, state.smsId, state.ledger.length], ["approved", 41, 1])
  })

  it("a balance belongs to a player and is never negative", async () => {
    const a = await credited("Key F", 51)
    await refused("balance_player_fk", (sql) => sql`INSERT INTO wallet.balance (player_id, balance) VALUES (987654, 1)`)
    await refused("balance_not_negative", (sql) => sql`UPDATE wallet.balance SET balance = -1 WHERE player_id = ${a.playerId}`)
  })
})
