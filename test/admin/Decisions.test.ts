// The decisions an operator takes on the queues, end to end through admin and recon on a real
// database: assign (a parse_failed or ignored SMS read by eye) and reject of a parse_failed one;
// the second approval over SVC_REVIEW_SECOND_APPROVAL_OVER (202 pending, the same operator 409, a
// different one confirms; another decision replaces or ends the request); and the audit of every
// decision (POST /api/audit/list).
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Running, recon as reconCall } from "../support/recon.ts"
import { consoleBed, createOperator, login, request, sql } from "./support.ts"

let db: string
let recon: Running
let admin: Running
let close: () => Promise<void>
const tokens: Record<string, string> = {}

beforeAll(async () => {
  const bed = await consoleBed("admin_decisions", { SVC_REVIEW_SECOND_APPROVAL_OVER: "1,000,000" })
  ;[db, recon, admin, close, tokens["ada"]] = [bed.db, bed.recon, bed.admin, bed.close, bed.token]
  for (const name of ["grace", "linus"]) {
    await createOperator(db, name)
    tokens[name] = await login(admin.url, name)
  }
})
afterAll(() => close())

let seq = 0
const addSms = (status: string, payer: string | null = null, amount: string | null = null, parse: unknown = null) =>
  sql(db, (sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
      (device_id, sender, sender_normalized, body, normalized_body, received_at, status, payer_name, amount, parse_detail)
    VALUES ('dev-d', '15666000', '15666000', ${`신협 이체입금 의뢰인 ${payer ?? "홍길동"} 금액(${amount ?? "1"}) #${++seq}`}, ${`d${seq}`}, now(), ${status},
      ${payer}, ${amount}, ${parse === null ? null : JSON.stringify(parse)}::jsonb) RETURNING id`, (rows) => Number(rows[0]!.id)))

const addDeposit = (name: string, amount: string) =>
  sql(db, (sql) => Effect.gen(function*() {
    const [player] = yield* sql<{ id: bigint }>`INSERT INTO recon.player (name) VALUES (${name}) RETURNING id`
    const [deposit] = yield* sql<{ id: bigint }>`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
      VALUES (${player!.id}, ${name}, ${amount}) RETURNING id`
    return Number(deposit!.id)
  }))

const resolve = (as: string, body: unknown) => request(admin.url, "/api/review/resolve", { token: tokens[as]!, body })
const audit = (body: unknown = {}, as = "ada") => request(admin.url, "/api/audit/list", { token: tokens[as]!, body })
const smsOf = async (id: number) => (await reconCall(recon.url)("/shooter/sms/get", { id })).body.data
const pendingRequests = (id: number) =>
  sql(db, (sql) => sql<{ state: string; operator: string; closed_by: string | null }>`SELECT state, operator, closed_by FROM admin.approval_request
    WHERE sms_id = ${id} ORDER BY id`)

describe("assign and reject of what no template read", () => {
  it("assigns a parse_failed SMS as the signed-in operator: parsed, parse.reader operator, and on to matching", async () => {
    const id = await addSms("parse_failed", null, null, { kind: "deposit", reason: "a deposit that no template reads" })
    const answer = await resolve("ada", { sms_id: id, action: "assign", payer_name: "홍길동", amount: "50000", reason: "read by eye" })
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    assert.deepInclude(answer.body.data, { id, status: "parsed", payer_name: "홍길동", amount: "50000" })
    const sms = await smsOf(id)
    assert.strictEqual(sms.parse.reader, "operator")
    assert.deepStrictEqual(sms.match.decisions.map((d: any) => [d.operator, d.action, d.payer_name, d.amount, d.reason]), [["ada", "assign", "홍길동", "50000", "read by eye"]])
    // The same again (a double submit): the SMS is no longer parse_failed.
    const again = await resolve("ada", { sms_id: id, action: "assign", payer_name: "홍길동", amount: "50000" })
    assert.deepStrictEqual([again.http, again.body.data.detail], [409, `sms ${id} is parsed: nothing waits for a person's decision`])
  })

  it("assigns an ignored SMS; rejects a parse_failed one; refuses what the status does not take", async () => {
    const ignored = await addSms("ignored", null, null, { kind: "outgoing", reason: "출금 (withdrawal)" })
    assert.strictEqual((await resolve("ada", { sms_id: ignored, action: "assign", payer_name: "김철수", amount: "7000" })).body.data.status, "parsed")
    const junk = await addSms("parse_failed")
    const rejected = await resolve("grace", { sms_id: junk, action: "reject", reason: "a test message" })
    assert.strictEqual(rejected.body.data.status, "rejected")
    assert.deepInclude((await smsOf(junk)).match.decisions[0], { operator: "grace", action: "reject", reason: "a test message", from_status: "parse_failed" })
    const other = await addSms("ignored")
    const refuse = async (body: unknown, status: number, detail: RegExp) => {
      const answer = await resolve("ada", body)
      assert.strictEqual(answer.http, status, JSON.stringify(answer.body))
      assert.match(answer.body.data.detail, detail)
    }
    await refuse({ sms_id: other, action: "reject" }, 409, /is ignored: assign it/)
    await refuse({ sms_id: other, action: "approve", deposit_id: 1 }, 409, /is ignored: assign it/)
    await refuse({ sms_id: other, action: "assign", payer_name: "x" }, 400, /assign needs amount/)
    await refuse({ sms_id: other, action: "assign", payer_name: "x", amount: "5", deposit_id: 3 }, 400, /assign takes no deposit_id/)
    await refuse({ sms_id: other, action: "reject", amount: "5" }, 400, /reject takes no amount/)
    await refuse({ sms_id: other, action: "assign", payer_name: "x", amount: "5,000" }, 400, /decimal amount/)
    await refuse({ sms_id: other, action: "assign", payer_name: "x", amount: "0" }, 400, /above zero/)
    assert.strictEqual((await smsOf(other)).status, "ignored")
  })
})

