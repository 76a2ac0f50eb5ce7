// The review queue on admin_service: /api/review/list with candidate deposits, /api/review/resolve
// passing the signed-in operator on to recon's check and resolve, recon's refusals and absence,
// and the `activity` websocket messages that carry the queue and the latest SMS live.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Running, recon as reconCall } from "../support/recon.ts"
import { adminEnv, consoleBed, login, openSocket, request, sql, type SocketClient, startAdmin } from "./support.ts"

let db: string
let recon: Running
let admin: Running
let token: string

let close: () => Promise<void>

beforeAll(async () => {
  ({ admin, close, db, recon, token } = await consoleBed("admin_review"))
})
afterAll(async () => {
  await close()
})

let seq = 0
const addSms = (status: string, payer: string | null = null, amount: string | null = null) =>
  sql(db, (sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
      (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount)
    VALUES ('dev-q', '15882100', ${`농협 입금${amount}원 ${payer} #${++seq}`}, ${`nh${seq}`}, now(), ${status},
      ${payer === null ? null : "NH농협"}, ${payer}, ${amount}) RETURNING id`, (rows) => Number(rows[0]!.id)))

const addDeposit = (name: string, owner: string, amount: string, taskStatus: number | null = null) =>
  sql(db, (sql) => Effect.gen(function*() {
    const [player] = yield* sql<{ id: bigint }>`INSERT INTO recon.player (name) VALUES (${name}) RETURNING id`
    const [deposit] = yield* sql<{ id: bigint }>`INSERT INTO recon.deposit (player_id, from_bank_owner, amount, task_status)
      VALUES (${player!.id}, ${owner}, ${amount}, ${taskStatus}) RETURNING id`
    return { player: Number(player!.id), deposit: Number(deposit!.id) }
  }))

const list = (body: unknown = {}) => request(admin.url, "/api/review/list", { token, body })
const resolve = (body: unknown, as = token) => request(admin.url, "/api/review/resolve", { token: as, body })
const decisions = async (id: number) =>
  (await reconCall(recon.url)("/shooter/sms/get", { id })).body.data.match.decisions.map((d: any) => [d.operator, d.action, d.deposit_id, d.to_status])

/** The next message of a type, skipping others (top-info and activity share the socket). */
const nextOf = async (socket: SocketClient, type: string, until: (m: any) => boolean = () => true) => {
  for (;;) {
    const message = await socket.next(8_000)
    if (message.type === type && until(message)) return message as any
  }
}

describe("review list", () => {
  it("lists the SMS awaiting a person, newest first, with their candidate deposits and counts", async () => {
    const held = await addSms("need_check")
    const a = await addDeposit("장서윤", "장서윤", "88000", 6)
    const b = await addDeposit("장서윤", "장 서윤", "88000", 6)
    const stranger = await addDeposit("문지호", "문지호", "88000")
    await addDeposit("장서윤", "장서윤", "88001")
    const review = await addSms("manual_review", "장서윤", "88000")
    const unmatched = await addSms("unmatched", "문 지호", "88000")
    await addSms("parsed", "장서윤", "88000")

    const answer = await list()
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    assert.match(answer.headers.get("authorization") ?? "", /^Bearer /)
    const data = answer.body.data
    assert.deepStrictEqual(data.counts, { need_check: 1, manual_review: 1, unmatched: 1, parse_failed: 0, ignored: 0 })
    assert.deepStrictEqual([data.total, data.page, data.page_size], [3, 1, 20])
    assert.deepStrictEqual(data.items.map((i: any) => [i.id, i.status]), [[unmatched, "unmatched"], [review, "manual_review"], [held, "need_check"]])
    const [u, m, n] = data.items
    assert.deepStrictEqual(n.candidates, [])
    // manual_review: the deposits of the payer's name and amount; the other name's is not one.
    assert.deepStrictEqual(m.candidates.map((c: any) => [c.deposit_id, c.player_id, c.player_name, c.amount, c.task_status, c.same_name]), [
      [b.deposit, b.player, "장서윤", "88000", 6, true],
      [a.deposit, a.player, "장서윤", "88000", 6, true]
    ])
    assert.strictEqual(m.candidates_total, 2)
    assert.match(m.candidates[0].created_at, /^\d{4}-\d\d-\d\dT/)
    // unmatched: any pending deposit of the amount, the payer's name first.
    assert.deepStrictEqual(u.candidates.map((c: any) => [c.deposit_id, c.same_name]), [
      [stranger.deposit, true], [b.deposit, false], [a.deposit, false]
    ])
    assert.deepInclude(m, { payer_name: "장서윤", amount: "88000", bank: "NH농협", pending_approval: null })
    // How long each has waited for a person, from when it was received.
    for (const item of data.items) assert.isAtLeast(item.waiting_s, 0)

    const only = await list({ status: "manual_review", page_size: 1 })
    assert.deepStrictEqual([only.body.data.total, only.body.data.items.map((i: any) => i.id)], [1, [review]])
    assert.strictEqual((await list({ status: "parsed" })).http, 400)
    assert.strictEqual((await list({ page_size: 0 })).http, 400)
  })

  it("keeps candidate lists short and distinct: at most 10, with their total; none already being approved", async () => {
    const review = await addSms("manual_review", "도가은", "77000")
    const deposits: Array<number> = []
    for (let i = 0; i < 13; i++) deposits.push((await addDeposit("도가은", "도가은", "77000", 6)).deposit)
    // One of them is being approved with another SMS: not a candidate.
    await sql(db, (sql) => sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status, payer_name, amount, deposit_id)
      VALUES ('dev-q', '15882100', 'taken', 'taken', now(), 'approving', '도가은', 77000, ${deposits[0]!})`)
    const item = (await list({ status: "manual_review", page_size: 200 })).body.data.items.find((i: any) => i.id === review)
    assert.strictEqual(item.candidates.length, 10)
    assert.strictEqual(item.candidates_total, 12)
    const ids = item.candidates.map((c: any) => c.deposit_id)
    assert.strictEqual(new Set(ids).size, 10)
    assert.notInclude(ids, deposits[0])
    // The newest first.
    assert.deepStrictEqual(ids, [...deposits].reverse().slice(0, 10))
  })

  it("lists parse_failed and ignored SMS with the reason the readers gave", async () => {
    const failed = await sql(db, (sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
        (device_id, sender, body, normalized_body, received_at, status, parse_detail)
      VALUES ('dev-q', '15666000', '신협 이체입금 의뢰인 홍길동', 'pf1', now(), 'parse_failed',
        '{"kind":"deposit","reason":"a deposit that no template reads"}'::jsonb) RETURNING id`, (rows) => Number(rows[0]!.id)))
    const ignored = await sql(db, (sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
        (device_id, sender, body, normalized_body, received_at, status, parse_detail)
      VALUES ('dev-q', '16449999', '[KB] 출금 8,110', 'ig1', now(), 'ignored',
        '{"kind":"outgoing","reason":"출금 (withdrawal)"}'::jsonb) RETURNING id`, (rows) => Number(rows[0]!.id)))
    const pf = (await list({ status: "parse_failed" })).body.data
    assert.deepInclude(pf.items.find((i: any) => i.id === failed), { reason: "a deposit that no template reads", candidates: [], candidates_total: 0 })
    assert.isAtLeast(pf.items.find((i: any) => i.id === failed).waiting_s, 0)
    const ig = (await list({ status: "ignored" })).body.data
    assert.deepInclude(ig.items.find((i: any) => i.id === ignored), { reason: "출금 (withdrawal)", waiting_s: null })
    assert.isAtLeast(ig.counts.ignored, 1)
    assert.isAtLeast(ig.counts.parse_failed, 1)
  })

  it("shows the suggestions of unmatched and manual-review items (recon's match.suggestions, with the player's name)", async () => {
    const prefixed = await addDeposit("박석호", "박석호", "61170")
    const separated = await addDeposit("이서연", "이서연", "62340")
    const twins = [await addDeposit("한결희", "한결희", "63510", 6), await addDeposit("한결희", "한결희", "63510", 6)]
    const other = await addDeposit("한결희망", "한결희망", "63510")
    const code = await addSms("unmatched", "coin1147 박석호", "61170")
    const dotted = await addSms("unmatched", "이.서연", "62840")
    const stranger = await addSms("unmatched", "오태양", "61170")
    const review = await addSms("manual_review", "한결희", "63510")
    const held = await addSms("need_check")

    const items: Array<any> = (await list({ page_size: 100 })).body.data.items
    const item = (id: number) => items.find((i) => i.id === id)
    assert.deepStrictEqual(item(code).suggestions, [{
      deposit_id: prefixed.deposit, player_id: prefixed.player, player_name: "박석호", from_bank_owner: "박석호", amount: "61170",
      reasons: ["name_prefix"], score: 0.85
    }])
    // The same deposit is also a candidate (any pending deposit of the amount): the console marks it.
    assert.include(item(code).candidates.map((c: any) => c.deposit_id), prefixed.deposit)
    assert.deepStrictEqual(item(dotted).suggestions.map((s: any) => [s.deposit_id, s.amount, s.reasons]), [
      [separated.deposit, "62340", ["name_separators", "amount_differs"]]
    ])
    assert.deepStrictEqual(item(dotted).candidates, [])
    assert.deepStrictEqual(item(stranger).suggestions, [])
    // manual_review: the two of the name are candidates (exact: never a suggestion); a longer name the bank may have cut is one.
    assert.sameMembers(item(review).candidates.map((c: any) => c.deposit_id), twins.map((t) => t.deposit))
    assert.deepStrictEqual(item(review).suggestions.map((s: any) => [s.deposit_id, s.player_name, s.reasons, s.score]), [
      [other.deposit, "한결희망", ["name_truncated"], 0.76]
    ])
    assert.deepStrictEqual(item(held).suggestions, [])
    // What sms/get says, with the player's name beside it.
    const detail = (await request(admin.url, "/api/sms/get", { token, body: { id: code } })).body.data
    assert.deepStrictEqual(detail.match.suggestions.map((s: any) => s.deposit_id), [prefixed.deposit])

    // A suggestion of the SMS's amount is approved as any candidate is, by a person; one of another amount is refused.
    const differs = await resolve({ sms_id: dotted, action: "approve", deposit_id: separated.deposit })
    assert.strictEqual(differs.http, 409, JSON.stringify(differs.body))
    const approved = await resolve({ sms_id: review, action: "approve", deposit_id: other.deposit })
    assert.deepInclude(approved.body.data, { status: "approving", deposit_id: other.deposit })
  })

  it("needs the operator's session before anything else, and JSON", async () => {
    const none = await request(admin.url, "/api/review/list", { body: {} })
    assert.deepStrictEqual([none.http, none.body.msg], [401, "unauthorized"])
    const wrongTypeNoToken = await request(admin.url, "/api/review/resolve", { body: "x", headers: { "content-type": "text/plain" } })
    assert.strictEqual(wrongTypeNoToken.http, 401)
    const wrongType = await request(admin.url, "/api/review/list", { token, body: "{}", headers: { "content-type": "text/plain" } })
    assert.strictEqual(wrongType.http, 415)
    assert.strictEqual((await request(admin.url, "/api/review/list", { token: "nope", body: {} })).http, 401)
  })
})

