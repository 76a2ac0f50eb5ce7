// chatbot_poll_loop on a real database against a local Telegram Bot API: what is stored, the
// offset committed with it, crash safety, one poller across processes, errors without the token.
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { ChatbotPollLoop } from "../../src/loops/ChatbotPollLoop.ts"
import { OFFSET_CURSOR } from "../../src/loops/ChatbotStore.ts"
import type { LoopName } from "../../src/loops/Loop.ts"
import { formatForwarderContent } from "../../src/domain/SmsText.ts"
import { createMigratedDatabase, sqlLayer } from "../support/database.ts"
import { captureLogs, loopServices as servicesOn } from "../support/loops.ts"
import { ingestLayer } from "../support/worker.ts"
import { apiError, fakeTelegram, textUpdate, TOKEN } from "../support/fakeTelegram.ts"
import { realWait } from "../support/time.ts"

const OPS_CHAT = 4242
const GROUP_CHAT = -1001234567890
const OTHER_CHAT = 999

const settings = (apiUrl: string, enabled = true) => ({
  port: 0,
  heartbeatFile: "/tmp/recon-test.heartbeat",
  chatbot: { enabled, token: enabled ? Redacted.make(TOKEN) : undefined, apiUrl, chatIds: [String(OPS_CHAT), String(GROUP_CHAT)] },
  walletUrl: "http://127.0.0.1:9",
  adminUrl: "http://127.0.0.1:9",
  callerToken: undefined,
  depositTtlHours: 24
})

const loopServices = (url: string, apiUrl: string, kicked: Array<LoopName>, enabled = true) =>
  Layer.provideMerge(ingestLayer, servicesOn(url, settings(apiUrl, enabled), kicked))

const onDatabase = <A, E>(body: (url: string) => Effect.Effect<A, E, any>) =>
  Effect.gen(function*() {
    const url = yield* Effect.promise(() => createMigratedDatabase("chatbot"))
    return yield* body(url).pipe(Effect.provide(sqlLayer(url)))
  })

interface StoredSms {
  readonly device_id: string
  readonly sender: string
  readonly sender_normalized: string | null
  readonly body: string
  readonly remote_id: string
  readonly received_at: Date
  readonly status: string
}

const storedSms = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<StoredSms>`SELECT device_id, sender, sender_normalized, body, remote_id, received_at, status
    FROM recon.shooter_sms ORDER BY id`
})

const devices = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ device_id: string; trusted: boolean }>`SELECT device_id, trusted FROM recon.shooter_device ORDER BY device_id`
  return rows.map((r) => `${r.device_id}${r.trusted ? " (trusted)" : ""}`)
})

const storedOffset = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ value: string }>`SELECT value FROM recon.worker_cursor WHERE name = ${OFFSET_CURSOR}`
  return rows[0]?.value
})

const kbDeposit = "[Web발신]\n[KB]03/01 10:13\n971372**874\n박희자\n입금\n141,000\n잔액1,033,072"

/** The updates of one realistic batch: configured chats (plain, forwarded wrapper, 보낸사람 prefix), a photo, another chat. */
const batch = [
  textUpdate({ updateId: 500, chatId: OPS_CHAT, messageId: 11, text: kbDeposit, date: 1_740_824_000, username: "ops_kim" }),
  textUpdate({ updateId: 501, chatId: OTHER_CHAT, messageId: 12, text: "입금 1,000원 아무개" }),
  textUpdate({ updateId: 502, chatId: OPS_CHAT, messageId: 13 }), // a photo: no text
  textUpdate({
    updateId: 503,
    chatId: GROUP_CHAT,
    messageId: 14,
    channel: true,
    text: formatForwarderContent({ from: "1588-9999", text: kbDeposit.replace("박희자", "이몽룡"), simInfo: "SIM1_KT", subId: 1, receiveTime: "2025-03-01 19:13:05", deviceName: "Galaxy" })
  }),
  textUpdate({ updateId: 504, chatId: OPS_CHAT, messageId: 15, text: `보낸사람 : 16449999()\n${kbDeposit.replace("박희자", "성춘향")}` })
]

