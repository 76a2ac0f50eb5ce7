// Every recon_service route through HTTP on a real database: success paths and each error path.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { recon, type Running, startRecon } from "../support/recon.ts"

let db: string
let server: Running
let call: ReturnType<typeof recon>

beforeAll(async () => {
  db = await createMigratedDatabase("routes")
  server = await startRecon(db)
  call = recon(server.url)
})
afterAll(() => server.close())

const insertSms = (values: { device_id?: string; sender?: string; body: string; status: string; received_at?: string }) =>
  runSql(db, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: bigint }>`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
      VALUES (${values.device_id ?? "dev-a"}, ${values.sender ?? "15889999"}, ${values.body}, ${values.body.replace(/\s/g, "")},
              ${new Date(values.received_at ?? Date.now())}, ${values.status}) RETURNING id`
    return Number(rows[0]!.id)
  }))

const assertError = (answer: { http: number; body: any }, status: number, msg: string) => {
  assert.strictEqual(answer.http, status, JSON.stringify(answer.body))
  assert.strictEqual(answer.body.status, status)
  assert.strictEqual(answer.body.msg, msg)
}

describe("pushsvc", () => {
  it("adds a device, lists it with its webhook_url and never the secret, refuses a second registration", async () => {
    const added = await call("/pushsvc/add_device", { device_id: "phone-A.1", name: "front desk", format: "sms-gateway", secret: "s3cret", api_url: "http://10.0.0.5:8080", silence_alert_s: 600 })
    assert.strictEqual(added.http, 200)
    assert.deepInclude(added.body, { status: 200, msg: "success" })
    assert.strictEqual(added.body.data.device_id, "phone-A.1")
    assert.strictEqual(added.body.data.webhook_url, "http://127.0.0.1:8019/push/phone-A.1")
    assert.notProperty(added.body.data, "secret")
    assert.match(added.body.data.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/)
    assertError(await call("/pushsvc/add_device", { device_id: "phone-A.1", format: "smsforwarder" }), 409, "conflict")

    const listed = await call("/pushsvc/list", { device_id: "phone-A.1" })
    assert.strictEqual(listed.body.data.total, 1)
    assert.deepStrictEqual(Object.keys(listed.body.data.items[0]).sort(), [
      "api_url", "created_at", "device_id", "enabled", "format", "id", "last_event_at", "listener_status", "name", "silence_alert_s", "webhook_url"
    ])
    assert.strictEqual(listed.body.data.items[0].silence_alert_s, 600)
    assert.notInclude(JSON.stringify(listed.body), "s3cret")
    const devices = await call("/shooter/device/list", {})
    assert.isTrue(devices.body.data.items.some((d: any) => d.device_id === "phone-A.1" && d.trusted === false))
  })

  it("shows an api_url without the gateway's user:password, and keeps them for the export loop", async () => {
    const apiUrl = "https://gw-user:gw-pass%40word@api.sms-gate.app/3rdparty/v1"
    const added = await call("/pushsvc/add_device", { device_id: "gw-creds", format: "sms-gateway", api_url: apiUrl })
    assert.strictEqual(added.body.data.api_url, "https://api.sms-gate.app/3rdparty/v1")
    const listed = await call("/pushsvc/list", { device_id: "gw-creds" })
    assert.strictEqual(listed.body.data.items[0].api_url, "https://api.sms-gate.app/3rdparty/v1")
    assert.notInclude(JSON.stringify(listed.body), "gw-pass")
    assert.notInclude(JSON.stringify(listed.body), "gw-user")
    const stored = await runSql(db, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ api_url: string }>`SELECT api_url FROM recon.shooter_push WHERE device_id = 'gw-creds'`
    }))
    assert.strictEqual(stored[0]!.api_url, apiUrl)
  })

  it("validates device ids and formats", async () => {
    assertError(await call("/pushsvc/add_device", { device_id: "bad id!", format: "smsforwarder" }), 400, "bad_request")
    assertError(await call("/pushsvc/add_device", { device_id: "x".repeat(65), format: "smsforwarder" }), 400, "bad_request")
    const wrongFormat = await call("/pushsvc/add_device", { device_id: "ok", format: "telegram" })
    assertError(wrongFormat, 400, "bad_request")
    assert.isTrue(wrongFormat.body.data.issues.some((i: any) => i.path[0] === "format"))
  })

  it("deletes a registration, 404 for an unknown one", async () => {
    const added = await call("/pushsvc/add_device", { device_id: "to-delete", format: "smsforwarder" })
    const deleted = await call("/pushsvc/delete", { id: added.body.data.id })
    assert.deepStrictEqual(deleted.body, { status: 200, msg: "success", data: { id: added.body.data.id } })
    assertError(await call("/pushsvc/delete", { id: added.body.data.id }), 404, "not_found")
  })

  it("pages newest first and filters by enabled", async () => {
    for (const n of [1, 2, 3]) await call("/pushsvc/add_device", { device_id: `page-${n}`, format: "smsforwarder" })
    const first = await call("/pushsvc/list", { page: 1, page_size: 2 })
    assert.strictEqual(first.body.data.page_size, 2)
    assert.strictEqual(first.body.data.items.length, 2)
    assert.strictEqual(first.body.data.items[0].device_id, "page-3")
    const total = first.body.data.total
    const last = await call("/pushsvc/list", { page: Math.ceil(total / 2), page_size: 2 })
    assert.isAtLeast(last.body.data.items.length, 1)
    assert.strictEqual((await call("/pushsvc/list", { enabled: false })).body.data.total, 0)
    assertError(await call("/pushsvc/list", { page_size: 201 }), 400, "bad_request")
    assertError(await call("/pushsvc/list", { page: 0 }), 400, "bad_request")
  })
})

