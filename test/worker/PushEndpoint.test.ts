// POST /push/{device_id} through HTTP on a real database: both forwarder formats with valid,
// invalid and stale signatures, replays, cross-device copies, the need_check rule, bad bodies.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { recon, type Running, startRecon } from "../support/recon.ts"
import { pushForwarder, pushGateway, register, smsRows, startPushServer } from "../support/worker.ts"

let db: string
let push: Running
let reconServer: Running

beforeAll(async () => {
  db = await createMigratedDatabase("push")
  push = await startPushServer(db)
  reconServer = await startRecon(db)
  await register(db, { deviceId: "fwd-1", format: "smsforwarder", secret: "fwd-secret" })
  await register(db, { deviceId: "fwd-open", format: "smsforwarder" })
  await register(db, { deviceId: "gw-1", format: "sms-gateway", secret: "gw-secret" })
  await register(db, { deviceId: "off-1", format: "smsforwarder", enabled: false })
  await register(db, { deviceId: "trusted-1", format: "smsforwarder", trusted: true })
  await runSql(db, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO recon.shooter_phone (phone) VALUES ('15889999')`
  }))
})
afterAll(async () => {
  await push.close()
  await reconServer.close()
})

let serial = 0
/** A deposit SMS nobody has sent yet (the balance differs), as a KB bank would send it. */
const freshSms = () => `[Web발신]\nKB국민 11/22 10:${String(serial % 60).padStart(2, "0")}\n123456**789\n홍길동\n입금 50,000\n잔액 ${1_000_000 + ++serial}`

const assertError = (answer: { http: number; body: any }, status: number, msg: string) => {
  assert.strictEqual(answer.http, status, JSON.stringify(answer.body))
  assert.deepInclude(answer.body, { status, msg })
}

const countFor = async (deviceId: string) => (await smsRows(db, [deviceId])).length

describe("SmsForwarder webhook", () => {
  it("stores a signed form post once committed, with the app's wrapper removed", async () => {
    const sms = freshSms()
    const answer = await pushForwarder(push.url, "fwd-1", { from: "1588-9999", sms, secret: "fwd-secret" })
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    assert.deepStrictEqual(answer.body, { status: 200, msg: "success", data: { sms_id: answer.body.data.sms_id, duplicate: false } })
    const row = (await smsRows(db, ["fwd-1"])).find((r) => r.id === answer.body.data.sms_id)!
    assert.strictEqual(row.body, sms)
    assert.strictEqual(row.sender, "1588-9999")
    // The device is not trusted: held for a check.
    assert.strictEqual(row.status, "need_check")
  })

  it("takes the JSON variant too", async () => {
    const answer = await pushForwarder(push.url, "fwd-1", { from: "15889999", sms: freshSms(), secret: "fwd-secret", json: true })
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    assert.isFalse(answer.body.data.duplicate)
  })

  it("refuses a wrong, missing or stale signature with 401 and stores nothing", async () => {
    const before = await countFor("fwd-1")
    assertError(await pushForwarder(push.url, "fwd-1", { from: "15889999", sms: freshSms(), signWith: "other" }), 401, "unauthorized")
    assertError(await pushForwarder(push.url, "fwd-1", { from: "15889999", sms: freshSms() }), 401, "unauthorized")
    const twoHoursAgo = Date.now() - 2 * 3600_000
    assertError(await pushForwarder(push.url, "fwd-1", { from: "15889999", sms: freshSms(), secret: "fwd-secret", timestamp: twoHoursAgo }), 401, "unauthorized")
    assert.strictEqual(await countFor("fwd-1"), before)
  })

  it("a registration without a secret takes unsigned posts", async () => {
    const answer = await pushForwarder(push.url, "fwd-open", { from: "15889999", sms: freshSms() })
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
  })

  it("a replay is stored as a duplicate of the first, and never twice as an original", async () => {
    const sms = freshSms()
    const timestamp = Date.now()
    const first = await pushForwarder(push.url, "fwd-1", { from: "15889999", sms, secret: "fwd-secret", timestamp })
    const again = await pushForwarder(push.url, "fwd-1", { from: "15889999", sms, secret: "fwd-secret", timestamp })
    assert.isFalse(first.body.data.duplicate)
    assert.isTrue(again.body.data.duplicate)
    const row = (await smsRows(db)).find((r) => r.id === again.body.data.sms_id)!
    assert.strictEqual(row.status, "duplicate")
    assert.strictEqual(row.duplicate_of, first.body.data.sms_id)
  })

  it("the same text more than 10 minutes apart is a new SMS", async () => {
    const sms = freshSms()
    const now = Date.now()
    const early = await pushForwarder(push.url, "fwd-1", { from: "15889999", sms, secret: "fwd-secret", timestamp: now - 11 * 60_000 })
    const late = await pushForwarder(push.url, "fwd-1", { from: "15889999", sms, secret: "fwd-secret", timestamp: now })
    assert.isFalse(early.body.data.duplicate)
    assert.isFalse(late.body.data.duplicate)
  })
})

describe("SMS Gateway webhook", () => {
  it("stores a signed sms:received and remembers the gateway's device id", async () => {
    const answer = await pushGateway(push.url, "gw-1", { messageId: "m-1", from: "+82 1588-9999", sms: freshSms(), secret: "gw-secret", remoteDeviceId: "GW-ABC" })
    assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    assert.isFalse(answer.body.data.duplicate)
    const [registration] = await runSql(db, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ remote_device_id: string }>`SELECT remote_device_id FROM recon.shooter_push WHERE device_id = 'gw-1'`
    }))
    assert.strictEqual(registration!.remote_device_id, "GW-ABC")
  })

  it("the same message id again is a duplicate, whatever its text", async () => {
    const first = await pushGateway(push.url, "gw-1", { messageId: "m-2", from: "15889999", sms: freshSms(), secret: "gw-secret" })
    const again = await pushGateway(push.url, "gw-1", { messageId: "m-2", from: "15889999", sms: freshSms(), secret: "gw-secret" })
    assert.isTrue(again.body.data.duplicate)
    const row = (await smsRows(db)).find((r) => r.id === again.body.data.sms_id)!
    assert.strictEqual(row.duplicate_of, first.body.data.sms_id)
  })

  it("refuses a wrong, missing or stale signature with 401", async () => {
    const before = await countFor("gw-1")
    assertError(await pushGateway(push.url, "gw-1", { messageId: "m-3", from: "15889999", sms: freshSms(), signWith: "nope" }), 401, "unauthorized")
    assertError(await pushGateway(push.url, "gw-1", { messageId: "m-4", from: "15889999", sms: freshSms() }), 401, "unauthorized")
    const stale = Math.floor(Date.now() / 1000) - 10 * 60
    assertError(await pushGateway(push.url, "gw-1", { messageId: "m-5", from: "15889999", sms: freshSms(), secret: "gw-secret", timestamp: stale }), 401, "unauthorized")
    assert.strictEqual(await countFor("gw-1"), before)
  })

  it("acknowledges other events with 200 and stores nothing", async () => {
    const before = await countFor("gw-1")
    const answer = await pushGateway(push.url, "gw-1", { messageId: "m-6", from: "15889999", sms: "x", secret: "gw-secret", event: "sms:delivered" })
    assert.strictEqual(answer.http, 200)
    assert.deepStrictEqual(answer.body.data, { ignored: true, event: "sms:delivered" })
    assert.strictEqual(await countFor("gw-1"), before)
  })
})

describe("duplicates across phones", () => {
  it("one SMS forwarded by several phones at once is stored once as original", async () => {
    await register(db, { deviceId: "fan-a", format: "smsforwarder" })
    await register(db, { deviceId: "fan-b", format: "smsforwarder" })
    await register(db, { deviceId: "fan-c", format: "sms-gateway" })
    const sms = freshSms()
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) =>
      i % 3 === 2
        ? pushGateway(push.url, "fan-c", { messageId: `fan-${i}`, from: "15889999", sms: `[Web발신]\n${sms.replace("[Web발신]\n", "")}` })
        : pushForwarder(push.url, i % 3 === 0 ? "fan-a" : "fan-b", { from: "15889999", sms })
    ))
    assert.isTrue(answers.every((a) => a.http === 200))
    const rows = await smsRows(db, ["fan-a", "fan-b", "fan-c"])
    const originals = rows.filter((r) => r.status !== "duplicate")
    assert.strictEqual(rows.length, 24)
    assert.strictEqual(originals.length, 1)
    assert.isTrue(rows.filter((r) => r.status === "duplicate").every((r) => r.duplicate_of === originals[0]!.id))
    assert.strictEqual(answers.filter((a) => !a.body.data.duplicate).length, 1)
  })
})

describe("the need_check rule", () => {
  it("holds an SMS unless the device is trusted and the sender whitelisted", async () => {
    const trustedWhitelisted = await pushForwarder(push.url, "trusted-1", { from: "1588-9999", sms: freshSms() })
    const trustedUnknownSender = await pushForwarder(push.url, "trusted-1", { from: "16447000", sms: freshSms() })
    const untrustedWhitelisted = await pushForwarder(push.url, "fwd-open", { from: "15889999", sms: freshSms() })
    const status = async (id: number) => (await smsRows(db)).find((r) => r.id === id)!.status
    assert.strictEqual(await status(trustedWhitelisted.body.data.sms_id), "received")
    assert.strictEqual(await status(trustedUnknownSender.body.data.sms_id), "need_check")
    assert.strictEqual(await status(untrustedWhitelisted.body.data.sms_id), "need_check")
  })
})

describe("requests refused before anything is stored", () => {
  it("unknown and disabled devices: 404", async () => {
    assertError(await pushForwarder(push.url, "nobody", { from: "15889999", sms: freshSms() }), 404, "not_found")
    assertError(await pushForwarder(push.url, "off-1", { from: "15889999", sms: freshSms() }), 404, "not_found")
    assert.strictEqual(await countFor("off-1"), 0)
  })

  it("a body over 64 KiB: 413, declared or chunked", async () => {
    const big = `from=1&content=${"a".repeat(70_000)}&timestamp=${Date.now()}`
    const declared = await fetch(`${push.url}/push/fwd-open`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: big })
    assert.strictEqual(declared.status, 413)
    assert.strictEqual(((await declared.json()) as any).msg, "payload_too_large")
    const chunked = await fetch(`${push.url}/push/fwd-open`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close() } }),
      duplex: "half"
    } as RequestInit)
    assert.strictEqual(chunked.status, 413)
  })

  it("malformed bodies: 400", async () => {
    const before = await countFor("fwd-open")
    const post = (body: string, contentType: string) =>
      fetch(`${push.url}/push/fwd-open`, { method: "POST", headers: { "content-type": contentType }, body }).then(async (r) => ({ http: r.status, body: (await r.json()) as any }))
    assertError(await post("{not json", "application/json"), 400, "bad_request")
    assertError(await post(JSON.stringify({ content: "no sender" }), "application/json"), 400, "bad_request")
    assertError(await post("content=x", "application/x-www-form-urlencoded"), 400, "bad_request")
    assertError(await post(JSON.stringify({ from: "1", content: "x", timestamp: "soon" }), "application/json"), 400, "bad_request")
    assert.strictEqual(await countFor("fwd-open"), before)
  })
})

describe("what a forwarder may send, and nothing else", () => {
  const raw = (body: string, headers: Record<string, string>) =>
    fetch(`${push.url}/push/fwd-open`, { method: "POST", headers, body }).then(async (r) => ({ http: r.status, body: (await r.json()) as any }))
  const form = (fields: Record<string, string>) => new URLSearchParams({ timestamp: String(Date.now()), ...fields }).toString()
  const FORM = { "content-type": "application/x-www-form-urlencoded" }

  it("a sender that is no sender (60,000 digits, markup, over 32 characters): 400, nothing stored", async () => {
    const before = await countFor("fwd-open")
    for (const from of ["1".repeat(60_000), "1".repeat(33), "<script>alert(1)</script>", "15889999;DROP"]) {
      assertError(await raw(form({ from, content: freshSms() }), FORM), 400, "bad_request")
      assertError(await pushGateway(push.url, "gw-1", { messageId: `bad-from-${from.length}`, from, sms: freshSms(), secret: "gw-secret" }), 400, "bad_request")
    }
    assert.strictEqual(await countFor("fwd-open"), before)
    // Every form the forwarders send is taken: numbers with their punctuation, alphanumeric ids.
    for (const from of ["1588-9999", "+82 10-1234-5678", "(02) 1234-5678", "KB국민", "Toss Bank"]) {
      assert.strictEqual((await pushForwarder(push.url, "fwd-open", { from, sms: freshSms() })).http, 200, from)
    }
  })

  it("an SMS without text (empty or white space only): 400, nothing stored", async () => {
    const before = await countFor("fwd-open")
    const bodies: ReadonlyArray<Record<string, string>> = [{ content: "" }, { content: "  \n " }, { org_content: "\t" }]
    for (const fields of bodies) {
      assertError(await raw(form({ from: "15889999", ...fields }), FORM), 400, "bad_request")
    }
    assertError(await raw(JSON.stringify({ from: "15889999", content: " ", timestamp: String(Date.now()) }), { "content-type": "application/json" }), 400, "bad_request")
    assert.strictEqual(await countFor("fwd-open"), before)
  })

  it("a missing or other Content-Type: 415, nothing stored; a form or JSON (any charset) is taken", async () => {
    const before = await countFor("fwd-open")
    const body = form({ from: "15889999", content: freshSms() })
    for (const headers of [{}, { "content-type": "" }, { "content-type": "text/plain" }, { "content-type": "garbage" }, { "content-type": "multipart/form-data; boundary=x" }]) {
      // fetch adds text/plain to a string body unless told otherwise: a Blob without a type sends none.
      const answer = await fetch(`${push.url}/push/fwd-open`, { method: "POST", headers, body: "content-type" in headers ? body : new Blob([body]) })
        .then(async (r) => ({ http: r.status, body: (await r.json()) as any }))
      assertError(answer, 415, "unsupported_media_type")
      assert.match(answer.body.data.detail, /expected application\/x-www-form-urlencoded or application\/json$/)
    }
    assert.strictEqual(await countFor("fwd-open"), before)
    assert.strictEqual((await raw(form({ from: "15889999", content: freshSms() }), { "content-type": "application/x-www-form-urlencoded; charset=UTF-8" })).http, 200)
    assert.strictEqual((await raw(JSON.stringify({ from: "15889999", content: freshSms() }), { "content-type": "application/json; charset=utf-8" })).http, 200)
  })

  it("a lone surrogate in SmsForwarder's `content` or SMS Gateway's `payload.message`: 400, not 500, nothing stored", async () => {
    const before = (await smsRows(db)).length
    const forwarder = await raw(JSON.stringify({ from: "15889999", content: `${freshSms()} \ud800`, timestamp: String(Date.now()) }), { "content-type": "application/json" })
    assertError(forwarder, 400, "bad_request")
    assert.include(forwarder.body.data.detail, "`content`")
    const gateway = await pushGateway(push.url, "gw-1", { messageId: "lone-1", from: "15889999", sms: `${freshSms()} \udc00`, secret: "gw-secret" })
    assertError(gateway, 400, "bad_request")
    assert.include(gateway.body.data.detail, "`payload.message`")
    assert.strictEqual((await smsRows(db)).length, before)
  })
})

describe("what recon_service shows", () => {
  it("pushed SMS show through /shooter/sms/list", async () => {
    const sms = freshSms()
    const pushed = await pushForwarder(push.url, "fwd-open", { from: "15889999", sms })
    const listed = await recon(reconServer.url)("/shooter/sms/list", { device_id: "fwd-open", page_size: 200 })
    assert.strictEqual(listed.http, 200)
    const item = listed.body.data.items.find((i: any) => i.id === pushed.body.data.sms_id)
    assert.strictEqual(item.body, sms)
    assert.strictEqual(item.status, "need_check")
  })
})

describe("one SMS the database refuses", () => {
  it("fails only its own request, not the others stored in the same statement", async () => {
    // Fault injection: the database refuses any SMS carrying the word POISON.
    await runSql(db, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`CREATE FUNCTION recon.refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.body LIKE '%POISON%' THEN RAISE EXCEPTION 'poisoned SMS'; END IF; RETURN NEW; END $$`)
      yield* sql.unsafe(`CREATE TRIGGER refuse_poison BEFORE INSERT ON recon.shooter_sms FOR EACH ROW EXECUTE FUNCTION recon.refuse_poison()`)
    }))
    try {
      const good = Array.from({ length: 12 }, () => freshSms())
      const answers = await Promise.all([
        ...good.map((sms) => pushForwarder(push.url, "fwd-open", { from: "15889999", sms })),
        pushForwarder(push.url, "fwd-open", { from: "15889999", sms: `${freshSms()} POISON` })
      ])
      assertError(answers.at(-1)!, 500, "internal_error")
      assert.isTrue(answers.slice(0, -1).every((answer) => answer.http === 200), JSON.stringify(answers.map((a) => a.http)))
      const rows = await smsRows(db, ["fwd-open"])
      for (const sms of good) assert.strictEqual(rows.filter((row) => row.body === sms).length, 1)
      assert.isFalse(rows.some((row) => row.body.includes("POISON")))
    } finally {
      await runSql(db, Effect.gen(function*() {
        yield* (yield* SqlClient.SqlClient).unsafe("DROP TRIGGER refuse_poison ON recon.shooter_sms")
      }))
    }
  })

  it("an SMS with a NUL character (PostgreSQL text cannot hold it) is refused with 400", async () => {
    assertError(await pushForwarder(push.url, "fwd-open", { from: "15889999", sms: `${freshSms()}\u0000` }), 400, "bad_request")
  })
})
