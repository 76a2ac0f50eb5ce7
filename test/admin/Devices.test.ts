// The phones, the senders and the templates from the console: push registrations, devices and the
// whitelist passed on to recon with the admin token as the operator asked (recon's refusals as it
// gave them), and a template learnt from an SMS a person read (drafted, tried on the sender's
// other unread SMS, added through recon, those SMS read again), through HTTP on a real database.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Running, recon as reconCall } from "../support/recon.ts"
import { adminEnv, consoleBed, login, request, sql, startAdmin } from "./support.ts"

let db: string
let recon: Running
let admin: Running
let token: string

let close: () => Promise<void>

beforeAll(async () => {
  ({ admin, close, db, recon, token } = await consoleBed("admin_devices"))
})
afterAll(async () => {
  await close()
})

const call = (path: string, body: unknown) => request(admin.url, path, { token, body })
const ok = async (path: string, body: unknown) => {
  const answer = await call(path, body)
  assert.strictEqual(answer.http, 200, `${path} ${JSON.stringify(answer.body)}`)
  assert.match(answer.headers.get("authorization") ?? "", /^Bearer /)
  return answer.body.data
}

describe("push registrations, devices and the whitelist", () => {
  it("adds a registration (its webhook, the silence window), lists it; the device it made is trusted, untrusted, deleted", async () => {
    const added = await ok("/api/pushsvc/add_device", { device_id: "desk-1", name: "front desk", format: "smsforwarder", secret: "a-long-secret", silence_alert_s: 900 })
    assert.deepInclude(added, { device_id: "desk-1", name: "front desk", silence_alert_s: 900, enabled: true })
    assert.match(added.webhook_url, /\/push\/desk-1$/)
    assert.notInclude(JSON.stringify(added), "a-long-secret")
    const registrations = await ok("/api/pushsvc/list", { device_id: "desk-1" })
    assert.deepStrictEqual(registrations.items.map((r: any) => [r.device_id, r.silence_alert_s]), [["desk-1", 900]])
    const again = await call("/api/pushsvc/add_device", { device_id: "desk-1", format: "smsforwarder" })
    assert.deepStrictEqual([again.http, again.body.data.detail], [409, "device desk-1 already has a registration"])

    const devices = await ok("/api/device/list", {})
    const device = devices.items.find((d: any) => d.device_id === "desk-1")
    assert.isFalse(device.trusted)
    assert.isTrue((await ok("/api/device/trust", { id: device.id })).trusted)
    assert.isFalse((await ok("/api/device/trust", { id: device.id, trusted: false })).trusted)
    assert.deepStrictEqual((await ok("/api/device/list", { trusted: true })).items.filter((d: any) => d.device_id === "desk-1"), [])
    assert.deepStrictEqual(await ok("/api/pushsvc/delete", { id: added.id }), { id: added.id })
    assert.deepStrictEqual(await ok("/api/device/delete", { id: device.id }), { id: device.id })
    assert.strictEqual((await call("/api/device/delete", { id: device.id })).http, 404)
    assert.strictEqual((await call("/api/pushsvc/delete", { id: added.id })).http, 404)
  })

  it("whitelists a sender (normalised), lists and removes it; a duplicate is recon's 409", async () => {
    const phone = await ok("/api/phone/add", { phone: "1588-2100", bank: "NH농협", note: "deposits" })
    assert.deepInclude(phone, { phone: "15882100", bank: "NH농협", note: "deposits" })
    const duplicate = await call("/api/phone/add", { phone: "15882100" })
    assert.deepStrictEqual([duplicate.http, duplicate.body.data.detail], [409, "phone 15882100 is already whitelisted"])
    assert.strictEqual((await call("/api/phone/add", { phone: "call me" })).http, 400)
    assert.deepStrictEqual((await ok("/api/phone/list", { keyword: "농협" })).items.map((p: any) => p.phone), ["15882100"])
    await ok("/api/phone/delete", { id: phone.id })
    assert.strictEqual((await ok("/api/phone/list", {})).total, 0)
  })

  it("checks the input at admin (400) and the session first (401); recon away is 502", async () => {
    for (const [path, body] of [
      ["/api/pushsvc/add_device", { device_id: "bad id!", format: "smsforwarder" }],
      ["/api/pushsvc/add_device", { device_id: "ok", format: "telegram" }],
      ["/api/pushsvc/add_device", { device_id: "ok", format: "smsforwarder", silence_alert_s: 0 }],
      ["/api/device/trust", { id: "1" }],
      ["/api/phone/list", { page_size: 0 }],
      ["/api/phone/delete", {}]
    ] as const) {
      assert.strictEqual((await call(path, body)).http, 400, `${path} ${JSON.stringify(body)}`)
    }
    for (const path of ["/api/pushsvc/list", "/api/device/list", "/api/phone/list", "/api/phone/add"]) {
      assert.strictEqual((await request(admin.url, path, { body: {} })).http, 401, path)
    }
    const away = await startAdmin(db, adminEnv("http://127.0.0.1:9"))
    try {
      const answer = await request(away.url, "/api/device/list", { token: await login(away.url, "ada"), body: {} })
      assert.deepStrictEqual([answer.http, answer.body.data.detail], [502, "recon_service is unreachable"])
    } finally {
      await away.close()
    }
  })
})

