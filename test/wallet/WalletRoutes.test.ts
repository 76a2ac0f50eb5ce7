// wallet_service's routes (DESIGN section 7) on a real server and database: one transaction
// approves, links the SMS, credits and writes the ledger; replays credit nothing; every 409/404;
// the envelope and schema errors of recon_service; concurrent callers credit once; agree_batch
// answers each item as agree would, and overlapping batches credit once without deadlocking.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createMigratedDatabase } from "../support/database.ts"
import { ADMIN_TOKEN, post, RECON_TOKEN, type Running } from "../support/recon.ts"
import { agree, balance, createDeposit, query, startWallet, walletState } from "../support/wallet.ts"

let db: string
let wallet: Running
beforeAll(async () => {
  db = await createMigratedDatabase("wallet")
  wallet = await startWallet(db)
})
afterAll(() => wallet.close())

const approved = (depositId: number, replayed: boolean) =>
  ({ status: 200, msg: "success", data: { deposit_id: depositId, status: "approved", replayed } })

describe("POST /internal/wallet/deposit/agree", () => {
  it("approves, links the SMS, credits the balance and writes one ledger row; replays credit nothing", async () => {
    const { depositId, playerId } = await createDeposit(db, "Kim Minsu", "50000")
    const first = await agree(wallet.url, { deposit_id: depositId, sms_id: 101 })
    assert.deepStrictEqual([first.http, first.body], [200, approved(depositId, false)])
    const state = await walletState(db, depositId)
    assert.strictEqual(state.status, "approved")
    assert.strictEqual(state.smsId, 101)
    assert.isNotNull(state.approvedAt)
    assert.deepStrictEqual(state.ledger, [{ smsId: 101, amount: "50000.00" }])
    assert.strictEqual(state.balance, "50000.00")

    for (const body of [{ deposit_id: depositId, sms_id: 101 }, { deposit_id: depositId }, { deposit_id: depositId, sms_id: null }]) {
      const again = await agree(wallet.url, body)
      assert.deepStrictEqual([again.http, again.body], [200, approved(depositId, true)])
    }
    const other = await agree(wallet.url, { deposit_id: depositId, sms_id: 102 })
    assert.deepStrictEqual([other.http, other.body.msg, other.body.data.detail], [409, "conflict", `deposit ${depositId} was approved with another SMS`])
    assert.deepStrictEqual(await walletState(db, depositId), state)
    assert.deepStrictEqual((await balance(wallet.url, playerId)).body, { status: 200, msg: "success", data: { player_id: playerId, balance: "50000" } })
  })

  it("an approval outside sms/resolve ends the deposit's review flag (task_status 6)", async () => {
    const { depositId } = await createDeposit(db, "Review Flagged", "7000")
    const flag = () => query(db, (sql) => sql<{ task_status: number | null }>`SELECT task_status FROM recon.deposit WHERE id = ${depositId}`)
    await query(db, (sql) => sql`UPDATE recon.deposit SET task_status = 6 WHERE id = ${depositId}`)
    const answer = await agree(wallet.url, { deposit_id: depositId, sms_id: 9701 })
    assert.deepStrictEqual([answer.http, answer.body], [200, approved(depositId, false)])
    assert.deepStrictEqual(await flag(), [{ task_status: null }])
  })

  it("credits the same player's balance across deposits, and approves without an SMS", async () => {
    const a = await createDeposit(db, "Lee Jiwon", "12.50")
    const b = await createDeposit(db, "Lee Jiwon", "1000")
    assert.strictEqual(a.playerId, b.playerId)
    assert.strictEqual((await agree(wallet.url, { deposit_id: a.depositId, sms_id: 201 })).http, 200)
    assert.strictEqual((await agree(wallet.url, { deposit_id: b.depositId })).http, 200)
    assert.strictEqual((await walletState(db, b.depositId)).smsId, null)
    assert.strictEqual((await balance(wallet.url, a.playerId)).body.data.balance, "1012.50")
  })

  it("409 when the SMS already funds another deposit; nothing changes", async () => {
    const funded = await createDeposit(db, "Park Seo", "3000")
    const second = await createDeposit(db, "Park Seo", "3000")
    assert.strictEqual((await agree(wallet.url, { deposit_id: funded.depositId, sms_id: 301 })).http, 200)
    const before = await walletState(db, second.depositId)
    const answer = await agree(wallet.url, { deposit_id: second.depositId, sms_id: 301 })
    assert.deepStrictEqual([answer.http, answer.body], [409, { status: 409, msg: "conflict", data: { detail: "SMS 301 already funds another deposit", issues: [] } }])
    assert.deepStrictEqual(await walletState(db, second.depositId), before)
    assert.strictEqual(before.status, "pending")
    assert.strictEqual((await balance(wallet.url, funded.playerId)).body.data.balance, "3000")
  })

  it("409 for a deposit that is rejected or expired, or pending but linked to another SMS", async () => {
    for (const status of ["rejected", "expired"]) {
      const { depositId } = await createDeposit(db, `Choi ${status}`, "700")
      await query(db, (sql) => sql`UPDATE recon.deposit SET status = ${status} WHERE id = ${depositId}`)
      const answer = await agree(wallet.url, { deposit_id: depositId, sms_id: 400 })
      assert.deepStrictEqual([answer.http, answer.body.data.detail], [409, `deposit ${depositId} is ${status}, not pending`])
      const state = await walletState(db, depositId)
      assert.deepStrictEqual([state.status, state.ledger, state.balance], [status, [], null])
    }
    const { depositId } = await createDeposit(db, "Choi linked", "700")
    await query(db, (sql) => sql`UPDATE recon.deposit SET sms_id = 410 WHERE id = ${depositId}`)
    assert.strictEqual((await agree(wallet.url, { deposit_id: depositId, sms_id: 411 })).http, 409)
    // Its own SMS (or none: the one stored) approves it.
    assert.deepStrictEqual((await agree(wallet.url, { deposit_id: depositId })).body, approved(depositId, false))
    assert.strictEqual((await walletState(db, depositId)).ledger[0]!.smsId, 410)
  })

  it("404 for an unknown deposit", async () => {
    const answer = await agree(wallet.url, { deposit_id: 999_999, sms_id: 1 })
    assert.deepStrictEqual([answer.http, answer.body], [404, { status: 404, msg: "not_found", data: { detail: "deposit 999999 not found", issues: [] } }])
  })

  it("400 for a body out of schema, 415 for non-JSON, 401 for the wrong caller, before anything is written", async () => {
    const { depositId } = await createDeposit(db, "Schema Kim", "10")
    for (const body of [{}, { deposit_id: "1" }, { deposit_id: 0 }, { deposit_id: 1.5 }, { deposit_id: depositId, sms_id: -1 }, { deposit_id: depositId, extra: 1 }, [depositId]]) {
      const answer = await agree(wallet.url, body)
      assert.deepStrictEqual([answer.http, answer.body.msg], [400, "bad_request"], JSON.stringify(body))
    }
    assert.strictEqual((await agree(wallet.url, undefined, { raw: "{broken" })).http, 400)
    assert.strictEqual((await agree(wallet.url, { deposit_id: depositId }, { contentType: "text/plain" })).http, 415)
    assert.strictEqual((await agree(wallet.url, { deposit_id: depositId }, { token: ADMIN_TOKEN })).http, 401)
    assert.strictEqual((await agree(wallet.url, { deposit_id: depositId }, { token: null })).http, 401)
    assert.strictEqual((await agree(wallet.url, { deposit_id: depositId, sms_id: 1 }, { token: "wrong", contentType: "text/plain", raw: "x" })).http, 401)
    assert.strictEqual((await agree(wallet.url, { x: "y".repeat(70_000) })).http, 413)
    assert.strictEqual((await walletState(db, depositId)).status, "pending")
    const unknown = await post(wallet.url, "/internal/wallet/nothing", {}, { token: RECON_TOKEN })
    assert.deepStrictEqual([unknown.http, unknown.body.data.detail], [404, "no such route"])
  })

  it("twenty concurrent agrees of one deposit credit once; ten deposits racing for one SMS: one wins", async () => {
    const { depositId, playerId } = await createDeposit(db, "Race One", "100")
    const answers = await Promise.all(Array.from({ length: 20 }, () => agree(wallet.url, { deposit_id: depositId, sms_id: 501 })))
    assert.deepStrictEqual(answers.map((a) => a.http), Array(20).fill(200))
    assert.strictEqual(answers.filter((a) => a.body.data.replayed === false).length, 1)
    assert.strictEqual((await balance(wallet.url, playerId)).body.data.balance, "100")

    const racers = await Promise.all(Array.from({ length: 10 }, (_, i) => createDeposit(db, `Racer ${i}`, "5")))
    const raced = await Promise.all(racers.map((r) => agree(wallet.url, { deposit_id: r.depositId, sms_id: 502 })))
    assert.deepStrictEqual(raced.map((a) => a.http).sort(), [200, ...Array(9).fill(409)])
    const [{ n }] = await query(db, (sql) => sql<{ n: bigint }>`SELECT count(*) AS n FROM wallet.ledger WHERE sms_id = 502`.pipe(Effect.map((r) => r as ReadonlyArray<{ n: bigint }>)))
    assert.strictEqual(Number(n), 1)
  })
})