describe("review resolve", () => {
  it("approves a candidate as the signed-in operator, and rejects", async () => {
    const a = await addDeposit("송민호", "송민호", "150000", 6)
    const b = await addDeposit("송민호", "송민호", "150000", 6)
    const review = await addSms("manual_review", "송민호", "150000")
    const approved = await resolve({ sms_id: review, action: "approve", deposit_id: a.deposit })
    assert.strictEqual(approved.http, 200, JSON.stringify(approved.body))
    assert.deepInclude(approved.body.data, { id: review, status: "approving", deposit_id: a.deposit })
    assert.deepStrictEqual(await decisions(review), [["ada", "approve", a.deposit, "approving"]])
    const flags = await sql(db, (sql) => sql<{ task_status: number | null }>`SELECT task_status FROM recon.deposit
      WHERE ${sql.in("id", [a.deposit, b.deposit])} ORDER BY id`)
    assert.deepStrictEqual(flags.map((f) => f.task_status), [null, null])

    const unmatched = await addSms("unmatched", "누구", "3000")
    assert.strictEqual((await resolve({ sms_id: unmatched, action: "reject" })).body.data.status, "rejected")
    assert.deepStrictEqual(await decisions(unmatched), [["ada", "reject", null, "rejected"]])
  })

  it("passes and rejects a need_check SMS through recon's check", async () => {
    const pass = await addSms("need_check")
    const reject = await addSms("need_check")
    assert.strictEqual((await resolve({ sms_id: pass, action: "pass" })).body.data.status, "received")
    assert.strictEqual((await resolve({ sms_id: reject, action: "reject" })).body.data.status, "rejected")
    assert.deepStrictEqual(await decisions(pass), [["ada", "pass", null, "received"]])
    assert.deepStrictEqual(await decisions(reject), [["ada", "reject", null, "rejected"]])
  })

  it("answers recon's refusals as recon gave them, and the wrong action for the status as 409", async () => {
    const held = await addSms("need_check")
    const review = await addSms("manual_review", "임시완", "5000")
    const other = await addDeposit("임시완", "임시완", "5001")
    const expect = async (body: unknown, status: number, detail: RegExp) => {
      const answer = await resolve(body)
      assert.strictEqual(answer.http, status, JSON.stringify(answer.body))
      assert.match(answer.body.data.detail, detail)
    }
    await expect({ sms_id: held, action: "approve", deposit_id: other.deposit }, 409, /need_check: pass or reject it/)
    await expect({ sms_id: review, action: "pass" }, 409, /manual_review: approve or reject it/)
    await expect({ sms_id: review, action: "approve", deposit_id: other.deposit }, 409, /is for 5001\.00, the SMS for 5000\.00/)
    await expect({ sms_id: review, action: "approve" }, 400, /deposit_id/)
    await expect({ sms_id: held, action: "pass", deposit_id: other.deposit }, 400, /pass takes no deposit_id/)
    await expect({ sms_id: review, action: "approve", deposit_id: 999_999 }, 404, /deposit 999999 not found/)
    await expect({ sms_id: 999_999, action: "reject" }, 404, /sms 999999 not found/)
    assert.strictEqual((await resolve({ sms_id: review, action: "maybe" })).http, 400)
    const state = await sql(db, (sql) => sql<{ status: string }>`SELECT status FROM recon.shooter_sms WHERE ${sql.in("id", [held, review])} ORDER BY id`)
    assert.deepStrictEqual(state.map((s) => s.status), ["need_check", "manual_review"])
  })

  it("is a 502 while recon is unreachable", async () => {
    const away = await startAdmin(db, adminEnv("http://127.0.0.1:9"))
    try {
      const operator = await login(away.url, "ada")
      const answer = await request(away.url, "/api/review/resolve", { token: operator, body: { sms_id: 1, action: "reject" } })
      assert.deepStrictEqual([answer.http, answer.body.msg, answer.body.data.detail], [502, "bad_gateway", "recon_service is unreachable"])
    } finally {
      await away.close()
    }
  })
})

