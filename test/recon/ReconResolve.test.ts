// /shooter/sms/resolve and the decisions of /shooter/sms/check, through HTTP on a real database:
// every status, the deposit's checks, the record of who decided, and the review flags.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { recon, type Running, startRecon } from "../support/recon.ts"

let db: string
let server: Running
let call: ReturnType<typeof recon>

beforeAll(async () => {
  db = await createMigratedDatabase("resolve")
  server = await startRecon(db)
  call = recon(server.url)
})
afterAll(() => server.close())

const query = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  runSql(db, Effect.gen(function*() {
    return yield* f(yield* SqlClient.SqlClient)
  }).pipe(Effect.orDie))

let seq = 0
/** An SMS as parse and match leave it. */
const sms = (status: string, payer: string | null = null, amount: string | null = null, match: unknown = null) =>
  query((sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
      (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount, match_detail)
    VALUES ('dev-r', '16449999', ${`[KB] ${payer} 입금 ${amount} #${++seq}`}, ${`kb${seq}`}, now(), ${status},
      ${payer === null ? null : "KB국민"}, ${payer}, ${amount}, ${match === null ? null : JSON.stringify(match)}::jsonb) RETURNING id`,
  (rows) => Number(rows[0]!.id)))

const player = (name: string) =>
  query((sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.player (name) VALUES (${name}) RETURNING id`, (rows) => Number(rows[0]!.id)))

