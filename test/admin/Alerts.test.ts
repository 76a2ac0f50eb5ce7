// The console's alerts: POST /api/alerts/list derived from the state (a phone silent past its
// registration's silence_alert_s, an SMS waiting for a person past SVC_REVIEW_WAIT_ALERT_S, a gap
// in an account's balances), each new alert sent to the Telegram chat once (across passes,
// restarts and admin processes, and after a failed send), and the keys that configure them; the
// accounts' balance continuity passed on from recon.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Result, Scope } from "effect"
import { FetchHttpClient } from "effect/http"
import { Alerts, notifyOnce } from "../../src/admin/Alerts.ts"
import { TelegramClient } from "../../src/clients/TelegramClient.ts"
import { readAdminSettings } from "../../src/admin/Settings.ts"
import { fromEnv } from "../../src/config/Keys.ts"
import { AlertStore } from "../../src/admin/AlertStore.ts"
import { BalanceStore } from "../../src/db/BalanceStore.ts"
import type { BalanceFact } from "../../src/domain/BalanceSequence.ts"
import { layerFor, runSql } from "../support/database.ts"
import { apiError, type FakeTelegram, fakeTelegram, TOKEN } from "../support/fakeTelegram.ts"
import type { Running } from "../support/recon.ts"
import { eventuallyAsync } from "../support/time.ts"
import { adminEnv, consoleBed, request, sql, startAdmin } from "./support.ts"

let db: string
let recon: Running
let admin: Running
let token: string
let telegram: FakeTelegram
const scope = Scope.makeUnsafe()

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000)

let close: () => Promise<void>

beforeAll(async () => {
  ({ admin, close, db, recon, token } = await consoleBed("admin_alerts"))
  telegram = await Effect.runPromise(Scope.provide(fakeTelegram(), scope))
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, { _tag: "Success", value: undefined } as never))
  await close()
})

const register = (deviceId: string, silenceS: number | null, createdAt: Date, enabled = true) =>
  sql(db, (sql) => sql`INSERT INTO recon.shooter_push (device_id, name, format, silence_alert_s, enabled, created_at)
    VALUES (${deviceId}, ${`${deviceId} phone`}, 'smsforwarder', ${silenceS}, ${enabled}, ${createdAt})`)

const addSms = (deviceId: string, status: string, receivedAt: Date) =>
  sql(db, (sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
    VALUES (${deviceId}, '15882100', ${`sms ${Math.random()}`}, ${`n${Math.random()}`}, ${receivedAt}, ${status}) RETURNING id`, (rows) => Number(rows[0]!.id)))

const alerts = async () => {
  const answer = await request(admin.url, "/api/alerts/list", { token, body: {} })
  assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
  return answer.body.data as Array<{ kind: string; subject: string; since: string; detail: string }>
}

describe("POST /api/alerts/list", () => {
  it("a phone silent past its window and an SMS waiting past SVC_REVIEW_WAIT_ALERT_S are open alerts, as soon as they are true", async () => {
    const registered = minutesAgo(120)
    await register("quiet-phone", 600, registered)
    await register("busy-phone", 600, registered)
    await addSms("busy-phone", "approved", minutesAgo(1))
    const lastOfSleepy = minutesAgo(30)
    await register("sleepy-phone", 900, registered)
    await addSms("sleepy-phone", "approved", lastOfSleepy)
    await register("no-alert-phone", null, registered)
    await register("off-phone", 60, registered, false)
    const old = minutesAgo(11)
    const waiting = await addSms("busy-phone", "manual_review", old)
    await addSms("busy-phone", "unmatched", minutesAgo(5))
    await addSms("busy-phone", "ignored", minutesAgo(60))
    await addSms("busy-phone", "approved", minutesAgo(60))

    const open = await alerts()
    const byKey = new Map(open.map((a) => [`${a.kind} ${a.subject}`, a]))
    assert.deepStrictEqual([...byKey.keys()].sort(), ["phone_silent quiet-phone", "phone_silent sleepy-phone", `review_waiting sms:${waiting}`])
    const quiet = byKey.get("phone_silent quiet-phone")!
    assert.strictEqual(Date.parse(quiet.since), registered.getTime() + 600_000)
    assert.match(quiet.detail, /quiet-phone phone \(quiet-phone\): no SMS for more than 10 min since it was registered/)
    assert.strictEqual(Date.parse(byKey.get("phone_silent sleepy-phone")!.since), lastOfSleepy.getTime() + 900_000)
    const review = byKey.get(`review_waiting sms:${waiting}`)!
    assert.strictEqual(Date.parse(review.since), old.getTime() + 600_000)
    assert.match(review.detail, new RegExp(`SMS #${waiting} \\(manual_review\\) has waited for a person more than 10 min`))
    // Newest condition first.
    assert.deepStrictEqual(open.map((a) => a.since), open.map((a) => a.since).sort().reverse())

    // A new SMS from the quiet phone ends its alert at once; another silent phone opens one at once.
    await addSms("quiet-phone", "approved", new Date())
    await register("new-quiet", 1, new Date(Date.now() - 2_000))
    const after = (await alerts()).map((a) => `${a.kind} ${a.subject}`)
    assert.notInclude(after, "phone_silent quiet-phone")
    assert.include(after, "phone_silent new-quiet")
  })

  it("takes {} only, and a session", async () => {
    assert.strictEqual((await request(admin.url, "/api/alerts/list", { token, body: { kind: "x" } })).http, 400)
    assert.strictEqual((await request(admin.url, "/api/alerts/list", { token, body: [] })).http, 400)
    assert.strictEqual((await request(admin.url, "/api/alerts/list", { body: {} })).http, 401)
  })
})