describe("chatbot_poll_loop", () => {
  it.effect("disabled: the pass succeeds at once without calling Telegram", () =>
    Effect.gen(function*() {
      const telegram = yield* fakeTelegram()
      telegram.push(batch[0])
      const kicked: Array<LoopName> = []
      yield* Effect.scoped(Effect.gen(function*() {
        const pass = yield* ChatbotPollLoop.start
        yield* pass
        yield* pass
      })).pipe(Effect.provide(loopServices("postgres://127.0.0.1:1/none", telegram.apiUrl, kicked, false)))
      assert.strictEqual(telegram.calls.length, 0)
      assert.deepStrictEqual(kicked, [])
    }))

  it.effect("stores text from the configured chats as SMS of chatbot:<chat_id>, skips the rest, commits the offset; the next pass asks from it", () =>
    onDatabase((url) =>
      Effect.gen(function*() {
        const telegram = yield* fakeTelegram()
        telegram.push(...batch)
        const kicked: Array<LoopName> = []
        yield* Effect.scoped(Effect.gen(function*() {
          const pass = yield* ChatbotPollLoop.start
          yield* pass
          assert.isUndefined(telegram.calls[0]?.body.offset)
          assert.strictEqual(telegram.calls[0]?.body.timeout, 20)

          const sms = yield* storedSms
          assert.deepStrictEqual(sms.map((s) => [s.device_id, s.remote_id, s.sender, s.sender_normalized]), [
            ["chatbot:4242", "11", "@ops_kim", null],
            [`chatbot:${GROUP_CHAT}`, "14", "1588-9999", "15889999"],
            ["chatbot:4242", "15", "16449999", "16449999"]
          ])
          assert.strictEqual(sms[0]?.body, kbDeposit)
          assert.strictEqual(sms[1]?.body, kbDeposit.replace("박희자", "이몽룡")) // the forwarder's wrapper removed
          assert.strictEqual(sms[0]?.received_at.toISOString(), new Date(1_740_824_000_000).toISOString())
          // Devices are created untrusted, so everything waits in need_check for an operator.
          assert.deepStrictEqual(sms.map((s) => s.status), ["need_check", "need_check", "need_check"])
          assert.deepStrictEqual(yield* devices, [`chatbot:${GROUP_CHAT}`, "chatbot:4242"])
          assert.strictEqual(yield* storedOffset, "505")
          assert.deepStrictEqual(kicked, ["parse_loop"])

          // Nothing new: asked from the stored offset, nothing stored twice, parse_loop not kicked.
          yield* pass
          assert.strictEqual(telegram.calls[1]?.body.offset, 505)
          assert.strictEqual((yield* storedSms).length, 3)
          assert.deepStrictEqual(kicked, ["parse_loop"])

          telegram.push(textUpdate({ updateId: 505, chatId: OPS_CHAT, messageId: 16, text: kbDeposit.replace("141,000", "9,000") }))
          yield* pass
          assert.strictEqual((yield* storedSms).length, 4)
          assert.strictEqual(yield* storedOffset, "506")
        })).pipe(Effect.provide(loopServices(url, telegram.apiUrl, kicked)))
      })))

  it.effect("a crash before the commit stores nothing, and the same updates are polled again", () =>
    onDatabase((url) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // The cursor write fails after the SMS of the batch have been ingested in the transaction.
        yield* sql.unsafe(`CREATE FUNCTION recon.test_fail_cursor() RETURNS trigger LANGUAGE plpgsql AS
          $$ BEGIN RAISE EXCEPTION 'disk full'; END $$`)
        yield* sql.unsafe(`CREATE TRIGGER test_fail_cursor BEFORE INSERT OR UPDATE ON recon.worker_cursor
          FOR EACH ROW EXECUTE FUNCTION recon.test_fail_cursor()`)
        const telegram = yield* fakeTelegram()
        telegram.push(...batch)
        const kicked: Array<LoopName> = []
        yield* Effect.scoped(Effect.gen(function*() {
          const pass = yield* ChatbotPollLoop.start
          const exit = yield* Effect.exit(pass)
          assert.isTrue(Exit.isFailure(exit))
          if (Exit.isFailure(exit)) assert.include(Cause.pretty(exit.cause), "disk full")
          assert.deepStrictEqual(yield* storedSms, [])
          assert.deepStrictEqual(yield* devices, [])
          assert.isUndefined(yield* storedOffset)
          assert.deepStrictEqual(kicked, [])

          yield* sql.unsafe(`DROP TRIGGER test_fail_cursor ON recon.worker_cursor`)
          yield* pass
          assert.isUndefined(telegram.calls[1]?.body.offset) // the same updates again
          assert.deepStrictEqual((yield* storedSms).map((s) => s.remote_id), ["11", "14", "15"])
          assert.strictEqual(yield* storedOffset, "505")
        })).pipe(Effect.provide(loopServices(url, telegram.apiUrl, kicked)))
      })))

  it.effect("only one worker process polls: while another holds the lock the pass succeeds without polling", () =>
    onDatabase((url) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const telegram = yield* fakeTelegram()
        telegram.push(batch[0])
        const kicked: Array<LoopName> = []
        yield* Effect.scoped(Effect.gen(function*() {
          const pass = yield* ChatbotPollLoop.start
          yield* Effect.scoped(Effect.gen(function*() {
            // Another process's session holding the poll lock.
            const other = yield* sql.reserve
            yield* other.execute("SELECT pg_advisory_lock(hashtextextended('recon.chatbot_poll_loop', 0))", [], undefined)
            yield* pass
            assert.strictEqual(telegram.calls.length, 0)
            yield* other.execute("SELECT pg_advisory_unlock(hashtextextended('recon.chatbot_poll_loop', 0))", [], undefined)
          }))
          yield* pass
          assert.strictEqual(telegram.calls.length, 1)
          assert.strictEqual((yield* storedSms).length, 1)
          // The lock is given back after each pass: another session can take it now.
          const probe = yield* sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(hashtextextended('recon.chatbot_poll_loop', 0)) AS locked`
          assert.isTrue(probe[0]?.locked)
          yield* sql`SELECT pg_advisory_unlock_all()`
        })).pipe(Effect.provide(loopServices(url, telegram.apiUrl, kicked)))
      })))

  it.effect("409, 429 and 401 fail the pass with a typed error, the token in neither error nor logs; 429's retry_after is waited out", () =>
    onDatabase((url) =>
      Effect.gen(function*() {
        const telegram = yield* fakeTelegram()
        telegram.push(batch[0])
        const logs: Array<string> = []
        const shown: Array<string> = []
        const failedWith = (exit: Exit.Exit<void, unknown>, tag: string, code: number) => {
          assert.isTrue(Exit.isFailure(exit))
          if (Exit.isSuccess(exit)) return
          const error = Cause.squash(exit.cause) as { _tag: string; errorCode: number }
          assert.strictEqual(error._tag, tag)
          assert.strictEqual(error.errorCode, code)
          shown.push(Cause.pretty(exit.cause), JSON.stringify(error))
        }
        yield* Effect.scoped(Effect.gen(function*() {
          const pass = yield* ChatbotPollLoop.start

          telegram.failNext(apiError(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"))
          failedWith(yield* Effect.exit(pass), "TelegramApiError", 409)

          // After a 409 the next poll waits a little (another poller holds the long poll).
          yield* TestClock.adjust("5 seconds")
          telegram.failNext(apiError(429, "Too Many Requests: retry after 7", 7))
          failedWith(yield* Effect.exit(pass), "TelegramApiError", 429)
          assert.strictEqual(telegram.calls.length, 2)

          const fiber = yield* Effect.forkChild(pass)
          yield* TestClock.adjust("6 seconds")
          yield* realWait(200) // real time for a request (over loopback) that should not be made
          assert.strictEqual(telegram.calls.length, 2) // still inside retry_after: Telegram not called
          yield* TestClock.adjust("1 second")
          yield* Fiber.join(fiber)
          assert.strictEqual(telegram.calls.length, 3)
          assert.strictEqual((yield* storedSms).length, 1)
        })).pipe(Effect.provide(Layer.merge(loopServices(url, telegram.apiUrl, []), captureLogs(logs))))

        // A wrong token: 401 from Telegram.
        const wrong = yield* fakeTelegram("111:someone-elses-token")
        yield* Effect.scoped(Effect.gen(function*() {
          const pass = yield* ChatbotPollLoop.start
          failedWith(yield* Effect.exit(pass), "TelegramApiError", 401)
        })).pipe(Effect.provide(Layer.merge(loopServices(url, wrong.apiUrl, []), captureLogs(logs))))

        const everything = [...shown, ...logs].join("\n")
        assert.include(everything, "409")
        assert.notInclude(everything, TOKEN)
        assert.notInclude(everything, TOKEN.split(":")[1]!)
      })))
})
