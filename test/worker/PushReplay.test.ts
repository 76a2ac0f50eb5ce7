// SmsForwarder replays: its signature covers only the timestamp, so a captured timestamp + sign
// with another message is refused (401), on any worker sharing the database, also when both
// arrive at once; with the same message it is the resend it is (stored as a duplicate). Old
// signatures are pruned.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import type { Running } from "../support/recon.ts"
import { forwarderClock } from "../../src/domain/SmsForwarder.ts"
import { pushForwarder, register, smsRows, startPushServer } from "../support/worker.ts"

const SECRET = "replay-secret"
const sms = (amount: string) => `[Web발신]\n신한 11/22 09:15\n입금 ${amount}원\n김철수\n잔액 5,000,000`

const signatures = (db: string) =>
  runSql(db, Effect.gen(function*() {
    return yield* (yield* SqlClient.SqlClient)<{ signature: string; device_id: string }>`SELECT device_id, signature FROM recon.push_signature`
  }))

describe("SmsForwarder replays", () => {
  let db: string
  let first: Running
  let second: Running
  beforeAll(async () => {
    db = await createMigratedDatabase("replay")
    await register(db, { deviceId: "fwd-signed", format: "smsforwarder", secret: SECRET, trusted: true })
    await register(db, { deviceId: "fwd-other", format: "smsforwarder", secret: SECRET, trusted: true })
    // Expired a day ago: the first signed request of a worker prunes it.
    await runSql(db, Effect.gen(function*() {
      yield* (yield* SqlClient.SqlClient)`INSERT INTO recon.push_signature (device_id, signature, digest, expires_at)
        VALUES ('fwd-signed', 'old-sign', 'x', now() - interval '1 day')`
    }))
    // Two workers on one database.
    first = await startPushServer(db)
    second = await startPushServer(db)
  }, 60_000)
  afterAll(async () => {
    await first?.close()
    await second?.close()
  })

  it("two messages of one phone in the same millisecond leave with distinct timestamps: both stored, neither a replay", async () => {
    const stamp = forwarderClock()
    const at = Date.now() - 5_000
    const answers = []
    for (const amount of ["11,111", "22,222"]) {
      answers.push(await pushForwarder(first.url, "fwd-signed", { from: "15778000", sms: sms(amount), secret: SECRET, timestamp: stamp(at) }))
    }
    assert.deepStrictEqual(answers.map((a) => [a.http, a.body.data?.duplicate]), [[200, false], [200, false]], JSON.stringify(answers.map((a) => a.body)))
  })

  it("refuses a captured signature with another sender and text (401) on every worker, and stores nothing", async () => {
    const timestamp = Date.now()
    const original = await pushForwarder(first.url, "fwd-signed", { from: "15778000", sms: sms("10,000"), secret: SECRET, timestamp })
    assert.strictEqual(original.http, 200)
    assert.isFalse(original.body.data.duplicate)
    for (const worker of [first, second]) {
      const forged = await pushForwarder(worker.url, "fwd-signed", { from: "15998000", sms: sms("9,999,999"), secret: SECRET, timestamp })
      assert.strictEqual(forged.http, 401, JSON.stringify(forged.body))
      assert.strictEqual(forged.body.msg, "unauthorized")
    }
    const rows = await smsRows(db, ["fwd-signed"])
    assert.isFalse(rows.some((row) => row.body.includes("9,999,999")))
  })

  it("takes the same signature with the same message as the resend it is: a duplicate", async () => {
    const timestamp = Date.now() - 1000
    const once = await pushForwarder(first.url, "fwd-signed", { from: "15778000", sms: sms("20,000"), secret: SECRET, timestamp })
    const again = await pushForwarder(second.url, "fwd-signed", { from: "15778000", sms: sms("20,000"), secret: SECRET, timestamp })
    assert.strictEqual(once.http, 200)
    assert.strictEqual(again.http, 200)
    assert.isTrue(again.body.data.duplicate)
  })

  it("stores exactly one of many messages sent at once under one signature, on two workers, and refuses the others", async () => {
    const timestamp = Date.now() - 3000
    const amounts = Array.from({ length: 8 }, (_, i) => `${41 + i},000`)
    const answers = await Promise.all(amounts.map((amount, i) =>
      pushForwarder(i % 2 === 0 ? first.url : second.url, "fwd-signed", { from: "15778000", sms: sms(amount), secret: SECRET, timestamp })))
    assert.deepStrictEqual(answers.map((a) => a.http).sort(), [200, ...Array(7).fill(401)])
    const rows = await smsRows(db, ["fwd-signed"])
    assert.strictEqual(rows.filter((row) => amounts.some((amount) => row.body.includes(`입금 ${amount}원`))).length, 1)
  })

  it("keeps signatures per registration: the same timestamp on another device is its own", async () => {
    const timestamp = Date.now() - 2000
    assert.strictEqual((await pushForwarder(first.url, "fwd-signed", { from: "15778000", sms: sms("30,000"), secret: SECRET, timestamp })).http, 200)
    assert.strictEqual((await pushForwarder(first.url, "fwd-other", { from: "15778000", sms: sms("31,000"), secret: SECRET, timestamp })).http, 200)
  })

  it("prunes signatures past their freshness", async () => {
    const rows = await signatures(db)
    assert.isFalse(rows.some((row) => row.signature === "old-sign"))
    assert.isAtLeast(rows.length, 3)
  })
})