/** One notifier pass as an admin process makes it (each call a fresh "process": nothing kept in memory). */
const pass = (chatId = "-1001234") =>
  Effect.runPromise(Effect.gen(function*() {
    const client = yield* TelegramClient.make({ apiUrl: telegram.apiUrl, token: Redacted.make(TOKEN) })
    yield* notifyOnce(chatId).pipe(Effect.provideService(TelegramClient, client))
  }).pipe(
    Effect.provide(Alerts.layer(600).pipe(Layer.provideMerge(AlertStore.layer), Layer.provideMerge(layerFor(db)), Layer.provideMerge(FetchHttpClient.layer)))
  ))

describe("alerts sent to the chat", () => {
  it("sends each new alert once: again and after a restart nothing; a new alert alone; none that closed before it was sent", async () => {
    await sql(db, (sql) => sql`DELETE FROM admin.alert_notice`)
    const before = telegram.sent.length
    await pass()
    assert.strictEqual(telegram.sent.length, before + 1)
    const first = telegram.sent.at(-1)!
    assert.strictEqual(first.chat_id, "-1001234")
    assert.match(first.text, /^recon 알림 \d+건 \/ \d+ new alerts?\n/)
    for (const subject of ["quiet", "sleepy-phone", "new-quiet"]) assert.include(first.text, subject)
    await pass()
    await pass()
    assert.strictEqual(telegram.sent.length, before + 1)

    const id = await addSms("busy-phone", "parse_failed", minutesAgo(15))
    await pass()
    assert.strictEqual(telegram.sent.length, before + 2)
    assert.match(telegram.sent.at(-1)!.text, new RegExp(`^recon 알림 1건 / 1 new alert\\n• 처리 대기 \\(waiting for a person\\) sms:${id}: SMS #${id} \\(parse_failed\\)`))

    // Telegram fails: nothing is marked sent; the next pass waits (backoff), then it goes, once.
    const late = await addSms("busy-phone", "need_check", minutesAgo(12))
    telegram.failNext(apiError(500, "Internal Server Error"))
    await pass()
    assert.strictEqual(telegram.sent.length, before + 2)
    const [notice] = await sql(db, (sql) => sql<{ attempts: number; sent: boolean; due: boolean }>`SELECT attempts, sent_at IS NOT NULL AS sent,
      next_at <= now() AS due FROM admin.alert_notice WHERE subject = ${`sms:${late}`}`)
    assert.deepStrictEqual(notice, { attempts: 1, sent: false, due: false })
    await pass()
    assert.strictEqual(telegram.sent.length, before + 2)
    await sql(db, (sql) => sql`UPDATE admin.alert_notice SET next_at = now() WHERE subject = ${`sms:${late}`}`)
    await pass()
    assert.strictEqual(telegram.sent.length, before + 3)
    assert.include(telegram.sent.at(-1)!.text, `sms:${late}`)

    // Closed before it could be sent: never sent.
    const gone = await addSms("busy-phone", "unmatched", minutesAgo(13))
    telegram.failNext(apiError(502, "Bad Gateway"))
    await pass()
    await sql(db, (sql) => Effect.all([
      sql`UPDATE recon.shooter_sms SET status = 'rejected' WHERE id = ${gone}`,
      sql`UPDATE admin.alert_notice SET next_at = now()`
    ]))
    await pass()
    assert.strictEqual(telegram.sent.length, before + 3)
  })

  it("two admin processes at once send it once", async () => {
    const before = telegram.sent.length
    const id = await addSms("busy-phone", "unmatched", minutesAgo(14))
    await Promise.all([pass(), pass(), pass()])
    const mentions = telegram.sent.slice(before).filter((m) => m.text.includes(`sms:${id}:`))
    assert.strictEqual(mentions.length, 1)
  })

  it("admin with SVC_ALERT_TELEGRAM_CHAT_ID sends by itself, within its first pass", async () => {
    const id = await addSms("busy-phone", "unmatched", minutesAgo(16))
    const before = telegram.sent.length
    const notifying = await startAdmin(db, adminEnv(recon.url, {
      SVC_ALERT_TELEGRAM_CHAT_ID: "@recon_alerts",
      SVC_RECON_CHATBOT_TOKEN: TOKEN,
      SVC_RECON_CHATBOT_API_URL: telegram.apiUrl
    }))
    try {
      await eventuallyAsync("the alert sent to Telegram", async () => telegram.sent.slice(before).some((m) => m.text.includes(`sms:${id}:`)), { everyMs: 100 })
      const sent = telegram.sent.slice(before).filter((m) => m.text.includes(`sms:${id}:`))
      assert.strictEqual(sent.length, 1)
      assert.strictEqual(sent[0]!.chat_id, "@recon_alerts")
      assert.notInclude(JSON.stringify(telegram.calls), TOKEN)
    } finally {
      await notifying.close()
    }
  })
})

