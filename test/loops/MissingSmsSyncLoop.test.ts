// missing_sms_sync_loop on a real database against local SMS Gateway servers: the export window,
// which registrations are asked, failure isolation, one ask per period across processes, silence.
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { MissingSmsSyncLoop } from "../../src/loops/MissingSmsSyncLoop.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { captureLogs, loopServices as servicesOn } from "../support/loops.ts"
import { fakeSmsGateway } from "../support/fakeSmsGateway.ts"

const NOW = Date.parse("2025-03-01T10:30:00.000Z")
const at = (minutesFromNow: number) => new Date(NOW + minutesFromNow * 60_000)
const iso = (minutesFromNow: number) => at(minutesFromNow).toISOString()

const settings = {
  port: 0,
  heartbeatFile: "/tmp/recon-test.heartbeat",
  chatbot: { enabled: false, token: undefined, apiUrl: "http://127.0.0.1:1", chatIds: [] },
  walletUrl: "http://127.0.0.1:9",
  adminUrl: "http://127.0.0.1:9",
  callerToken: undefined,
  depositTtlHours: 24
}

const loopServices = (url: string) => servicesOn(url, settings)

/** A fresh migrated database and the loop's services on it, the clock at NOW. */
const onDatabase = <A, E>(body: (url: string) => Effect.Effect<A, E, any>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(NOW)
    const url = yield* Effect.promise(() => createMigratedDatabase("sync"))
    return yield* body(url).pipe(Effect.provide(loopServices(url)))
  })

interface Registration {
  readonly deviceId: string
  readonly format?: "smsforwarder" | "sms-gateway"
  readonly apiUrl?: string | null
  readonly remoteDeviceId?: string | null
  readonly enabled?: boolean
  readonly silenceAlertS?: number | null
  readonly listenerStatus?: string
  readonly createdAt?: Date
}

const register = (r: Registration) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO recon.shooter_push
      (device_id, format, api_url, remote_device_id, enabled, silence_alert_s, listener_status, created_at)
      VALUES (${r.deviceId}, ${r.format ?? "sms-gateway"}, ${r.apiUrl ?? null}, ${r.remoteDeviceId ?? null},
        ${r.enabled ?? true}, ${r.silenceAlertS ?? null}, ${r.listenerStatus ?? "listening"}, ${r.createdAt ?? at(-60)})`
  })

const storeSms = (deviceId: string, receivedAt: Date, body = `입금 ${receivedAt.toISOString()}`) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at)
      VALUES (${deviceId}, '15889999', ${body}, ${body}, ${receivedAt})`
  })

const statuses = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ device_id: string; listener_status: string }>`
    SELECT device_id, listener_status FROM recon.shooter_push ORDER BY device_id`
  return Object.fromEntries(rows.map((r) => [r.device_id, r.listener_status]))
})

/** Sets the loop up once and answers its pass. */
const startLoop = MissingSmsSyncLoop.start

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`, "utf8").toString("base64")}`