describe("second approval over SVC_REVIEW_SECOND_APPROVAL_OVER", () => {
  it("an approval over the amount waits (202) for a different operator; the same one again is 409; the second confirms it", async () => {
    const deposit = await addDeposit("나영수", "2500000")
    const id = await addSms("unmatched", "나영수", "2500000")
    const first = await resolve("ada", { sms_id: id, action: "approve", deposit_id: deposit })
    assert.strictEqual(first.http, 202)
    assert.deepStrictEqual(first.body, { status: 202, msg: "pending", data: { pending: "second_approval" } })
    assert.strictEqual((await smsOf(id)).status, "unmatched")

    const mine = await resolve("ada", { sms_id: id, action: "approve", deposit_id: deposit })
    assert.strictEqual(mine.http, 409)
    assert.match(mine.body.data.detail, /you asked for this approve at .* KST; a different operator must approve it/)

    const queued = (await request(admin.url, "/api/review/list", { token: tokens["grace"]!, body: { status: "unmatched" } })).body.data.items.find((i: any) => i.id === id)
    assert.deepInclude(queued.pending_approval, { action: "approve", deposit_id: deposit, amount: "2500000", operator: "ada" })

    const second = await resolve("grace", { sms_id: id, action: "approve", deposit_id: deposit })
    assert.strictEqual(second.http, 200, JSON.stringify(second.body))
    assert.deepInclude(second.body.data, { status: "approving", deposit_id: deposit })
    assert.deepInclude((await smsOf(id)).match.decisions[0], { operator: "ada", second_operator: "grace", action: "approve", deposit_id: deposit })
    assert.deepStrictEqual(await pendingRequests(id), [{ state: "confirmed", operator: "ada", closed_by: "grace" }])
    // Decided: nothing left to approve.
    assert.strictEqual((await resolve("linus", { sms_id: id, action: "approve", deposit_id: deposit })).http, 409)
  })

  it("an assignment over the amount waits too; a different decision replaces the request, a rejection ends it", async () => {
    const id = await addSms("parse_failed")
    const big = { sms_id: id, action: "assign", payer_name: "홍 길동", amount: "3000000" }
    assert.strictEqual((await resolve("ada", big)).http, 202)
    // Another reading by another operator is not a confirmation: it replaces the request.
    assert.strictEqual((await resolve("grace", { ...big, amount: "3000001" })).http, 202)
    assert.deepStrictEqual((await pendingRequests(id)).map((r) => [r.state, r.operator]), [["superseded", "ada"], ["pending", "grace"]])
    // ada now confirms grace's reading (the name compared without its spaces).
    const confirmed = await resolve("ada", { ...big, payer_name: "홍길동", amount: "3000001.00" })
    assert.strictEqual(confirmed.http, 200, JSON.stringify(confirmed.body))
    assert.deepInclude((await smsOf(id)).match.decisions[0], { operator: "grace", second_operator: "ada", action: "assign", amount: "3000001" })

    const other = await addSms("parse_failed")
    assert.strictEqual((await resolve("ada", { sms_id: other, action: "assign", payer_name: "x", amount: "2000000" })).http, 202)
    assert.strictEqual((await resolve("grace", { sms_id: other, action: "reject" })).body.data.status, "rejected")
    assert.deepStrictEqual((await pendingRequests(other)).map((r) => [r.state, r.closed_by]), [["void", "grace"]])
  })

  it("at or below the amount one operator decides; an approval recon would refuse is refused before anyone is asked", async () => {
    const deposit = await addDeposit("진소희", "1000000")
    const id = await addSms("manual_review", "진소희", "1000000")
    assert.strictEqual((await resolve("ada", { sms_id: id, action: "approve", deposit_id: deposit })).http, 200)
    const big = await addSms("unmatched", "마동석", "2000000")
    const wrong = await addDeposit("마동석", "2000001")
    const refused = await resolve("ada", { sms_id: big, action: "approve", deposit_id: wrong })
    assert.deepStrictEqual([refused.http, refused.body.data.detail], [409, `deposit ${wrong} is for 2000001, the SMS for 2000000`])
    assert.strictEqual((await resolve("ada", { sms_id: big, action: "approve", deposit_id: 999_999 })).http, 404)
    assert.deepStrictEqual(await pendingRequests(big), [])
  })

  it("two operators deciding at once: one request and one confirmation, never two requests", async () => {
    const deposit = await addDeposit("동시에", "5000000")
    const id = await addSms("unmatched", "동시에", "5000000")
    const answers = await Promise.all(["ada", "grace"].map((as) => resolve(as, { sms_id: id, action: "approve", deposit_id: deposit })))
    assert.deepStrictEqual(answers.map((a) => a.http).sort(), [200, 202])
    assert.deepStrictEqual((await pendingRequests(id)).map((r) => r.state), ["confirmed"])
    assert.strictEqual((await smsOf(id)).status, "approving")
  })
})

