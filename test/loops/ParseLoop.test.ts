// parse_loop on a real database: the development corpus and the whole bank corpus through the real
// push endpoint and the real loop in a running worker, template changes and sms/reset without a
// restart (an ignored SMS too), operator templates before the built-ins (sender first), a broken
// template row failing only itself, and the year of an `MM/DD` date across New Year on the TestClock.
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { LoopName } from "../../src/loops/Loop.ts"
import { ParseInbox, ParseLoop } from "../../src/loops/ParseLoop.ts"
import { bankCorpus, type CorpusRow, devCorpus } from "../support/corpus.ts"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { captureLogs, loopServices } from "../support/loops.ts"
import { builtins } from "../support/parse.ts"
import { recon, startRecon } from "../support/recon.ts"
import { eventually } from "../support/time.ts"
import { buildWorker, pushForwarder, register, servePush, workerSettings } from "../support/worker.ts"

/** The sender a bank's SMS come from: the built-in template's, else a phone number. */
const senderOf = (bank: string): string =>
  builtins.find((t) => t.sender !== null && bank.startsWith(t.bank.slice(0, 2)))?.sender ?? "01099998888"

interface Parsed {
  readonly id: number
  readonly status: string
  readonly bank: string | null
  readonly payer_name: string | null
  readonly amount: string | null
  readonly template_id: number | null
  readonly txn_at: Date | null
  readonly balance: string | null
  readonly parse_detail: any
}

const parsedRows = (db: string) =>
  runSql(db, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<Parsed>`SELECT id::int AS id, status, bank, payer_name, amount::text AS amount, template_id::int AS template_id,
      txn_at, balance::text AS balance, parse_detail FROM recon.shooter_sms ORDER BY id`
    return rows
  }))

const whitelist = (db: string, phones: ReadonlyArray<string>) =>
  runSql(db, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const phone of new Set(phones)) yield* sql`INSERT INTO recon.shooter_phone (phone) VALUES (${phone}) ON CONFLICT DO NOTHING`
  }))

const templateVersion = (db: string) =>
  runSql(db, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ version: number }>`SELECT version::int AS version FROM recon.template_version`
    return row!.version
  }))

/** A worker running only parse_loop, and the push endpoint kicking it in the same process. */
const workerWithPush = (db: string) =>
  Effect.gen(function*() {
    const heartbeat = join(mkdtempSync(join(tmpdir(), "recon-parse-")), "worker.heartbeat")
    const worker = yield* buildWorker(db, heartbeat, { loops: [ParseLoop] })
    return { ...worker, push: yield* servePush(worker) }
  })

/** Pushes every row through the webhook of a fresh worker and checks what parse_loop stored for each. */
const throughTheWebhook = (prefix: string, corpus: ReadonlyArray<CorpusRow>) =>
  Effect.gen(function*() {
    const db = yield* Effect.promise(() => createMigratedDatabase(prefix))
    yield* Effect.promise(() => register(db, { deviceId: "phone-1", format: "smsforwarder", trusted: true }))
    yield* Effect.promise(() => whitelist(db, corpus.map((row) => senderOf(row.bank))))
    const { push } = yield* workerWithPush(db)
    const start = Date.parse("2026-11-20T03:00:00Z")
    for (const [i, row] of corpus.entries()) {
      // 11 minutes apart: a corpus may repeat a text, which would otherwise be a duplicate.
      const answer = yield* Effect.promise(() =>
        pushForwarder(push, "phone-1", { from: senderOf(row.bank), sms: row.text, timestamp: start + i * 11 * 60_000 })
      )
      assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
    }
    yield* eventually(
      "every SMS read",
      Effect.promise(() => parsedRows(db)).pipe(Effect.map((rows) => rows.length === corpus.length && rows.every((r) => r.status !== "received"))),
      60_000
    )
    const rows = yield* Effect.promise(() => parsedRows(db))
    const failures: Array<string> = []
    for (const [i, row] of corpus.entries()) {
      const got = rows[i]!
      const shown = `${row.bank} ${JSON.stringify(row.text)}: ${got.status} ${got.payer_name} ${got.amount} ${JSON.stringify(got.parse_detail)}`
      if (row.kind === "dep") {
        const read = got.status === "parsed" && got.amount === `${row.amount}.00` && row.names.includes(got.payer_name ?? "")
        // Which reader read it is said, and the slots it filled.
        const said = got.parse_detail?.kind === "deposit" && (got.parse_detail.reader === "reader" ? got.template_id === null : got.template_id === got.parse_detail.template_id) &&
          got.parse_detail.slots?.payer_name === got.payer_name
        if (!read || !said) failures.push(shown)
      } else if (got.status !== "ignored" || got.amount !== null || got.payer_name !== null || typeof got.parse_detail?.reason !== "string") {
        failures.push(`${row.kind} ${shown}`)
      }
    }
    assert.deepStrictEqual(failures, [])
    return rows
  })