describe("activity over the websocket", () => {
  it("a plain client gets top-info only (no activity client is open)", async () => {
    const socket = await openSocket(admin.url, token)
    try {
      assert.strictEqual((await socket.next()).type, "top-info")
      await addSms("unmatched", "아무개", "1")
      assert.strictEqual((await resolve({ sms_id: await addSms("need_check"), action: "reject" })).http, 200)
      const message = await socket.next()
      assert.strictEqual(message.type, "top-info")
      // Past the poll's 2 s: still no activity (the 10-s top-info tick may come; it is not activity).
      const later: Array<string> = []
      for (;;) {
        const next = await socket.next(2_500).catch(() => undefined)
        if (next === undefined) break
        later.push(next.type)
      }
      assert.notInclude(later, "activity")
    } finally {
      socket.close()
    }
  })

  it("a client that asks gets the queue and the latest SMS, and sees a decision and the worker's change at once", async () => {
    const socket = await openSocket(admin.url, token, "&with=activity")
    try {
      const first = await nextOf(socket, "activity")
      assert.isArray(first.data.latest)
      assert.deepStrictEqual(Object.keys(first.data).sort(), ["counts", "latest", "marks"])
      assert.deepStrictEqual(Object.keys(first.data.counts).sort(), ["ignored", "manual_review", "need_check", "parse_failed", "unmatched"])
      const { deposit } = await addDeposit("배수지", "배수지", "61000")
      const review = await addSms("unmatched", "배수지", "61000")
      // Nothing told admin: the poll finds it (the new SMS among the latest, and the deposit among the marks).
      const seen = await nextOf(socket, "activity", (m) => m.data.latest.some((s: any) => s.id === review))
      assert.strictEqual(seen.data.latest[0].id, review)
      assert.notProperty(seen.data.latest[0], "waiting_s")
      assert.notStrictEqual(seen.data.marks.deposits, first.data.marks.deposits)
      assert.strictEqual((await resolve({ sms_id: review, action: "approve", deposit_id: deposit })).http, 200)
      const after = await nextOf(socket, "activity", (m) => m.data.latest.find((s: any) => s.id === review)?.status === "approving")
      assert.strictEqual(after.data.counts.unmatched, seen.data.counts.unmatched - 1)
      // The worker and the wallet finish it: the console sees approved, and the counters follow.
      await sql(db, (sql) => Effect.all([
        sql`UPDATE recon.deposit SET status = 'approved', sms_id = ${review}, approved_at = now() WHERE id = ${deposit}`,
        sql`UPDATE recon.shooter_sms SET status = 'approved' WHERE id = ${review}`
      ]))
      const done = await nextOf(socket, "activity", (m) => m.data.latest.find((s: any) => s.id === review)?.status === "approved")
      assert.strictEqual(done.type, "activity")
      await nextOf(socket, "top-info")
    } finally {
      socket.close()
    }
  })

})