describe("POST /internal/wallet/deposit/agree_batch", () => {
  const agreeBatch = (items: unknown, options: Parameters<typeof post>[3] = {}) =>
    post(wallet.url, "/internal/wallet/deposit/agree_batch", { items }, { token: RECON_TOKEN, ...options })

  it("answers each item as agree would, in the order given, in one transaction: approved, replayed, conflict, not found; credits once", async () => {
    const fresh = await createDeposit(db, "Batch Fresh", "1000")
    const sameTwice = await createDeposit(db, "Batch Twice", "2000")
    const before = await createDeposit(db, "Batch Before", "3000")
    const taken = await createDeposit(db, "Batch Taken", "4000")
    assert.strictEqual((await agree(wallet.url, { deposit_id: before.depositId, sms_id: 601 })).http, 200)
    const answer = await agreeBatch([
      { deposit_id: fresh.depositId, sms_id: 602 },
      { deposit_id: sameTwice.depositId, sms_id: 603 },
      { deposit_id: sameTwice.depositId, sms_id: 603 },
      { deposit_id: before.depositId, sms_id: 601 },
      { deposit_id: taken.depositId, sms_id: 601 },
      { deposit_id: 999_998 },
      { deposit_id: before.depositId, sms_id: 604 }
    ])
    assert.deepStrictEqual([answer.http, answer.body.status, answer.body.msg], [200, 200, "success"])
    assert.deepStrictEqual(answer.body.data.items, [
      { deposit_id: fresh.depositId, outcome: "approved", detail: null },
      { deposit_id: sameTwice.depositId, outcome: "approved", detail: null },
      { deposit_id: sameTwice.depositId, outcome: "replayed", detail: null },
      { deposit_id: before.depositId, outcome: "replayed", detail: null },
      { deposit_id: taken.depositId, outcome: "conflict", detail: "SMS 601 already funds another deposit" },
      { deposit_id: 999_998, outcome: "not_found", detail: "deposit 999998 not found" },
      { deposit_id: before.depositId, outcome: "conflict", detail: `deposit ${before.depositId} was approved with another SMS` }
    ])
    for (const [deposit, smsId, amount] of [[fresh, 602, "1000.00"], [sameTwice, 603, "2000.00"], [before, 601, "3000.00"]] as const) {
      const state = await walletState(db, deposit.depositId)
      assert.deepStrictEqual([state.status, state.smsId, state.ledger, state.balance], ["approved", smsId, [{ smsId, amount }], amount])
    }
    assert.deepStrictEqual([(await walletState(db, taken.depositId)).status, (await walletState(db, taken.depositId)).ledger], ["pending", []])
  })

  it("overlapping batches sent at once credit each deposit once and all answer (no deadlock), the players' balances exact", async () => {
    const deposits = await Promise.all(Array.from({ length: 12 }, (_, i) => createDeposit(db, `Batch Player ${i % 4}`, "10")))
    // Twelve batches of the same deposits, each in another order.
    const batches = Array.from({ length: 12 }, (_, k) =>
      deposits.map((_, i) => deposits[(i * 5 + k) % deposits.length]!).map((d) => ({ deposit_id: d.depositId, sms_id: 700 + deposits.indexOf(d) })))
    const answers = await Promise.all(batches.map((items) => agreeBatch(items)))
    assert.deepStrictEqual(answers.map((a) => a.http), Array(12).fill(200))
    const outcomes = answers.flatMap((a) => a.body.data.items as Array<{ deposit_id: number; outcome: string }>)
    for (const d of deposits) {
      assert.deepStrictEqual(outcomes.filter((o) => o.deposit_id === d.depositId).map((o) => o.outcome).sort(), ["approved", ...Array(11).fill("replayed")])
    }
    for (let p = 0; p < 4; p++) assert.strictEqual((await balance(wallet.url, deposits[p]!.playerId)).body.data.balance, "30")
  })

  it("400 for no items, more than 32, or an item out of schema; 401 for the wrong caller; nothing written", async () => {
    const { depositId } = await createDeposit(db, "Batch Schema", "10")
    for (const items of [[], Array.from({ length: 33 }, () => ({ deposit_id: depositId })), [{ deposit_id: 0 }], [{ deposit_id: depositId, extra: 1 }], "x"]) {
      const answer = await agreeBatch(items)
      assert.deepStrictEqual([answer.http, answer.body.msg], [400, "bad_request"], JSON.stringify(items).slice(0, 80))
    }
    assert.strictEqual((await agreeBatch([{ deposit_id: depositId }], { token: ADMIN_TOKEN })).http, 401)
    assert.strictEqual((await walletState(db, depositId)).status, "pending")
  })
})

describe("GET /internal/wallet/balance", () => {
  it("\"0\" for a player never credited, 404 for an unknown player, 400 for a bad id, 401 without the token", async () => {
    const { playerId } = await createDeposit(db, "Never Credited", "10")
    assert.deepStrictEqual((await balance(wallet.url, playerId)).body.data, { player_id: playerId, balance: "0" })
    assert.deepStrictEqual((await balance(wallet.url, 999_999)).body, { status: 404, msg: "not_found", data: { detail: "player 999999 not found", issues: [] } })
    for (const bad of ["abc", "0", "1.5", ""]) assert.strictEqual((await balance(wallet.url, bad)).http, 400, bad)
    assert.strictEqual((await balance(wallet.url, playerId, null)).http, 401)
    assert.strictEqual((await balance(wallet.url, playerId, ADMIN_TOKEN)).http, 401)
  })
})