describe("parse_loop in the worker", () => {
  it.live("reads the whole development corpus pushed through the webhook: every deposit exactly, every other row ignored", () =>
    Effect.gen(function*() {
      const rows = yield* throughTheWebhook("parse-corpus", devCorpus)
      const deposits = devCorpus.filter((row) => row.kind === "dep").length
      assert.strictEqual(rows.filter((r) => r.status === "parsed").length, deposits)
      assert.isAtLeast(deposits, 45)
    }), 120_000)

  // Every row of the bank corpus (not a slice): real deposits of the banks and their traps.
  it.live("reads the whole bank corpus pushed through the webhook: every deposit exactly, every trap ignored with its reason", () =>
    Effect.gen(function*() {
      const rows = yield* throughTheWebhook("parse-bank-corpus", bankCorpus)
      assert.strictEqual(rows.filter((r) => r.status === "parsed").length, bankCorpus.filter((row) => row.kind === "dep").length)
      // The built-in reader read some of them, and says so; outgoing money keeps its balance facts.
      assert.isTrue(rows.some((r) => r.parse_detail.reader === "reader"))
      assert.isTrue(rows.some((r) => r.status === "ignored" && r.parse_detail.slots?.direction === "out" && r.parse_detail.slots.balance !== undefined))
    }), 180_000)

  it.live("a template added through recon_service is used without a restart, and sms/reset reads an SMS again", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("parse-change"))
      yield* Effect.promise(() => register(db, { deviceId: "phone-1", format: "smsforwarder", trusted: true }))
      yield* Effect.promise(() => whitelist(db, ["01055556666"]))
      const { push } = yield* workerWithPush(db)
      const api = yield* Effect.acquireRelease(Effect.promise(() => startRecon(db)), (r) => Effect.promise(() => r.close()))
      const call = recon(api.url)
      // Two names where a payer could stand: the built-in reader leaves it to a person.
      const text = "[한빛상호] 김하나 입금 7,700원 한빛지점"
      yield* Effect.promise(() => pushForwarder(push, "phone-1", { from: "01055556666", sms: text }))
      yield* eventually("parse_failed", Effect.promise(() => parsedRows(db)).pipe(Effect.map((rows) => rows[0]?.status === "parse_failed")))
      const [failed] = yield* Effect.promise(() => parsedRows(db))
      assert.match(failed!.parse_detail.reason, /no template reads, and the built-in reader found two places that could hold the payer's name/)
      const shown = yield* Effect.promise(() => call("/shooter/sms/get", { id: failed!.id }))
      assert.strictEqual(shown.body.data.parse.kind, "deposit")
      assert.match(shown.body.data.parse.reason, /no template reads/)

      const versionBefore = yield* Effect.promise(() => templateVersion(db))
      const added = yield* Effect.promise(() =>
        call("/shooter/template/recharge/add", {
          bank: "한빛상호",
          sample: text,
          sender: "01055556666",
          rule: "\\] (?P<name>\\S+) 입금 (?P<amount>[\\d,]+)원"
        })
      )
      assert.strictEqual(added.http, 200, JSON.stringify(added.body))
      const bumped = yield* Effect.promise(() => templateVersion(db))
      // Refused requests change nothing, the version either (issue 37): no worker reloads for them.
      const again = yield* Effect.promise(() => call("/shooter/template/recharge/add", {
        bank: "한빛상호",
        sample: text,
        sender: "01055556666",
        rule: "\\] (?P<name>\\S+) 입금 (?P<amount>[\\d,]+)원"
      }))
      assert.strictEqual(again.http, 409, JSON.stringify(again.body))
      const missing = yield* Effect.promise(() => call("/shooter/template/recharge/delete", { id: 999_999 }))
      assert.strictEqual(missing.http, 404, JSON.stringify(missing.body))
      assert.strictEqual(yield* Effect.promise(() => templateVersion(db)), bumped)
      assert.isAbove(bumped, versionBefore)
      // A new SMS in that format (11 minutes later, not a duplicate) is read with the new template.
      yield* Effect.promise(() =>
        pushForwarder(push, "phone-1", { from: "01055556666", sms: text.replace("김하나", "박두리"), timestamp: Date.now() + 11 * 60_000 })
      )
      yield* eventually("the new SMS parsed", Effect.promise(() => parsedRows(db)).pipe(Effect.map((rows) => rows[1]?.status === "parsed")))
      const second = (yield* Effect.promise(() => parsedRows(db)))[1]!
      assert.deepInclude(second, { payer_name: "박두리", amount: "7700.00", template_id: added.body.data.id, bank: "한빛상호" })
      assert.strictEqual(second.parse_detail.rule_source, "manual")

      // sms/reset puts the failed one back to received (NOTIFY): the loop reads it again.
      const reset = yield* Effect.promise(() => call("/shooter/sms/reset", { id: failed!.id }))
      assert.strictEqual(reset.http, 200)
      yield* eventually("the reset SMS parsed", Effect.promise(() => parsedRows(db)).pipe(Effect.map((rows) => rows[0]?.status === "parsed")))
      const got = yield* Effect.promise(() => call("/shooter/sms/get", { id: failed!.id }))
      assert.deepInclude(got.body.data, { status: "parsed", payer_name: "김하나", amount: "7700", bank: "한빛상호" })
      assert.deepInclude(got.body.data.parse, { kind: "deposit", reader: "template", template_id: added.body.data.id, rule_source: "manual" })
      assert.deepInclude(got.body.data.parse.slots, { direction: "in", payer_name: "김하나", amount: "7700" })
    }), 60_000)

  // Nothing that may be money disappears: an SMS an older guard left `ignored` (입출금 알림 read as
  // a withdrawal) goes back to received through sms/reset and is read again, now as the deposit it is.
  it.live("sms/reset of an ignored SMS reads it again", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("parse-reset-ignored"))
      yield* Effect.promise(() => register(db, { deviceId: "phone-1", format: "smsforwarder", trusted: true }))
      yield* workerWithPush(db)
      const api = yield* Effect.acquireRelease(Effect.promise(() => startRecon(db)), (r) => Effect.promise(() => r.close()))
      const call = recon(api.url)
      const body = "입출금 알림\n농협 입금10,000원\n07/15 18:38 356-****-0576-13 정효진\n잔액10,000원"
      const id = yield* Effect.promise(() =>
        runSql(db, Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ id: number }>`INSERT INTO recon.shooter_sms (device_id, sender, sender_normalized, body, normalized_body,
              received_at, status, parse_detail)
            VALUES ('phone-1', '15882100', '15882100', ${body}, ${body}, now(), 'ignored',
              ${JSON.stringify({ kind: "outgoing", reason: "출금 (withdrawal)" })}::jsonb) RETURNING id::int AS id`
          return row!.id
        }))
      )
      const before = yield* Effect.promise(() => call("/shooter/sms/get", { id }))
      assert.deepInclude(before.body.data, { status: "ignored", payer_name: null })
      const reset = yield* Effect.promise(() => call("/shooter/sms/reset", { id }))
      assert.strictEqual(reset.http, 200, JSON.stringify(reset.body))
      assert.strictEqual(reset.body.data.status, "received")
      yield* eventually("the reset SMS parsed", Effect.promise(() => parsedRows(db)).pipe(Effect.map((rows) => rows[0]?.status === "parsed")))
      const after = yield* Effect.promise(() => call("/shooter/sms/get", { id }))
      assert.deepInclude(after.body.data, { status: "parsed", payer_name: "정효진", amount: "10000", bank: "NH농협" })
      assert.deepInclude(after.body.data.parse, { kind: "deposit", balance: "10000", account: "356-****-0576-13", time_text: "07/15 18:38" })
    }), 60_000)
})