/** A KB국민 SMS of the account and its balance fact, as parse_loop will hand it to BalanceStore. */
const kbFact = async (direction: "in" | "out", amount: number, balance: number, receivedAt: Date, account = "834702**717"): Promise<BalanceFact> => {
  const id = await addSms("kb-phone", direction === "in" ? "approved" : "ignored", receivedAt)
  return {
    smsId: id, receivedAt, deviceId: "kb-phone", sender: "16449999", bank: "KB국민", account,
    direction, amount: String(amount), balance: String(balance)
  }
}
const record = (facts: ReadonlyArray<BalanceFact>) => runSql(db, Effect.flatMap(BalanceStore.make, (store) => store.record(facts)))

/** The account's open gaps found `seconds` earlier (time passing, as far as the grace period is concerned). */
const age = (account: string, seconds: number) =>
  sql(db, (sql) => sql`UPDATE recon.balance_gap AS g SET since = since - make_interval(secs => ${seconds})
    FROM recon.balance_account AS a WHERE a.id = g.account_id AND a.account = ${account} AND g.closed_at IS NULL`)

describe("balance gaps", () => {
  it("an SMS missing from an account's balances is an alert once past the grace period, sent to the chat once, gone when the SMS arrives", async () => {
    const first = await kbFact("in", 50_000, 1_050_000, minutesAgo(6))
    // The phone never forwarded this one (yet): the next balance is 30,000 more than the SMS say.
    const withheld = await kbFact("in", 30_000, 1_080_000, minutesAgo(4))
    const next = await kbFact("out", 8_110, 1_071_890, minutesAgo(2))
    await record([first, next])
    // Within SVC_BALANCE_GAP_GRACE_S (120 s) of being found, a gap is no alert: a message a moment late closes it first.
    assert.deepStrictEqual((await alerts()).filter((a) => a.kind === "balance_gap"), [])
    await age("834702**717", 121)

    const gaps = (await alerts()).filter((a) => a.kind === "balance_gap")
    assert.deepStrictEqual(gaps.map((a) => [a.subject, a.detail]), [[
      "KB국민 834702**717",
      `30000 won came in that no SMS between #${first.smsId} and #${next.smsId} tells of; an SMS is missing (never arrived, or never read)`
    ]])
    assert.isAtMost(Date.parse(gaps[0]!.since), Date.now())

    const before = telegram.sent.length
    await pass()
    await pass()
    const told = telegram.sent.slice(before).filter((m) => m.text.includes("834702**717"))
    assert.strictEqual(told.length, 1)
    assert.include(told[0]!.text, "• 잔액 불일치 (balance gap) KB국민 834702**717: 30000 won came in")

    // The console's accounts view: recon's /accounts/list, passed on.
    const accounts = await request(admin.url, "/api/accounts/list", { token, body: { has_gaps: true } })
    assert.strictEqual(accounts.http, 200, JSON.stringify(accounts.body))
    assert.deepStrictEqual(accounts.body.data.items.map((a: any) => [a.bank, a.account, a.last_balance, a.gaps.map((g: any) => [g.after_sms_id, g.before_sms_id, g.unexplained])]), [
      ["KB국민", "834702**717", "1071890", [[first.smsId, next.smsId, "30000"]]]
    ])
    assert.strictEqual((await request(admin.url, "/api/accounts/list", { token, body: { has_gaps: "yes" } })).http, 400)
    assert.strictEqual((await request(admin.url, "/api/accounts/list", { body: {} })).http, 401)

    // The gateway re-sends it: the gap closes, and so does the alert.
    await record([withheld])
    assert.deepStrictEqual((await alerts()).filter((a) => a.kind === "balance_gap"), [])
    assert.deepStrictEqual((await request(admin.url, "/api/accounts/list", { token, body: { has_gaps: true } })).body.data.items, [])
  })

  it("money that left unseen says so", async () => {
    const first = await kbFact("in", 10_000, 2_010_000, minutesAgo(3), "834702**999")
    const next = await kbFact("in", 20_000, 2_000_000, minutesAgo(1), "834702**999")
    await record([first, next])
    await age("834702**999", 121)
    const gap = (await alerts()).find((a) => a.kind === "balance_gap")
    assert.include(gap?.detail, `30000 won went out that no SMS between #${first.smsId} and #${next.smsId} tells of`)
  })

  it("an operator explains a gap through the console's API: no alert any more, listed as explained, audited with the operator; undone, it alerts again", async () => {
    const account = "834702**555"
    const first = await kbFact("in", 10_000, 5_010_000, minutesAgo(9), account)
    const next = await kbFact("in", 20_000, 4_930_000, minutesAgo(8), account)
    await record([first, next])
    await age(account, 600)
    const alerting = () => alerts().then((open) => open.filter((a) => a.kind === "balance_gap" && a.subject.endsWith(account)))
    assert.strictEqual((await alerting()).length, 1)
    const listed = async () => (await request(admin.url, "/api/accounts/list", { token, body: { has_gaps: true, page_size: 200 } })).body.data.items
      .find((a: any) => a.account === account)
    const gap = (await listed()).gaps[0]
    assert.strictEqual((await request(admin.url, "/api/accounts/gap/explain", { body: { gap_id: gap.id, reason: "sweep" } })).http, 401)
    assert.strictEqual((await request(admin.url, "/api/accounts/gap/explain", { token, body: { gap_id: gap.id, reason: "" } })).http, 400)
    assert.strictEqual((await request(admin.url, "/api/accounts/gap/explain", { token, body: { gap_id: gap.id, reason: "x", operator: "someone" } })).http, 400)
    assert.strictEqual((await request(admin.url, "/api/accounts/gap/explain", { token, body: { gap_id: 987_654_321, reason: "x" } })).http, 404)
    const explained = await request(admin.url, "/api/accounts/gap/explain", { token, body: { gap_id: gap.id, reason: "monthly sweep to savings", amount: "-100000" } })
    assert.strictEqual(explained.http, 200, JSON.stringify(explained.body))
    assert.deepInclude(explained.body.data.explained, { reason: "monthly sweep to savings", amount: "-100000", operator: "ada" })
    assert.deepStrictEqual(await alerting(), [])
    assert.deepInclude((await listed()).gaps[0].explained, { reason: "monthly sweep to savings", operator: "ada" })
    const undone = await request(admin.url, "/api/accounts/gap/unexplain", { token, body: { gap_id: gap.id } })
    assert.strictEqual(undone.http, 200, JSON.stringify(undone.body))
    assert.strictEqual(undone.body.data.explained, null)
    assert.strictEqual((await alerting()).length, 1)
    const actions = await request(admin.url, "/api/accounts/actions", { token, body: { account_id: (await listed()).id } })
    assert.deepStrictEqual(actions.body.data.items.map((a: any) => [a.action, a.operator, a.gap_id, a.reason]),
      [["unexplain", "ada", gap.id, null], ["explain", "ada", gap.id, "monthly sweep to savings"]])
  })

  it("an operator merges two phones' device-accounts of one 신한 account through the console's API, and undoes it", async () => {
    const shinhan = async (device: string, amount: number, balance: number, receivedAt: Date): Promise<BalanceFact> => ({
      smsId: await addSms(device, "approved", receivedAt), receivedAt, deviceId: device, sender: "15778000", bank: "신한",
      direction: "in", amount: String(amount), balance: String(balance)
    })
    // Phone A misses the second message; phone B has only that one and the third.
    const at = [minutesAgo(7), minutesAgo(6), minutesAgo(5)]
    await record([await shinhan("shinhan-a", 1_000, 101_000, at[0]!), await shinhan("shinhan-a", 3_000, 106_000, at[2]!)])
    await record([await shinhan("shinhan-b", 2_000, 103_000, at[1]!), await shinhan("shinhan-b", 3_000, 106_000, new Date(at[2]!.getTime() + 1000))])
    const mine = async () => (await request(admin.url, "/api/accounts/list", { token, body: { page_size: 200 } })).body.data.items
      .filter((a: any) => a.device_id?.startsWith("shinhan-")).sort((x: any, y: any) => x.device_id.localeCompare(y.device_id))
    const [a, b] = await mine()
    assert.deepStrictEqual([a.gaps.length, b.gaps.length], [1, 0])
    const merged = await request(admin.url, "/api/accounts/merge", { token, body: { account_id: b.id, into_id: a.id } })
    assert.strictEqual(merged.http, 200, JSON.stringify(merged.body))
    assert.deepStrictEqual([merged.body.data.gaps, merged.body.data.last_balance], [[], "106000"])
    assert.strictEqual((await request(admin.url, "/api/accounts/merge", { token, body: { account_id: a.id, into_id: a.id } })).http, 409)
    assert.strictEqual((await request(admin.url, "/api/accounts/unmerge", { token, body: { account_id: a.id } })).http, 409)
    const undone = await request(admin.url, "/api/accounts/unmerge", { token, body: { account_id: b.id } })
    assert.strictEqual(undone.http, 200, JSON.stringify(undone.body))
    const [a2, b2] = await mine()
    assert.deepStrictEqual([a2.gaps.length, b2.gaps.length, b2.merged_into], [1, 0, null])
    const actions = await request(admin.url, "/api/accounts/actions", { token, body: { account_id: b.id } })
    assert.deepStrictEqual(actions.body.data.items.map((x: any) => [x.action, x.operator]), [["unmerge", "ada"], ["merge", "ada"]])
  })
})