describe("templates", () => {
  const sample = "[Web발신]\n[KB]11/02 14:05\n123456**789\n홍길동\n입금\n50,000\n잔액1,234,567"
  const rule = "(?P<name>\\S+)\\n입금\\n(?P<amount>[0-9,]+)"

  it("adds a manual rule that extracts name and amount from its sample; 409 on the same rule again", async () => {
    const added = await call("/shooter/template/recharge/add", { bank: "KB국민", sample, sender: "16449999", rule })
    assert.strictEqual(added.http, 200, JSON.stringify(added.body))
    assert.deepInclude(added.body.data, { bank: "KB국민", sender: "16449999", rule, rule_source: "manual" })
    assertError(await call("/shooter/template/recharge/add", { bank: "KB국민", sample, rule }), 409, "conflict")
    const listed = await call("/shooter/template/recharge/list", { bank: "KB국민", page_size: 200 })
    const operators = listed.body.data.items.filter((t: { rule_source: string }) => t.rule_source !== "builtin")
    assert.deepStrictEqual(operators.map((t: { id: number }) => t.id), [added.body.data.id])
    const deleted = await call("/shooter/template/recharge/delete", { id: added.body.data.id })
    assert.strictEqual(deleted.http, 200)
    assertError(await call("/shooter/template/recharge/delete", { id: added.body.data.id }), 404, "not_found")
  })

  it("422 for a rule that does not compile, lacks a group or misses its sample; 422 without a rule when AI is off", async () => {
    assertError(await call("/shooter/template/recharge/add", { bank: "KB", sample, rule: "(?P<name>\\S+)(\\1)" }), 422, "unprocessable")
    assertError(await call("/shooter/template/recharge/add", { bank: "KB", sample, rule: "(?P<name>\\S+)" }), 422, "unprocessable")
    assertError(await call("/shooter/template/recharge/add", { bank: "KB", sample: "nothing here", rule }), 422, "unprocessable")
    const noRule = await call("/shooter/template/recharge/add", { bank: "KB", sample })
    assertError(noRule, 422, "unprocessable")
    assert.match(noRule.body.data.detail, /rule is required/)
    assert.strictEqual((await call("/shooter/template/recharge/list", { bank: "KB" })).body.data.total, 0)
  })
})

describe("phones", () => {
  it("normalises to digits, refuses duplicates in any spelling, filters by keyword, deletes", async () => {
    const added = await call("/shooter/phone/add", { phone: "+82 10-9876-5432", bank: "신한", note: "main account" })
    assert.strictEqual(added.body.data.phone, "01098765432")
    assertError(await call("/shooter/phone/add", { phone: "010 9876 5432" }), 409, "conflict")
    assertError(await call("/shooter/phone/add", { phone: "no digits" }), 400, "bad_request")
    assert.strictEqual((await call("/shooter/phone/list", { keyword: "9876" })).body.data.total, 1)
    assert.strictEqual((await call("/shooter/phone/list", { keyword: "신한" })).body.data.total, 1)
    assert.strictEqual((await call("/shooter/phone/list", { keyword: "%" })).body.data.total, 0)
    assert.strictEqual((await call("/shooter/phone/delete", { id: added.body.data.id })).http, 200)
    assertError(await call("/shooter/phone/delete", { id: added.body.data.id }), 404, "not_found")
  })
})