// One pass of the loop, run directly, on a database with SMS stored by SQL.
const storeSms = (sender: string, body: string, receivedAt: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ id: number }>`INSERT INTO recon.shooter_sms (device_id, sender, sender_normalized, body, normalized_body, received_at)
      VALUES ('phone-1', ${sender}, ${sender}, ${body}, ${body + String(Math.random())}, ${receivedAt}) RETURNING id::int AS id`
    return row!.id
  })

const addTemplate = (t: { bank: string; sender: string | null; rule: string; source?: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ id: number }>`INSERT INTO recon.shooter_template_recharge (bank, sender, sample, rule, rule_source)
      VALUES (${t.bank}, ${t.sender}, 'sample', ${t.rule}, ${t.source ?? "manual"}) RETURNING id::int AS id`
    return row!.id
  })

const smsById = (id: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<Parsed>`SELECT id::int AS id, status, bank, payer_name, amount::text AS amount, template_id::int AS template_id,
      txn_at, balance::text AS balance, parse_detail FROM recon.shooter_sms WHERE id = ${id}`
    return row!
  })

const onePassSetup = (prefix: string, logs: Array<string>, kicked: Array<LoopName>) =>
  Effect.gen(function*() {
    const db = yield* Effect.promise(() => createMigratedDatabase(prefix))
    return Layer.mergeAll(loopServices(db, workerSettings("/tmp/recon-parse-test.heartbeat"), kicked), captureLogs(logs))
  })