describe("missing_sms_sync_loop", () => {
  it.effect("asks each phone for [last stored SMS − 5 min, now], from created_at (at most 24 h back) before any SMS", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const gateway = yield* fakeSmsGateway()
        const withAuth = `${gateway.origin.replace("://", "://ops:s3cr%40t@")}/3rdparty/v1`
        yield* register({ deviceId: "phone-a", apiUrl: withAuth, remoteDeviceId: "RA" })
        yield* register({ deviceId: "phone-b", apiUrl: `${gateway.origin}/3rdparty/v1`, remoteDeviceId: "RB", createdAt: at(-90) })
        yield* register({ deviceId: "phone-c", apiUrl: `${gateway.origin}/3rdparty/v1`, remoteDeviceId: "RC", createdAt: at(-3 * 24 * 60) })
        yield* storeSms("phone-a", at(-30))
        yield* storeSms("phone-a", at(-10))
        yield* storeSms("phone-a", at(-20)) // stored later, received earlier: the newest receive time counts
        yield* storeSms("phone-b-other", at(-1)) // another device's SMS is not phone-b's

        yield* Effect.scoped(Effect.flatMap(startLoop, (pass) => pass))

        const byDevice = Object.fromEntries(gateway.exports().map((c) => [c.body?.deviceId, c]))
        assert.strictEqual(gateway.exports().length, 3)
        assert.deepStrictEqual(byDevice.RA?.body, { deviceId: "RA", since: iso(-15), until: iso(0) })
        assert.strictEqual(byDevice.RA?.authorization, basic("ops", "s3cr@t"))
        assert.strictEqual(byDevice.RA?.path, "/3rdparty/v1/inbox/export")
        assert.deepStrictEqual(byDevice.RB?.body, { deviceId: "RB", since: iso(-95), until: iso(0) })
        assert.isUndefined(byDevice.RB?.authorization)
        assert.deepStrictEqual(byDevice.RC?.body, { deviceId: "RC", since: iso(-24 * 60), until: iso(0) })
      })))

  it.effect("skips registrations without api_url or SMS Gateway device id, and disabled ones", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const gateway = yield* fakeSmsGateway()
        const apiUrl = `${gateway.origin}/3rdparty/v1`
        yield* register({ deviceId: "forwarder", format: "smsforwarder", apiUrl: null })
        yield* register({ deviceId: "blank-url", apiUrl: "  " })
        yield* register({ deviceId: "no-webhook-yet", apiUrl })
        yield* register({ deviceId: "disabled", apiUrl, remoteDeviceId: "RD", enabled: false })
        yield* register({ deviceId: "live", apiUrl, remoteDeviceId: "RL" })
        const logs: Array<string> = []
        yield* Effect.scoped(Effect.flatMap(startLoop, (pass) => pass)).pipe(Effect.provide(captureLogs(logs)))
        assert.deepStrictEqual(gateway.calls.map((c) => c.body?.deviceId), ["RL"])
        assert.isTrue(logs.some((line) => line.startsWith("Debug") && line.includes("no-webhook-yet")))
      })))

  it.effect("a failing or hanging gateway stops neither the others nor the pass, is logged by device, and is asked again next pass", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        const gateway = yield* fakeSmsGateway()
        const apiUrl = `${gateway.origin.replace("://", "://ops:topsecret-pw@")}/3rdparty/v1`
        yield* register({ deviceId: "phone-a", apiUrl, remoteDeviceId: "RA" })
        yield* register({ deviceId: "phone-b", apiUrl, remoteDeviceId: "RB" })
        yield* register({ deviceId: "phone-c", apiUrl, remoteDeviceId: "RC" })
        gateway.behave("RA", "fail")
        gateway.behave("RB", "hang")
        const logs: Array<string> = []

        yield* Effect.scoped(Effect.gen(function*() {
          const pass = yield* startLoop
          const fiber = yield* Effect.forkChild(pass)
          yield* gateway.arrived(3)
          yield* TestClock.adjust("10 seconds") // the hanging export times out
          yield* Fiber.join(fiber)
          assert.sameMembers(gateway.exports().map((c) => c.body?.deviceId), ["RA", "RB", "RC"])

          // The failed ones gave their claim back: the next pass asks them, not the one that worked.
          gateway.behave("RA", "accept")
          gateway.behave("RB", "accept")
          yield* pass
          assert.sameMembers(gateway.exports().slice(3).map((c) => c.body?.deviceId), ["RA", "RB"])
        })).pipe(Effect.provide(captureLogs(logs)))

        const warnings = logs.filter((line) => line.startsWith("Warn"))
        assert.isTrue(warnings.some((line) => line.includes("phone-a") && line.includes("HTTP 500")))
        assert.isTrue(warnings.some((line) => line.includes("phone-b") && line.includes("no answer")))
        assert.isFalse(warnings.some((line) => line.includes("phone-c")))
        assert.notInclude(logs.join("\n"), "topsecret-pw")
      })))

  it.effect("two worker processes ask a phone once per period; a later pass asks again", () =>
    onDatabase((url) =>
      Effect.gen(function*() {
        const gateway = yield* fakeSmsGateway()
        yield* register({ deviceId: "phone-a", apiUrl: `${gateway.origin}/3rdparty/v1`, remoteDeviceId: "RA" })
        yield* storeSms("phone-a", at(-2))
        // A second process: its own pool on the same database.
        const other = Effect.scoped(Effect.flatMap(startLoop, (pass) => pass)).pipe(Effect.provide(loopServices(url)))
        const mine = Effect.scoped(Effect.flatMap(startLoop, (pass) => pass))
        yield* Effect.all([mine, other, mine], { concurrency: "unbounded" })
        assert.strictEqual(gateway.exports().length, 1)

        // Within the period nobody asks again.
        yield* TestClock.adjust("60 seconds")
        yield* other
        assert.strictEqual(gateway.exports().length, 1)
        yield* TestClock.adjust("30 seconds")
        yield* other
        assert.strictEqual(gateway.exports().length, 2)
        // From the previous ask minus the overlap, not again from the last stored SMS: a quiet
        // phone does not re-send the same SMS at every ask.
        assert.deepStrictEqual(gateway.exports()[1]?.body, {
          deviceId: "RA",
          since: iso(-5),
          until: DateTime.formatIso(DateTime.makeUnsafe(NOW + 90_000))
        })
      })))

  it.effect("marks listening/pending registrations silent past silence_alert_s, once, and no others", () =>
    onDatabase(() =>
      Effect.gen(function*() {
        yield* register({ deviceId: "quiet", format: "smsforwarder", silenceAlertS: 600 })
        yield* storeSms("quiet", at(-11))
        yield* register({ deviceId: "recent", format: "smsforwarder", silenceAlertS: 600 })
        yield* storeSms("recent", at(-20))
        yield* storeSms("recent", at(-5))
        yield* register({ deviceId: "never-pending", format: "smsforwarder", silenceAlertS: 3600, listenerStatus: "pending", createdAt: at(-61) })
        yield* register({ deviceId: "new-pending", format: "smsforwarder", silenceAlertS: 3600, listenerStatus: "pending", createdAt: at(-59) })
        yield* register({ deviceId: "no-alert", format: "smsforwarder", silenceAlertS: null, createdAt: at(-9999) })
        yield* register({ deviceId: "stopped", format: "smsforwarder", silenceAlertS: 60, listenerStatus: "stopped", createdAt: at(-9999) })
        yield* register({ deviceId: "disabled", format: "smsforwarder", silenceAlertS: 60, enabled: false, createdAt: at(-9999) })

        const logs: Array<string> = []
        yield* Effect.scoped(Effect.gen(function*() {
          const pass = yield* startLoop
          yield* pass
          assert.deepStrictEqual(yield* statuses, {
            "disabled": "listening",
            "never-pending": "silent",
            "new-pending": "pending",
            "no-alert": "listening",
            "quiet": "silent",
            "recent": "listening",
            "stopped": "stopped"
          })
          yield* pass // already silent: nothing changes, nothing is logged again
          yield* TestClock.adjust("2 minutes")
          yield* pass
          assert.strictEqual((yield* statuses)["new-pending"], "silent")
        })).pipe(Effect.provide(captureLogs(logs)))

        const silentWarnings = logs.filter((line) => line.startsWith("Warn") && line.includes("silent"))
        assert.strictEqual(silentWarnings.length, 3)
        for (const device of ["quiet", "never-pending", "new-pending"]) {
          assert.strictEqual(silentWarnings.filter((line) => line.includes(`${device} `)).length, 1, device)
        }
      })))
})