describe("sms", () => {
  it("lists with filters, gets with parse and match detail, 404 for unknown ids", async () => {
    const a = await insertSms({ device_id: "sms-dev", sender: "15889999", body: "입금 10,000원 김철수", status: "parsed", received_at: "2026-11-01T00:00:00Z" })
    await insertSms({ device_id: "sms-dev", sender: "16449999", body: "출금 5,000원", status: "ignored", received_at: "2026-11-02T00:00:00Z" })
    const bySender = await call("/shooter/sms/list", { sender: "15889999", device_id: "sms-dev" })
    assert.strictEqual(bySender.body.data.total, 1)
    assert.deepStrictEqual(Object.keys(bySender.body.data.items[0]).sort(), [
      "amount", "bank", "body", "created_at", "deposit_id", "device_id", "id", "payer_name", "received_at", "sender", "status"
    ])
    assert.strictEqual((await call("/shooter/sms/list", { status: "ignored", device_id: "sms-dev" })).body.data.total, 1)
    assert.strictEqual((await call("/shooter/sms/list", { keyword: "김철수" })).body.data.total, 1)
    assert.strictEqual((await call("/shooter/sms/list", { device_id: "sms-dev", since: "2026-11-01T12:00:00Z" })).body.data.total, 1)
    assert.strictEqual((await call("/shooter/sms/list", { device_id: "sms-dev", until: "2026-11-01T12:00:00Z" })).body.data.total, 1)
    assertError(await call("/shooter/sms/list", { status: "lost" }), 400, "bad_request")
    assertError(await call("/shooter/sms/list", { since: "yesterday" }), 400, "bad_request")
    const got = await call("/shooter/sms/get", { id: a })
    assert.strictEqual(got.body.data.id, a)
    assert.property(got.body.data, "parse")
    assert.property(got.body.data, "match")
    assertError(await call("/shooter/sms/get", { id: 999_999 }), 404, "not_found")
  })

  it("reset: back to received, refused while approving or approved", async () => {
    const failed = await insertSms({ body: "unreadable", status: "parse_failed" })
    const reset = await call("/shooter/sms/reset", { id: failed })
    assert.strictEqual(reset.body.data.status, "received")
    for (const status of ["approving", "approved"]) {
      const id = await insertSms({ body: `money ${status}`, status })
      assertError(await call("/shooter/sms/reset", { id }), 409, "conflict")
      assert.strictEqual((await call("/shooter/sms/get", { id })).body.data.status, status)
    }
    assertError(await call("/shooter/sms/reset", { id: 999_999 }), 404, "not_found")
  })

  it("check: pass sends a need_check SMS on to parsing, reject ends it, any other status is 409", async () => {
    const pass = await insertSms({ body: "held 1", status: "need_check" })
    const reject = await insertSms({ body: "held 2", status: "need_check" })
    assert.strictEqual((await call("/shooter/sms/check", { id: pass, result: "pass" })).body.data.status, "received")
    assert.strictEqual((await call("/shooter/sms/check", { id: reject, result: "reject" })).body.data.status, "rejected")
    assertError(await call("/shooter/sms/check", { id: pass, result: "pass" }), 409, "conflict")
    assertError(await call("/shooter/sms/check", { id: pass, result: "maybe" }), 400, "bad_request")
    assertError(await call("/shooter/sms/check", { id: 999_999, result: "pass" }), 404, "not_found")
  })
})