const deposit = (playerId: number, owner: string, amount: string, fields: { status?: string; task_status?: number | null } = {}) =>
  query((sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.deposit (player_id, from_bank_owner, amount, status, task_status)
    VALUES (${playerId}, ${owner}, ${amount}, ${fields.status ?? "pending"}, ${fields.task_status ?? null}) RETURNING id`,
  (rows) => Number(rows[0]!.id)))

const flags = (ids: ReadonlyArray<number>) =>
  query((sql) => Effect.map(sql<{ id: bigint; task_status: number | null }>`SELECT id, task_status FROM recon.deposit
    WHERE ${sql.in("id", ids)} ORDER BY id`, (rows) => rows.map((r) => r.task_status)))

const state = (id: number) =>
  query((sql) => Effect.map(sql<{ status: string; deposit_id: bigint | null; decisions: bigint }>`SELECT status, deposit_id,
    (SELECT count(*) FROM recon.sms_decision WHERE sms_id = ${id}) AS decisions FROM recon.shooter_sms WHERE id = ${id}`,
  ([row]) => ({ status: row!.status, deposit_id: row!.deposit_id === null ? null : Number(row!.deposit_id), decisions: Number(row!.decisions) })))

const assertError = (answer: { http: number; body: any }, status: number, msg: string, detail?: RegExp) => {
  assert.strictEqual(answer.http, status, JSON.stringify(answer.body))
  assert.strictEqual(answer.body.msg, msg)
  if (detail !== undefined) assert.match(answer.body.data.detail, detail)
}

/** Two players who share a name, each with a pending deposit of the amount, both flagged by the match. */
const collision = async (name: string, amount: string) => {
  const a = await deposit(await player(name), name, amount, { task_status: 6 })
  const b = await deposit(await player(name), ` ${name} `, amount, { task_status: 6 })
  return [a, b] as const
}

/** The database's clock now, in milliseconds (what decided_at is written with). */
const databaseNow = () =>
  runSql(db, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ at: string }>`SELECT recon.iso_time(clock_timestamp()) AS at`
    return Date.parse(row!.at)
  }))

describe("resolve: approve", () => {
  it("sends a manual_review SMS to approving with the chosen deposit, keeps the decision, clears the flags it set", async () => {
    const [a, b] = await collision("김민준", "50000")
    const bystander = await deposit(await player("박서연"), "박서연", "50000", { task_status: 6 })
    const id = await sms("manual_review", "김 민준", "50000", { candidates: [a, b], decision: "several players share the name" })
    const before = await databaseNow()
    const answer = await call("/shooter/sms/resolve", { id, action: "approve", deposit_id: b, operator: "grace" })
    const after = await databaseNow()
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    assert.deepInclude(answer.body.data, { id, status: "approving", deposit_id: b, payer_name: "김 민준", amount: "50000" })
    assert.deepStrictEqual(Object.keys(answer.body.data).sort(), [
      "amount", "bank", "body", "created_at", "deposit_id", "device_id", "id", "payer_name", "received_at", "sender", "status"
    ])
    // Both of this SMS's flags go; another name's flag stays.
    assert.deepStrictEqual(await flags([a, b, bystander]), [null, null, 6])

    const got = (await call("/shooter/sms/get", { id })).body.data
    assert.strictEqual(got.match.decision, "several players share the name")
    assert.deepStrictEqual(got.match.candidates, [a, b])
    assert.strictEqual(got.match.decisions.length, 1)
    const [decision] = got.match.decisions
    assert.deepInclude(decision, { operator: "grace", action: "approve", deposit_id: b, from_status: "manual_review", to_status: "approving" })
    // Decided during the call, by the database's clock.
    const decidedAt = Date.parse(decision.decided_at)
    assert.isTrue(decidedAt >= before && decidedAt <= after, `decided at ${decision.decided_at}, the call from ${new Date(before).toISOString()} to ${new Date(after).toISOString()}`)
    // Approving now: neither a second decision nor a reset can undo it.
    assertError(await call("/shooter/sms/resolve", { id, action: "reject", operator: "grace" }), 409, "conflict", /approving/)
  })

  it("clears the flag of a deposit whose owner has the SMS payer's name key (as the match compared them), not only JS's white space", async () => {
    // U+180E (Mongolian vowel separator) is white space to recon.name_key, not to JS's \s.
    const flagged = await deposit(await player("한지민"), "한지민", "64000", { task_status: 6 })
    const chosen = await deposit(await player("한지민"), "한지민", "64000", { task_status: 6 })
    const id = await sms("manual_review", "한\u180e지민", "64000")
    assert.strictEqual((await call("/shooter/sms/resolve", { id, action: "approve", deposit_id: chosen, operator: "grace" })).http, 200)
    assert.deepStrictEqual(await flags([flagged, chosen]), [null, null])
  })

  it("keeps a flag that another open review still holds, and clears it when that review ends", async () => {
    const [a, b] = await collision("이서준", "70000")
    const first = await sms("manual_review", "이서준", "70000")
    const second = await sms("manual_review", "이서준", "70000")
    assert.strictEqual((await call("/shooter/sms/resolve", { id: first, action: "approve", deposit_id: a, operator: "grace" })).http, 200)
    assert.deepStrictEqual(await flags([a, b]), [null, 6])
    // The chosen deposit is taken: the other SMS cannot have it too.
    assertError(await call("/shooter/sms/resolve", { id: second, action: "approve", deposit_id: a, operator: "ada" }), 409, "conflict",
      /already being approved with sms/)
    assert.strictEqual((await call("/shooter/sms/resolve", { id: second, action: "reject", operator: "ada" })).body.data.status, "rejected")
    assert.deepStrictEqual(await flags([a, b]), [null, null])
    const decisions = (await call("/shooter/sms/get", { id: second })).body.data.match.decisions
    assert.deepStrictEqual(decisions.map((d: any) => [d.operator, d.action, d.deposit_id, d.to_status]), [["ada", "reject", null, "rejected"]])
  })

  it("approves an unmatched SMS to a pending deposit of its amount under another name", async () => {
    const target = await deposit(await player("정하은"), "정하은(회사)", "12345.50")
    const flagged = await deposit(await player("최지우"), "최지우", "12345.50", { task_status: 6 })
    const id = await sms("unmatched", "정하은", "12345.5")
    const answer = await call("/shooter/sms/resolve", { id, action: "approve", deposit_id: target, operator: "grace" })
    assert.deepInclude(answer.body.data, { status: "approving", deposit_id: target })
    // An unmatched SMS set no flags: it clears none.
    assert.deepStrictEqual(await flags([target, flagged]), [null, 6])
  })
})

describe("resolve: refusals change nothing", () => {
  it("a deposit of another amount, not pending, or unknown; an unknown SMS", async () => {
    const [a] = await collision("한지민", "30000")
    const other = await deposit(await player("오세훈"), "오세훈", "30001")
    const approved = await deposit(await player("오세훈"), "오세훈", "30000", { status: "approved" })
    const expired = await deposit(await player("오세훈"), "오세훈", "30000", { status: "expired" })
    const id = await sms("manual_review", "한지민", "30000")
    const before = await state(id)
    assertError(await call("/shooter/sms/resolve", { id, action: "approve", deposit_id: other, operator: "grace" }), 409, "conflict",
      /is for 30001\.00, the SMS for 30000\.00/)
    assertError(await call("/shooter/sms/resolve", { id, action: "approve", deposit_id: approved, operator: "grace" }), 409, "conflict", /approved, not pending/)
    assertError(await call("/shooter/sms/resolve", { id, action: "approve", deposit_id: expired, operator: "grace" }), 409, "conflict", /expired, not pending/)
    assertError(await call("/shooter/sms/resolve", { id, action: "approve", deposit_id: 999_999, operator: "grace" }), 404, "not_found", /deposit 999999/)
    assertError(await call("/shooter/sms/resolve", { id: 999_999, action: "reject", operator: "grace" }), 404, "not_found", /sms 999999/)
    assert.deepStrictEqual(await state(id), before)
    assert.deepStrictEqual(await flags([a]), [6])
    // No decision was recorded (the match holds only the suggestions every unmatched SMS shows).
    assert.deepStrictEqual((await call("/shooter/sms/get", { id })).body.data.match, { suggestions: [] })
  })

  it("an SMS in any status but manual_review or unmatched is 409", async () => {
    const target = await deposit(await player("유재석"), "유재석", "40000")
    for (const status of ["received", "need_check", "rejected", "duplicate", "ignored", "parse_failed", "parsed", "approving", "approved"]) {
      const id = await sms(status, "유재석", "40000")
      assertError(await call("/shooter/sms/resolve", { id, action: "approve", deposit_id: target, operator: "grace" }), 409, "conflict",
        new RegExp(`is ${status}, not manual_review or unmatched`))
      assertError(await call("/shooter/sms/resolve", { id, action: "reject", operator: "grace" }), 409, "conflict")
      assert.deepStrictEqual(await state(id), { status, deposit_id: null, decisions: 0 })
    }
  })

  it("malformed requests are 400: approve without a deposit, reject with one, no or a too long operator, unknown action", async () => {
    const id = await sms("unmatched", "강호동", "1000")
    const target = await deposit(await player("강호동"), "강호동", "1000")
    assertError(await call("/shooter/sms/resolve", { id, action: "approve", operator: "grace" }), 400, "bad_request", /deposit_id/)
    assertError(await call("/shooter/sms/resolve", { id, action: "reject", deposit_id: target, operator: "grace" }), 400, "bad_request")
    assertError(await call("/shooter/sms/resolve", { id, action: "reject" }), 400, "bad_request")
    assertError(await call("/shooter/sms/resolve", { id, action: "reject", operator: "" }), 400, "bad_request")
    assertError(await call("/shooter/sms/resolve", { id, action: "reject", operator: "x".repeat(65) }), 400, "bad_request")
    assertError(await call("/shooter/sms/resolve", { id, action: "pass", operator: "grace" }), 400, "bad_request")
    assertError(await call("/shooter/sms/resolve", { id, action: "reject", operator: "grace", note: "x" }), 400, "bad_request")
    assert.deepStrictEqual(await state(id), { status: "unmatched", deposit_id: null, decisions: 0 })
  })
})

describe("check keeps its decision", () => {
  it("with and without an operator", async () => {
    const named = await sms("need_check")
    const anonymous = await sms("need_check")
    assert.strictEqual((await call("/shooter/sms/check", { id: named, result: "pass", operator: "grace" })).body.data.status, "received")
    assert.strictEqual((await call("/shooter/sms/check", { id: anonymous, result: "reject" })).body.data.status, "rejected")
    const decisions = async (id: number) => (await call("/shooter/sms/get", { id })).body.data.match.decisions
      .map((d: any) => [d.operator, d.action, d.deposit_id, d.from_status, d.to_status])
    assert.deepStrictEqual(await decisions(named), [["grace", "pass", null, "need_check", "received"]])
    assert.deepStrictEqual(await decisions(anonymous), [[null, "reject", null, "need_check", "rejected"]])
    // A refused check records nothing.
    assertError(await call("/shooter/sms/check", { id: named, result: "reject", operator: "grace" }), 409, "conflict")
    assert.strictEqual((await decisions(named)).length, 1)
    assertError(await call("/shooter/sms/check", { id: named, result: "pass", operator: "" }), 400, "bad_request")
  })
})