describe("configuration", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSync(Effect.result(fromEnv({ ...adminEnv("http://127.0.0.1:1"), ...env }, readAdminSettings())))

  it("reads the second-approval amount, the waiting time and the alert chat", () => {
    const settings = read({ SVC_REVIEW_SECOND_APPROVAL_OVER: "1,000,000", SVC_REVIEW_WAIT_ALERT_S: "300", SVC_ALERT_TELEGRAM_CHAT_ID: "-100123", SVC_RECON_CHATBOT_TOKEN: TOKEN })
    assert.isTrue(Result.isSuccess(settings))
    if (Result.isSuccess(settings)) {
      assert.deepStrictEqual(settings.success.review, { secondApprovalOver: "1000000", waitAlertS: 300, balanceGapGraceS: 120 })
      assert.deepInclude(settings.success.alertChat, { chatId: "-100123", apiUrl: "https://api.telegram.org" })
    }
    const defaults = read({})
    assert.isTrue(Result.isSuccess(defaults) && defaults.success.review.secondApprovalOver === undefined && defaults.success.review.waitAlertS === 600 &&
      defaults.success.alertChat === undefined)
  })

  it("says what is wrong, one line per key, never the token", () => {
    const bad = read({ SVC_REVIEW_SECOND_APPROVAL_OVER: "lots", SVC_REVIEW_WAIT_ALERT_S: "-1", SVC_ALERT_TELEGRAM_CHAT_ID: "alerts" })
    assert.isTrue(Result.isFailure(bad))
    if (Result.isFailure(bad)) {
      assert.deepStrictEqual([...bad.failure.problems].sort(), [
        "SVC_ALERT_TELEGRAM_CHAT_ID: expected a numeric chat id or a channel's @username, got \"alerts\"",
        "SVC_REVIEW_SECOND_APPROVAL_OVER: expected an amount in won above zero (e.g. 1000000 or 1,000,000), got \"lots\"",
        "SVC_REVIEW_WAIT_ALERT_S: expected a whole number from 1 to 2592000, got \"-1\""
      ])
    }
    const noToken = read({ SVC_ALERT_TELEGRAM_CHAT_ID: "12345" })
    assert.isTrue(Result.isFailure(noToken) &&
      noToken.failure.problems.includes("SVC_RECON_CHATBOT_TOKEN: required when SVC_ALERT_TELEGRAM_CHAT_ID is set (alerts are sent by the chat-bot)"))
  })
})