let seq = 0
const failed = (body: string, sender = "15666000", status = "parse_failed") =>
  sql(db, (sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms (device_id, sender, sender_normalized, body, normalized_body, received_at, status)
    VALUES ('dev-t', ${sender}, ${sender}, ${body}, ${`t${++seq}`}, now(), ${status}) RETURNING id`, (rows) => Number(rows[0]!.id)))
const statusOf = (id: number) => sql(db, (sql) => Effect.map(sql<{ status: string }>`SELECT status FROM recon.shooter_sms WHERE id = ${id}`, (rows) => rows[0]!.status))

const layout = (name: string, amount: string, balance: string, at = "11/25 21:53") =>
  `[Web발신]\n신협 ${at}\n이체입금 / 의뢰인 ${name}\n금액(${amount})\n잔고 ${balance}`

describe("a template learnt from a person's reading", () => {
  it("drafts a rule from the message, tries it on the sender's other unread SMS, adds it through recon, reads them again", async () => {
    await ok("/api/phone/add", { phone: "1566-6000", bank: "신협" })
    const read = await failed(layout("한시우", "30,000", "633,683"))
    const same1 = await failed(layout("김영희", "1,250,000", "1,883,683", "11/26 09:01"))
    const same2 = await failed(layout("Lee Min", "7,000", "1,890,683", "12/01 18:40"))
    const otherLayout = await failed("[Web발신]\n[신협] 11/25 21:53\n이체입금\n의뢰인:박서준\n금액:50,000\n잔고:1,234,567")
    const otherSender = await failed(layout("오태양", "9,000", "10,000"), "15999999")

    const draft = await ok("/api/template/draft", { sms_id: read, payer_name: "한시우", amount: "30000" })
    assert.deepInclude(draft, { sms_id: read, bank: "신협", sender: "15666000", tried: 3, reads: 2 })
    assert.include(draft.rule, "(?P<name>")
    assert.include(draft.rule, "(?P<amount>")
    assert.notInclude(draft.rule, "한시우")
    assert.notInclude(draft.rule, "633")
    assert.deepStrictEqual(draft.examples.map((e: any) => [e.sms_id, e.payer_name, e.amount]).sort(), [
      [same1, "김영희", "1250000"],
      [same2, "Lee Min", "7000"]
    ].sort())

    const added = await ok("/api/template/add", { sms_id: read, bank: draft.bank, rule: draft.rule, reread: true })
    assert.deepInclude(added.template, { bank: "신협", sender: "15666000", rule_source: "manual", rule: draft.rule })
    assert.deepStrictEqual([...added.reread].sort(), [same1, same2].sort())
    assert.deepStrictEqual([await statusOf(same1), await statusOf(same2), await statusOf(otherLayout), await statusOf(otherSender)],
      ["received", "received", "parse_failed", "parse_failed"])
    const listed = await reconCall(recon.url)("/shooter/template/recharge/list", { bank: "신협" })
    assert.deepStrictEqual(listed.body.data.items.filter((t: any) => t.rule_source === "manual").map((t: any) => t.id), [added.template.id])
    // The same rule again: recon's 409.
    assert.strictEqual((await call("/api/template/add", { sms_id: read, bank: "신협", rule: draft.rule })).http, 409)
  })

  it("says why no template can be made: the name or amount not in the text, a withdrawal, a rule recon refuses", async () => {
    const sms = await failed(layout("배수빈", "40,000", "1,000,000"))
    const refused = async (body: unknown, detail: RegExp, status = 422) => {
      const answer = await call("/api/template/draft", body)
      assert.strictEqual(answer.http, status, JSON.stringify(answer.body))
      assert.match(answer.body.data.detail, detail)
    }
    await refused({ sms_id: sms, payer_name: "배수지", amount: "40000" }, /payer name "배수지" is not written in the message/)
    await refused({ sms_id: sms, payer_name: "배수빈", amount: "41000" }, /the amount 41000 is not written in the message/)
    const withdrawal = await failed("[Web발신]\n[KB]11/25 21:53\n834702**717\n쿠팡\n출금\n8,110\n잔액1,234,567", "16449999", "ignored")
    await refused({ sms_id: withdrawal, payer_name: "쿠팡", amount: "8110" }, /the sample is not a deposit/)
    await refused({ sms_id: 999_999, payer_name: "x", amount: "1" }, /sms 999999 not found/, 404)
    const bad = await call("/api/template/add", { sms_id: sms, bank: "신협", rule: "(?P<name>[" })
    assert.deepStrictEqual([bad.http, bad.body.msg], [422, "unprocessable"])
    assert.match(bad.body.data.detail, /does not compile/)
  })
})

describe("recon's reset with if_status", () => {
  it("resets only from the status the caller chose the SMS by", async () => {
    const id = await failed("anything")
    await sql(db, (sql) => sql`UPDATE recon.shooter_sms SET status = 'unmatched' WHERE id = ${id}`)
    const refused = await reconCall(recon.url)("/shooter/sms/reset", { id, if_status: "parse_failed" })
    assert.deepStrictEqual([refused.http, refused.body.data.detail], [409, `sms ${id} is unmatched, not parse_failed`])
    assert.strictEqual(await statusOf(id), "unmatched")
    assert.strictEqual((await reconCall(recon.url)("/shooter/sms/reset", { id })).body.data.status, "received")
  })
})