describe("parse_loop passes", () => {
  const kbSms = "[Web발신]\n[KB]11/02 14:05\n123456**789\n홍길동\n입금\n50,000\n잔액1,234,567"

  it.live("tries the templates of the SMS's sender first, then operator templates before the built-ins", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const kicked: Array<LoopName> = []
      const services = yield* onePassSetup("parse-order", logs, kicked)
      yield* Effect.gen(function*() {
        // An operator rule for any sender that reads the account as the name: it is tried after
        // the KB built-ins for KB's number, before them for any other sender.
        const anySender = yield* addTemplate({ bank: "운영자", sender: null, rule: "(?P<name>\\d+\\*\\*\\d+)\\n홍길동\\n입금\\n(?P<amount>[\\d,]+)" })
        const otherSender = yield* addTemplate({ bank: "다른 번호", sender: "01077778888", rule: "(?P<name>홍길동)\\n입금\\n(?P<amount>[\\d,]+)" })
        const fromKb = yield* storeSms("16449999", kbSms, new Date("2026-11-02T05:06:00Z"))
        const fromOther = yield* storeSms("01077778888", kbSms, new Date("2026-11-02T05:06:00Z"))
        const fromUnknown = yield* storeSms("01000000000", kbSms, new Date("2026-11-02T05:06:00Z"))
        yield* Effect.scoped(Effect.flatMap(ParseLoop.start, (pass) => pass))
        const kb = yield* smsById(fromKb)
        assert.strictEqual(kb.status, "parsed")
        assert.strictEqual(kb.parse_detail.rule_source, "builtin")
        assert.deepInclude(kb, { bank: "KB국민", payer_name: "홍길동", amount: "50000.00", balance: "1234567.00" })
        assert.strictEqual(kb.txn_at?.toISOString(), "2026-11-02T05:05:00.000Z")
        assert.strictEqual(kb.parse_detail.time, "2026-11-02T14:05:00+09:00")
        assert.strictEqual(kb.parse_detail.time_text, "11/02 14:05")
        assert.strictEqual((yield* smsById(fromOther)).template_id, otherSender)
        // For a sender no template names, the operator templates come before the built-ins: the
        // first one's "name" is an account number, which the loop refuses as a payer, so the next
        // operator template reads it.
        const unknown = yield* smsById(fromUnknown)
        assert.strictEqual(unknown.status, "parsed")
        assert.strictEqual(unknown.template_id, otherSender)
        assert.deepStrictEqual(unknown.parse_detail.rejected.map((r: { template_id: number }) => r.template_id), [anySender])
        assert.include(kicked, "order_match_loop")
      }).pipe(Effect.provide(services))
    }), 60_000)

  it.live("a template row that no longer compiles is logged and skipped; the others still read", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const kicked: Array<LoopName> = []
      const services = yield* onePassSetup("parse-broken", logs, kicked)
      yield* Effect.gen(function*() {
        const broken = yield* addTemplate({ bank: "깨진", sender: "16449999", rule: "(?P<name>[\\S+) (?P<amount>\\d+)" })
        const id = yield* storeSms("16449999", kbSms, new Date("2026-11-02T05:06:00Z"))
        const outgoing = yield* storeSms("16449999", kbSms.replace("입금", "출금"), new Date("2026-11-02T05:06:00Z"))
        yield* Effect.scoped(Effect.flatMap(ParseLoop.start, (pass) => pass))
        assert.deepInclude(yield* smsById(id), { status: "parsed", payer_name: "홍길동" })
        const ignored = yield* smsById(outgoing)
        assert.deepInclude(ignored, { status: "ignored", payer_name: null, amount: null, template_id: null })
        assert.deepStrictEqual(ignored.parse_detail, {
          kind: "outgoing",
          reason: "\"출금\" is money out of the account (a withdrawal)",
          slots: { direction: "out", amount: "50000", balance: "1234567", account: "123456**789", bank: "KB국민", time_text: "11/02 14:05", counterpart: "홍길동" }
        })
        assert.isTrue(logs.some((line) => line.startsWith("Warn") && line.includes(`template ${broken} (깨진, manual) is not used`)), logs.join("\n"))
      }).pipe(Effect.provide(services))
    }), 60_000)

  it.live("an SMS handed over by the push endpoint is parsed at once, without a pass; one no longer `received` by then is left as it is", () =>
    Effect.gen(function*() {
      const kicked: Array<LoopName> = []
      const services = yield* onePassSetup("parse-handed", [], kicked)
      yield* Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pass = yield* ParseLoop.start
        // The first pass compiles the templates; nothing is waiting yet.
        yield* pass
        const receivedAt = new Date("2026-11-02T05:06:00Z")
        const fresh = yield* storeSms("16449999", kbSms, receivedAt)
        const other = kbSms.replace("홍길동", "김철수")
        const moved = yield* storeSms("16449999", other, receivedAt)
        // Taken elsewhere meanwhile (another worker, an operator): the handed copy must not overwrite it.
        yield* sql`UPDATE recon.shooter_sms SET status = 'need_check' WHERE id = ${moved}`
        const inbox = yield* ParseInbox
        yield* inbox.hand({ id: moved, deviceId: "phone-1", sender: "16449999", body: other, receivedAt })
        yield* inbox.hand({ id: fresh, deviceId: "phone-1", sender: "16449999", body: kbSms, receivedAt })
        yield* eventually("the handed SMS parsed", Effect.map(smsById(fresh), (row) => row.status === "parsed"))
        assert.deepInclude(yield* smsById(fresh), { bank: "KB국민", payer_name: "홍길동", amount: "50000.00" })
        assert.deepInclude(yield* smsById(moved), { status: "need_check", payer_name: null, parse_detail: null })
        assert.include(kicked, "order_match_loop")
      })).pipe(Effect.provide(services))
    }), 60_000)

  it.live("a hand-over write that fails (a table renamed for a moment) leaves its SMS for a pass, and the hand-over goes on with the next", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const kicked: Array<LoopName> = []
      const services = yield* onePassSetup("parse-handed-fault", logs, kicked)
      yield* Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pass = yield* ParseLoop.start
        yield* pass
        const inbox = yield* ParseInbox
        const receivedAt = new Date("2026-11-02T05:06:00Z")
        const first = yield* storeSms("16449999", kbSms, receivedAt)
        // The write's statement records the balance fact in balance_pending: without the table, it fails (42P01).
        yield* sql`ALTER TABLE recon.balance_pending RENAME TO balance_pending_away`
        yield* inbox.hand({ id: first, deviceId: "phone-1", sender: "16449999", body: kbSms, receivedAt })
        yield* eventually("the failed write logged", Effect.sync(() => logs.some((line) => line.includes("handed over were not written"))))
        yield* sql`ALTER TABLE recon.balance_pending_away RENAME TO balance_pending`
        assert.strictEqual((yield* smsById(first)).status, "received", "left for a pass")
        assert.include(kicked, "parse_loop", "a pass is asked for")
        // No pass runs here: only the hand-over can read the next SMS, so it must still be alive.
        const other = kbSms.replace("홍길동", "김철수")
        const next = yield* storeSms("16449999", other, receivedAt)
        yield* inbox.hand({ id: next, deviceId: "phone-1", sender: "16449999", body: other, receivedAt })
        yield* eventually("the next handed SMS parsed", Effect.map(smsById(next), (row) => row.status === "parsed"))
        yield* pass
        assert.strictEqual((yield* smsById(first)).status, "parsed", "the pass read the SMS the failed write left")
      })).pipe(Effect.provide(services))
    }), 60_000)

  it.live("an SMS handed over right after a template was added, before any pass, is read with the new template", () =>
    Effect.gen(function*() {
      const services = yield* onePassSetup("parse-handed-new", [], [])
      yield* Effect.scoped(Effect.gen(function*() {
        const pass = yield* ParseLoop.start
        yield* pass
        const id = yield* addTemplate({ bank: "한빛상호", sender: "01055556666", rule: "송금인:(?P<name>[^\\n]+)\\n금액:(?P<amount>[\\d,]+)원" })
        const text = "[한빛상호] 입금 확정\n송금인:김하나\n금액:7,700원"
        const receivedAt = new Date()
        const sms = yield* storeSms("01055556666", text, receivedAt)
        yield* (yield* ParseInbox).hand({ id: sms, deviceId: "phone-1", sender: "01055556666", body: text, receivedAt })
        yield* eventually("read", Effect.map(smsById(sms), (row) => row.status !== "received"))
        assert.deepInclude(yield* smsById(sms), { status: "parsed", template_id: id, payer_name: "김하나", amount: "7700.00" })
      })).pipe(Effect.provide(services))
    }), 60_000)

  it.live("places each deposit and withdrawal it writes in its account's balances: a message withheld is a gap, the same message handed over later closes it", () =>
    Effect.gen(function*() {
      const services = yield* onePassSetup("parse-balances", [], [])
      yield* Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pass = yield* ParseLoop.start
        const account = "352-****-7417-43"
        // NH농협's layout, deposits and withdrawals alike (the corpus's).
        const nh = (word: "입금" | "출금", amount: string, at: string, name: string, balance: string) =>
          `[Web발신]\n농협 ${word}${amount}원\n${at} ${account} ${name} 잔액${balance}원`
        const received = (minute: number) => new Date(Date.parse("2026-07-09T05:00:00Z") + minute * 60_000)
        const first = yield* storeSms("15882100", nh("입금", "50,000", "07/09 14:00", "김민준", "1,050,000"), received(0))
        const withheld = nh("출금", "12,000", "07/09 14:07", "쿠팡", "1,038,000")
        const third = yield* storeSms("15882100", nh("입금", "300,000", "07/09 14:14", "이서연", "1,338,000"), received(14))
        yield* pass
        const gaps = () => sql<{ after_sms_id: string; before_sms_id: string; unexplained: string; closed_by_sms_id: string | null }>`
          SELECT g.after_sms_id::text, g.before_sms_id::text, g.unexplained::text, g.closed_by_sms_id::text
          FROM recon.balance_gap AS g JOIN recon.balance_account AS a ON a.id = g.account_id WHERE a.account = ${account} ORDER BY g.id`
        // Placed a moment after the write, off the money path.
        yield* eventually("the gap opened", Effect.map(gaps(), (rows) => rows.length > 0))
        assert.deepStrictEqual((yield* gaps()).map((g) => [Number(g.after_sms_id), Number(g.before_sms_id), Number(g.unexplained), g.closed_by_sms_id]),
          [[first, third, -12000, null]])
        // The withdrawal arrives late (the gateway re-sends it) and is handed over by the push endpoint.
        const late = yield* storeSms("15882100", withheld, received(7))
        yield* (yield* ParseInbox).hand({ id: late, deviceId: "phone-1", sender: "15882100", body: withheld, receivedAt: received(7) })
        yield* eventually("the handed withdrawal read", Effect.map(smsById(late), (row) => row.status !== "received"))
        assert.strictEqual((yield* smsById(late)).status, "ignored")
        yield* eventually("the gap closed", Effect.map(gaps(), (rows) => rows.every((g) => g.closed_by_sms_id !== null)))
        assert.deepStrictEqual((yield* gaps()).map((g) => g.closed_by_sms_id === null ? null : Number(g.closed_by_sms_id)), [late])
        // Nothing left pending once placed.
        assert.deepStrictEqual(yield* sql`SELECT sms_id FROM recon.balance_pending`, [])
      })).pipe(Effect.provide(services))
    }), 60_000)

  it.live("a failure to place a message's balance never holds the SMS back: it is written all the same, the fact kept pending, and a pass gives it up only when it fails alone again", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const services = yield* onePassSetup("parse-balance-fails", logs, [])
      yield* Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`CREATE FUNCTION recon.refuse_entry() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`)
        yield* sql.unsafe(`CREATE TRIGGER refuse_entry BEFORE INSERT ON recon.balance_entry FOR EACH ROW EXECUTE FUNCTION recon.refuse_entry()`)
        const pass = yield* ParseLoop.start
        const text = "[Web발신]\n농협 입금50,000원\n07/09 14:00 352-****-1212-12 김민준 잔액1,050,000원"
        const sms = yield* storeSms("15882100", text, new Date())
        yield* pass
        assert.deepInclude(yield* smsById(sms), { status: "parsed", payer_name: "김민준", amount: "50000.00" })
        yield* eventually("the failure logged", Effect.sync(() => logs.some((line) => line.startsWith("Warn") && line.includes(`SMS ${sms} not placed yet`))))
        // Nothing given up on a first failure (a lost connection, a killed worker look the same).
        const pending = () => Effect.map(sql<{ sms_id: string }>`SELECT sms_id::text FROM recon.balance_pending ORDER BY sms_id`, (rows) => rows.map((r) => Number(r.sms_id)))
        assert.deepStrictEqual(yield* pending(), [sms])
        // Handed over by the push endpoint: the same.
        const handed = yield* storeSms("15882100", text.replace("김민준", "이서연"), new Date())
        yield* (yield* ParseInbox).hand({ id: handed, deviceId: "phone-1", sender: "15882100", body: text.replace("김민준", "이서연"), receivedAt: new Date() })
        yield* eventually("the handed SMS written", Effect.map(smsById(handed), (row) => row.status === "parsed"))
        yield* eventually("the handed fact kept pending", Effect.map(pending(), (ids) => ids.length === 2))
        // Left behind, still refused when tried alone by a pass: given up, one by one, with an error each.
        yield* sql`UPDATE recon.balance_pending SET created_at = now() - interval '31 seconds'`
        yield* Effect.scoped(Effect.flatMap(ParseLoop.start, (again) => again))
        assert.deepStrictEqual(yield* pending(), [])
        for (const id of [sms, handed]) assert.isTrue(logs.some((line) => line.startsWith("Error") && line.includes(`SMS ${id} not placed in its account after a second try`)), String(id))
        assert.deepStrictEqual(yield* sql`SELECT sms_id FROM recon.balance_entry`, [])
      })).pipe(Effect.provide(services))
    }), 60_000)

  it.live("a placement that failed once (a refusal that has passed) is placed by a later pass: nothing given up", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const services = yield* onePassSetup("parse-balance-retry", logs, [])
      yield* Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`CREATE FUNCTION recon.refuse_entry() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`)
        yield* sql.unsafe(`CREATE TRIGGER refuse_entry BEFORE INSERT ON recon.balance_entry FOR EACH ROW EXECUTE FUNCTION recon.refuse_entry()`)
        const pass = yield* ParseLoop.start
        const sms = yield* storeSms("15882100", "[Web발신]\n농협 입금50,000원\n07/09 14:00 352-****-5656-56 김민준 잔액1,050,000원", new Date())
        yield* pass
        yield* eventually("the failure logged", Effect.sync(() => logs.some((line) => line.startsWith("Warn") && line.includes(`SMS ${sms} not placed yet`))))
        yield* sql.unsafe(`DROP TRIGGER refuse_entry ON recon.balance_entry`)
        yield* sql`UPDATE recon.balance_pending SET created_at = now() - interval '31 seconds'`
        yield* Effect.scoped(Effect.flatMap(ParseLoop.start, (again) => again))
        assert.deepStrictEqual((yield* sql<{ sms_id: string }>`SELECT sms_id::text FROM recon.balance_entry`).map((r) => Number(r.sms_id)), [sms])
        assert.deepStrictEqual(yield* sql`SELECT sms_id FROM recon.balance_pending`, [])
      })).pipe(Effect.provide(services))
    }), 60_000)

  it.live("a balance fact written but not placed (its worker stopped in between) is placed by a later pass, once", () =>
    Effect.gen(function*() {
      const services = yield* onePassSetup("parse-balance-left", [], [])
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const text = "[Web발신]\n농협 입금50,000원\n07/09 14:00 352-****-3434-34 김민준 잔액1,050,000원"
        const sms = yield* storeSms("15882100", text, new Date())
        // The loop stops right after its pass: the write committed, the placer never ran.
        yield* Effect.scoped(Effect.flatMap(ParseLoop.start, (pass) => pass))
        assert.strictEqual((yield* smsById(sms)).status, "parsed")
        const entries = () => sql<{ sms_id: string }>`SELECT sms_id::text FROM recon.balance_entry`
        assert.deepStrictEqual(yield* entries(), [])
        assert.deepStrictEqual((yield* sql<{ sms_id: string }>`SELECT sms_id::text FROM recon.balance_pending`).map((r) => Number(r.sms_id)), [sms])
        // Not yet left behind: a pass leaves it to its placer.
        yield* Effect.scoped(Effect.flatMap(ParseLoop.start, (pass) => pass))
        assert.deepStrictEqual(yield* entries(), [])
        // Half a minute later it is: the next pass places it, and takes it off the list.
        yield* sql`UPDATE recon.balance_pending SET created_at = now() - interval '31 seconds'`
        yield* Effect.scoped(Effect.flatMap(ParseLoop.start, (pass) => pass))
        assert.deepStrictEqual((yield* entries()).map((r) => Number(r.sms_id)), [sms])
        assert.deepStrictEqual(yield* sql`SELECT sms_id FROM recon.balance_pending`, [])
      }).pipe(Effect.provide(services))
    }), 60_000)

  it.live("a template added or changed in SQL by hand, not through recon_service, is used from the next pass (the table's version moved)", () =>
    Effect.gen(function*() {
      const services = yield* onePassSetup("parse-by-hand", [], [])
      yield* Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pass = yield* ParseLoop.start
        // A layout the built-in reader refuses (two names before the amount): only a template reads it.
        const text = "[한빛상호] 이체입금\n의뢰인 김하나 수취인 한빛상사\n7,700\n잔고 120,000"
        const before = yield* storeSms("01055556666", text, new Date())
        yield* pass
        assert.strictEqual((yield* smsById(before)).status, "parse_failed")
        const id = yield* addTemplate({ bank: "한빛상호", sender: "01055556666", rule: "의뢰인 (?P<name>\\S+) 수취인[^\\n]*\\n(?P<amount>\\d)" })
        const first = yield* storeSms("01055556666", text, new Date())
        yield* pass
        assert.deepInclude(yield* smsById(first), { status: "parsed", template_id: id, amount: "7.00" })
        // The rule corrected in place: the next pass compiles it again.
        yield* sql`UPDATE recon.shooter_template_recharge SET rule = ${"의뢰인 (?P<name>\\S+) 수취인[^\\n]*\\n(?P<amount>[\\d,]+)"} WHERE id = ${id}`
        const second = yield* storeSms("01055556666", text, new Date())
        yield* pass
        assert.deepInclude(yield* smsById(second), { status: "parsed", template_id: id, payer_name: "김하나", amount: "7700.00" })
      })).pipe(Effect.provide(services))
    }), 60_000)

  it.effect("reads `12/31 23:59` received at 00:01 on New Year's Day in the year before (TestClock)", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const services = yield* onePassSetup("parse-year", logs, [])
      yield* TestClock.setTime(Date.parse("2027-01-01T00:01:00+09:00"))
      yield* Effect.gen(function*() {
        const now = DateTime.toDateUtc(yield* DateTime.now)
        const lastYear = yield* storeSms("15778000", "신한 12/31 23:59 입금 10,000 홍길동", now)
        const thisYear = yield* storeSms("15778000", "신한 01/01 00:00 입금 20,000 홍길동", now)
        // A phone clock a minute behind the bank's: still this year.
        const ahead = yield* storeSms("15778000", "신한 01/01 00:02 입금 30,000 홍길동", now)
        yield* Effect.scoped(Effect.flatMap(ParseLoop.start, (pass) => pass))
        assert.strictEqual((yield* smsById(lastYear)).parse_detail.time, "2026-12-31T23:59:00+09:00")
        assert.strictEqual((yield* smsById(thisYear)).parse_detail.time, "2027-01-01T00:00:00+09:00")
        assert.strictEqual((yield* smsById(ahead)).txn_at?.toISOString(), "2026-12-31T15:02:00.000Z")
      }).pipe(Effect.provide(services))
    }), 60_000)
})