describe("POST /api/audit/list", () => {
  it("lists every decision newest first: who decided, who confirmed, the deposit, the reason; and requests not confirmed", async () => {
    const all = await audit({ page_size: 200 })
    assert.strictEqual(all.http, 200, JSON.stringify(all.body))
    const items = all.body.data.items
    assert.strictEqual(all.body.data.total, items.length)
    assert.deepStrictEqual(Object.keys(items[0]).sort(), ["action", "amount", "at", "deposit_id", "operator", "payer_name", "reason", "result", "second_operator", "sms_id"])
    const times = items.map((i: any) => Date.parse(i.at))
    assert.deepStrictEqual(times, [...times].sort((a, b) => b - a))
    const actions = new Set(items.map((i: any) => i.action))
    for (const action of ["assign", "reject", "approve"]) assert.isTrue(actions.has(action), action)
    assert.isTrue(items.some((i: any) => i.second_operator === "grace" && i.action === "approve" && i.amount === "2500000"))
    assert.isTrue(items.some((i: any) => i.result === "second_approval_superseded" && i.operator === "ada"))
    assert.isTrue(items.some((i: any) => i.reason === "a test message" && i.result === "rejected"))

    // operator matches who decided or who confirmed.
    const grace = (await audit({ operator: "grace", page_size: 200 })).body.data.items
    assert.isTrue(grace.length > 0 && grace.every((i: any) => i.operator === "grace" || i.second_operator === "grace"))
    assert.isTrue(grace.some((i: any) => i.operator === "ada" && i.second_operator === "grace"))
    const one = items[0].sms_id
    const bySms = (await audit({ sms_id: one })).body.data.items
    assert.isTrue(bySms.length > 0 && bySms.every((i: any) => i.sms_id === one))
    const paged = (await audit({ page: 2, page_size: 2 })).body.data
    assert.deepStrictEqual(paged.items.map((i: any) => [i.sms_id, i.at]), items.slice(2, 4).map((i: any) => [i.sms_id, i.at]))
  })

  it("refuses bad input (400) and strangers (401)", async () => {
    for (const body of [{ sms_id: 0 }, { page_size: 500 }, { operator: 5 }, { who: "ada" }]) assert.strictEqual((await audit(body)).http, 400, JSON.stringify(body))
    assert.strictEqual((await request(admin.url, "/api/audit/list", { body: {} })).http, 401)
  })
})
