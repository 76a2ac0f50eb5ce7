// Deposit expiry on a real database, the time from the TestClock: pending deposits older than the
// TTL become expired with their review flags cleared, one being approved is left to the wallet,
// a manual review left with only expired deposits goes back to unmatched, and an expired deposit
// can no longer be chosen by a person.
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as DepositExpiry from "../../src/db/DepositExpiry.ts"
import { createMigratedDatabase, layerFor } from "../support/database.ts"
import { recon, startRecon } from "../support/recon.ts"

const HOUR = 3_600_000
// The TestClock's own start (the epoch): deposits are made as old as each case needs.
const T0 = 0

const setUp = Effect.gen(function*() {
  const db = yield* Effect.promise(() => createMigratedDatabase("expiry"))
  const database = yield* Layer.build(layerFor(db))
  const sql = Context.get(database, SqlClient.SqlClient)
  const expiry = yield* Effect.provide(DepositExpiry.make, database)
  const deposit = (owner: string, amount: string, ageHours: number, fields: { task_status?: number; status?: string } = {}) =>
    Effect.map(sql<{ id: bigint }>`
      WITH p AS (INSERT INTO recon.player (name) VALUES (${owner}) RETURNING id)
      INSERT INTO recon.deposit (player_id, from_bank_owner, amount, status, task_status, created_at)
      SELECT id, ${owner}, ${amount}, ${fields.status ?? "pending"}, ${fields.task_status ?? null}, ${new Date(T0 - ageHours * HOUR)} FROM p
      RETURNING id`, (rows) => Number(rows[0]!.id))
  const sms = (status: string, payer: string, amount: string, extra: { deposit_id?: number; candidates?: ReadonlyArray<number> } = {}) => {
    const match = extra.candidates === undefined ? null : JSON.stringify({
      decision: "manual_review",
      reason: "2 players share the name",
      candidates: extra.candidates.map((id) => ({ deposit_id: id, player_id: 1, from_bank_owner: payer, amount }))
    })
    return Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
        (device_id, sender, body, normalized_body, received_at, status, payer_name, amount, deposit_id, match_detail)
      VALUES ('dev-x', '16449999', ${`${payer} ${amount} ${Math.random()}`}, ${`${payer}${Math.random()}`}, now(), ${status}, ${payer}, ${amount},
        ${extra.deposit_id ?? null}, ${match}::jsonb) RETURNING id`, (rows) => Number(rows[0]!.id))
  }
  const depositState = (id: number) =>
    Effect.map(sql<{ status: string; task_status: number | null }>`SELECT status, task_status FROM recon.deposit WHERE id = ${id}`, ([r]) => [r!.status, r!.task_status])
  const smsState = (id: number) =>
    Effect.map(sql<{ status: string; match: any }>`SELECT status, match_detail AS match FROM recon.shooter_sms WHERE id = ${id}`, ([r]) => r!)
  return { db, expiry, deposit, sms, depositState, smsState }
})

describe("deposit expiry", () => {
  it.effect("expires pending deposits older than the TTL as the clock moves: never a younger one, never one that is not pending", () =>
    Effect.gen(function*() {
      const { deposit, depositState, expiry } = yield* setUp
      const old = yield* deposit("김민준", "10000", 25, { task_status: 6 })
      const young = yield* deposit("이서연", "20000", 23)
      const rejected = yield* deposit("박지훈", "30000", 48, { status: "rejected" })
      assert.deepStrictEqual(yield* expiry.expire("24 hours"), { deposits: 1, reopened: 0 })
      assert.deepStrictEqual(yield* depositState(old), ["expired", null])
      assert.deepStrictEqual(yield* depositState(young), ["pending", null])
      assert.deepStrictEqual(yield* depositState(rejected), ["rejected", null])
      assert.deepStrictEqual(yield* expiry.expire("24 hours"), { deposits: 0, reopened: 0 })
      yield* TestClock.adjust(HOUR - 1000)
      assert.deepStrictEqual(yield* expiry.expire("24 hours"), { deposits: 0, reopened: 0 })
      yield* TestClock.adjust(2000)
      assert.deepStrictEqual(yield* expiry.expire("24 hours"), { deposits: 1, reopened: 0 })
      assert.deepStrictEqual(yield* depositState(young), ["expired", null])
      // Another TTL: SVC_DEPOSIT_TTL_H is the loop's to pass.
      const recent = yield* deposit("최유진", "40000", 2)
      assert.deepStrictEqual(yield* expiry.expire("1 hour"), { deposits: 1, reopened: 0 })
      assert.deepStrictEqual(yield* depositState(recent), ["expired", null])
    }), 30_000)

  it.effect("leaves a deposit an SMS is being approved against to the wallet", () =>
    Effect.gen(function*() {
      const { deposit, depositState, expiry, sms } = yield* setUp
      const taken = yield* deposit("정우성", "50000", 30)
      yield* sms("approving", "정우성", "50000", { deposit_id: taken })
      assert.deepStrictEqual(yield* expiry.expire("24 hours"), { deposits: 0, reopened: 0 })
      assert.deepStrictEqual(yield* depositState(taken), ["pending", null])
    }), 30_000)

  it.effect("a manual review whose deposits all expired goes back to unmatched, saying why; one that still holds a pending deposit stays", () =>
    Effect.gen(function*() {
      const { deposit, depositState, expiry, sms, smsState } = yield* setUp
      const a = yield* deposit("김민준", "10000", 30, { task_status: 6 })
      const b = yield* deposit(" 김민준", "10000", 26, { task_status: 6 })
      const lonely = yield* sms("manual_review", "김민준", "10000", { candidates: [a, b] })
      const c = yield* deposit("한가람", "20000", 30, { task_status: 6 })
      const d = yield* deposit("한가람", "20000", 1, { task_status: 6 })
      const held = yield* sms("manual_review", "한가람", "20000", { candidates: [c, d] })
      assert.deepStrictEqual(yield* expiry.expire("24 hours"), { deposits: 3, reopened: 1 })
      const reopened = yield* smsState(lonely)
      assert.strictEqual(reopened.status, "unmatched")
      assert.strictEqual(reopened.match.decision, "unmatched")
      assert.match(reopened.match.reason, /every candidate deposit expired/)
      assert.deepStrictEqual(reopened.match.expired_deposits, [a, b])
      assert.deepStrictEqual(reopened.match.candidates.map((x: any) => x.deposit_id), [a, b])
      assert.strictEqual((yield* smsState(held)).status, "manual_review")
      // Flags: the expired ones cleared, the pending one still held by its review.
      assert.deepStrictEqual(yield* depositState(c), ["expired", null])
      assert.deepStrictEqual(yield* depositState(d), ["pending", 6])
    }), 30_000)

  it.effect("an expired deposit is never chosen again: sms/resolve answers 409", () =>
    Effect.gen(function*() {
      const { db, deposit, expiry, sms } = yield* setUp
      const old = yield* deposit("오지호", "70000", 25)
      const waiting = yield* sms("unmatched", "오지호", "70000")
      yield* expiry.expire("24 hours")
      const server = yield* Effect.acquireRelease(Effect.promise(() => startRecon(db)), (s) => Effect.promise(() => s.close()))
      const answer = yield* Effect.promise(() => recon(server.url)("/shooter/sms/resolve", { id: waiting, action: "approve", deposit_id: old, operator: "kim" }))
      assert.strictEqual(answer.http, 409)
      assert.match(answer.body.data.detail, /expired, not pending/)
    }), 30_000)
})
