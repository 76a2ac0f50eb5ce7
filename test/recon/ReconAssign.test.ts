// /shooter/sms/assign and /shooter/sms/dismiss (a parse_failed or ignored SMS read by a person, or
// found no money), the second operator and reason kept with decisions, and the registration's
// default silence window, through HTTP on a real database.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createMigratedDatabase, sql } from "../support/database.ts"
import { recon, type Running, startRecon } from "../support/recon.ts"

let db: string
let server: Running
let call: ReturnType<typeof recon>

beforeAll(async () => {
  db = await createMigratedDatabase("assign")
  server = await startRecon(db)
  call = recon(server.url)
})
afterAll(() => server.close())

const query = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => sql(db, f)

let seq = 0
/** An SMS as parse_loop leaves it, from `sender`. */
const sms = (status: string, parse: unknown = { kind: "deposit", reason: "a deposit that no template reads" }, sender = "15990000") =>
  query((sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
      (device_id, sender, sender_normalized, body, normalized_body, received_at, status, parse_detail)
    VALUES ('dev-a', ${sender}, ${sender}, ${`새은행 입금 홍길동 50,000 #${++seq}`}, ${`new${seq}`}, now(), ${status},
      ${JSON.stringify(parse)}::jsonb) RETURNING id`, (rows) => Number(rows[0]!.id)))

const row = (id: number) =>
  query((sql) => Effect.map(sql<{ status: string; payer_name: string | null; amount: string | null; bank: string | null; payer_key: string | null }>`
    SELECT status, payer_name, amount::text AS amount, bank, payer_key FROM recon.shooter_sms WHERE id = ${id}`, (rows) => rows[0]!))

const assertError = (answer: { http: number; body: any }, status: number, detail?: RegExp) => {
  assert.strictEqual(answer.http, status, JSON.stringify(answer.body))
  if (detail !== undefined) assert.match(answer.body.data.detail, detail)
}

describe("sms/assign", () => {
  it("makes a parse_failed SMS parsed with the person's reading, bank from the whitelist, and keeps the decision", async () => {
    await call("/shooter/phone/add", { phone: "1599-0000", bank: "새은행" })
    const id = await sms("parse_failed")
    const answer = await call("/shooter/sms/assign", { id, payer_name: " 홍길동 ", amount: "50000", operator: "grace", reason: "read by eye" })
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    assert.deepInclude(answer.body.data, { id, status: "parsed", payer_name: "홍길동", amount: "50000", bank: "새은행" })
    assert.deepInclude(await row(id), { payer_key: "홍길동" })
    const got = (await call("/shooter/sms/get", { id })).body.data
    assert.deepInclude(got.parse, { reader: "operator", operator: "grace", payer_name: "홍길동", amount: "50000" })
    assert.strictEqual(got.parse.previous.reason, "a deposit that no template reads")
    assert.deepStrictEqual(got.match.decisions.map((d: any) => [d.operator, d.second_operator, d.action, d.payer_name, d.amount, d.reason, d.from_status, d.to_status]), [
      ["grace", null, "assign", "홍길동", "50000", "read by eye", "parse_failed", "parsed"]
    ])
  })

  it("takes an ignored SMS too, and a second operator", async () => {
    const id = await sms("ignored", { kind: "outgoing", reason: "출금 (withdrawal)" }, "15881111")
    const answer = await call("/shooter/sms/assign", { id, payer_name: "김철수", amount: "12.50", operator: "grace", second_operator: "ada" })
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    assert.deepInclude(answer.body.data, { status: "parsed", amount: "12.50", bank: null })
    const [decision] = (await call("/shooter/sms/get", { id })).body.data.match.decisions
    assert.deepInclude(decision, { operator: "grace", second_operator: "ada", action: "assign", from_status: "ignored" })
  })

  it("is one decision: a double submit is 409 and changes nothing", async () => {
    const id = await sms("parse_failed")
    const body = { id, payer_name: "이영희", amount: "30000", operator: "grace" }
    const answers = await Promise.all([call("/shooter/sms/assign", body), call("/shooter/sms/assign", { ...body, operator: "ada" })])
    assert.deepStrictEqual(answers.map((a) => a.http).sort(), [200, 409])
    assertError(answers.find((a) => a.http === 409)!, 409, /is parsed, not parse_failed or ignored/)
    const decisions = (await call("/shooter/sms/get", { id })).body.data.match.decisions
    assert.strictEqual(decisions.length, 1)
  })

  it("refuses other statuses, bad input and the same person twice", async () => {
    for (const status of ["received", "need_check", "parsed", "unmatched", "manual_review", "approving", "approved", "rejected", "duplicate"]) {
      const id = await sms(status)
      assertError(await call("/shooter/sms/assign", { id, payer_name: "x", amount: "1", operator: "grace" }), 409)
      assert.strictEqual((await row(id)).status, status)
    }
    const id = await sms("parse_failed")
    for (const amount of ["0", "-5", "1,000", "12.345", "abc", "", "00012"]) {
      assertError(await call("/shooter/sms/assign", { id, payer_name: "x", amount, operator: "grace" }), 400)
    }
    assertError(await call("/shooter/sms/assign", { id, payer_name: "  ", amount: "1", operator: "grace" }), 400)
    assertError(await call("/shooter/sms/assign", { id, payer_name: "x", amount: 1000, operator: "grace" }), 400)
    assertError(await call("/shooter/sms/assign", { id, payer_name: "x", amount: "1", operator: "grace", second_operator: "grace" }), 400, /another operator/)
    assertError(await call("/shooter/sms/assign", { id: 999_999, payer_name: "x", amount: "1", operator: "grace" }), 404)
    assertError(await call("/shooter/sms/assign", { id, payer_name: "x", amount: "1", operator: "grace" }, { token: "wrong" }), 401)
    assert.strictEqual((await row(id)).status, "parse_failed")
  })
})

describe("sms/dismiss", () => {
  it("rejects a parse_failed SMS with the reason kept; any other status is 409", async () => {
    const id = await sms("parse_failed")
    const answer = await call("/shooter/sms/dismiss", { id, operator: "ada", reason: "a test message from the bank" })
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    assert.strictEqual(answer.body.data.status, "rejected")
    const [decision] = (await call("/shooter/sms/get", { id })).body.data.match.decisions
    assert.deepInclude(decision, { operator: "ada", action: "reject", reason: "a test message from the bank", from_status: "parse_failed", to_status: "rejected" })
    assertError(await call("/shooter/sms/dismiss", { id, operator: "ada" }), 409, /is rejected, not parse_failed/)
    assertError(await call("/shooter/sms/dismiss", { id: await sms("ignored"), operator: "ada" }), 409)
    assertError(await call("/shooter/sms/dismiss", { id, operator: "" }), 400)
  })
})

describe("decisions keep who confirmed and why", () => {
  it("resolve and check take second_operator and reason", async () => {
    const held = await sms("need_check")
    assert.strictEqual((await call("/shooter/sms/check", { id: held, result: "reject", operator: "ada", reason: "spam" })).http, 200)
    const [checked] = (await call("/shooter/sms/get", { id: held })).body.data.match.decisions
    assert.deepInclude(checked, { action: "reject", reason: "spam", second_operator: null })
    const review = await sms("unmatched")
    const answer = await call("/shooter/sms/resolve", { id: review, action: "reject", operator: "ada", second_operator: "grace", reason: "no such player" })
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    const [resolved] = (await call("/shooter/sms/get", { id: review })).body.data.match.decisions
    assert.deepInclude(resolved, { operator: "ada", second_operator: "grace", reason: "no such player" })
    assertError(await call("/shooter/sms/resolve", { id: review, action: "reject", operator: "ada", reason: "x".repeat(501) }), 400)
  })
})

describe("pushsvc silence_alert_s", () => {
  it("defaults to an hour and is shown by add_device and list", async () => {
    const added = await call("/pushsvc/add_device", { device_id: "quiet-default", format: "smsforwarder" })
    assert.strictEqual(added.body.data.silence_alert_s, 3600)
    const set = await call("/pushsvc/add_device", { device_id: "quiet-set", format: "smsforwarder", silence_alert_s: 120 })
    assert.strictEqual(set.body.data.silence_alert_s, 120)
    const listed = await call("/pushsvc/list", { device_id: "quiet-set" })
    assert.strictEqual(listed.body.data.items[0].silence_alert_s, 120)
    assertError(await call("/pushsvc/add_device", { device_id: "quiet-bad", format: "smsforwarder", silence_alert_s: 0 }), 400)
  })
})