describe("devices", () => {
  it("trust, untrust, filter, delete with its registrations but not its SMS", async () => {
    const reg = await call("/pushsvc/add_device", { device_id: "dev-trust", format: "smsforwarder" })
    const sms = await insertSms({ device_id: "dev-trust", body: "kept", status: "parsed" })
    const device = (await call("/shooter/device/list", { trusted: false })).body.data.items.find((d: any) => d.device_id === "dev-trust")
    assert.deepInclude(device, { trusted: false, sms_count: 0, last_seen_at: null })
    assert.strictEqual((await call("/shooter/device/trust", { id: device.id })).body.data.trusted, true)
    assert.isTrue((await call("/shooter/device/list", { trusted: true })).body.data.items.some((d: any) => d.id === device.id))
    assert.strictEqual((await call("/shooter/device/trust", { id: device.id, trusted: false })).body.data.trusted, false)
    assertError(await call("/shooter/device/trust", { id: 999_999 }), 404, "not_found")
    assert.strictEqual((await call("/shooter/device/delete", { id: device.id })).http, 200)
    assertError(await call("/pushsvc/delete", { id: reg.body.data.id }), 404, "not_found")
    assert.strictEqual((await call("/shooter/sms/get", { id: sms })).body.data.body, "kept")
    assertError(await call("/shooter/device/delete", { id: device.id }), 404, "not_found")
  })
})

describe("top-info", () => {
  it("counts the four statuses", async () => {
    const before = (await call("/stats/top-info", {})).body.data
    const held = await insertSms({ body: "c1", status: "need_check" })
    const failed = await insertSms({ body: "c2", status: "parse_failed" })
    await insertSms({ body: "c3", status: "unmatched" })
    const dup = await insertSms({ body: "c4", status: "duplicate" })
    await insertSms({ body: "c5", status: "duplicate" })
    const after = (await call("/stats/top-info", {})).body.data
    assert.deepStrictEqual(after, {
      sms_need_check_cnt: before.sms_need_check_cnt + 1,
      parse_fail_cnt: before.parse_fail_cnt + 1,
      unmatched_sms_cnt: before.unmatched_sms_cnt + 1,
      duplicate_sms_cnt: before.duplicate_sms_cnt + 2
    })
    // Moving out of a counted status and deleting count too.
    await call("/shooter/sms/check", { id: held, result: "pass" })
    await runSql(db, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE recon.shooter_sms SET status = 'parsed' WHERE id = ${dup}`
      yield* sql`UPDATE recon.shooter_sms SET body = 'same status' WHERE status = 'unmatched'`
      yield* sql`DELETE FROM recon.shooter_sms WHERE id = ${failed}`
    }))
    assert.deepStrictEqual((await call("/stats/top-info", {})).body.data, {
      sms_need_check_cnt: before.sms_need_check_cnt,
      parse_fail_cnt: before.parse_fail_cnt,
      unmatched_sms_cnt: before.unmatched_sms_cnt + 1,
      duplicate_sms_cnt: before.duplicate_sms_cnt + 1
    })
    assertError(await call("/stats/top-info", { extra: 1 }), 400, "bad_request")
  })
})

describe("envelope and transport", () => {
  it("malformed JSON 400, wrong media type 415, over 64 KiB 413 (declared or streamed), unknown route 404", async () => {
    assertError(await call("/pushsvc/list", undefined, { raw: "{not json" }), 400, "bad_request")
    assertError(await call("/pushsvc/list", {}, { contentType: "text/plain" }), 415, "unsupported_media_type")
    assertError(await call("/pushsvc/list", { keyword: "x".repeat(70_000) }), 413, "payload_too_large")
    const streamed = await fetch(`${server.url}/internal/recon/shooter/sms/list`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-internal-service-token": "test-admin-token-0123456789" },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`{"keyword":"${"y".repeat(70_000)}"}`))
          controller.close()
        }
      }),
      duplex: "half"
    } as RequestInit)
    assert.strictEqual(streamed.status, 413)
    assertError(await call("/nothing/here", {}), 404, "not_found")
    const getList = await fetch(`${server.url}/internal/recon/pushsvc/list`)
    assert.strictEqual(getList.status, 404)
  })

  it("serves the OpenAPI document behind the token, and a public /health", async () => {
    const doc = await fetch(`${server.url}/internal/recon/openapi.json`, { headers: { "x-internal-service-token": "test-admin-token-0123456789" } })
    const json = await doc.json() as any
    assert.strictEqual(json.openapi, "3.1.0")
    assert.strictEqual(Object.keys(json.paths).length, 30)
    assert.property(json.paths, "/internal/recon/shooter/sms/resolve")
    assert.strictEqual((await fetch(`${server.url}/internal/recon/openapi.json`)).status, 401)
    const health = await fetch(`${server.url}/health`)
    assert.deepStrictEqual([health.status, await health.json()], [200, { status: "ok" }])
  })
})
