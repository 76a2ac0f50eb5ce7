// The dashboard in a real headless Chromium: sign in, the six counters live over the websocket,
// a change in the database shown after a sync, recon shown unavailable when it is, the worker's
// loops from a fake worker health port, the review queue (approve a candidate, reject, pass) live
// without a reload, and a phone-width screen without sideways scrolling. With UPDATE_SCREENSHOTS=1
// it writes the README's screenshots to docs/.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdirSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { createMigratedDatabase } from "../support/database.ts"
import { RECON_TOKEN, type Running, startRecon } from "../support/recon.ts"
import { addSms, adminEnv, allLoops, createOperator, fakeWorker, PASSWORD, setDeposits, sql, startAdmin, sync } from "./support.ts"

/** The README's screenshots are rewritten with UPDATE_SCREENSHOTS=1; otherwise they go to a temporary directory. */
const DOCS = process.env.UPDATE_SCREENSHOTS === "1"
  ? fileURLToPath(new URL("../../docs/", import.meta.url))
  : `${mkdtempSync(join(tmpdir(), "recon-screens-"))}/`

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) console.log(`Dashboard.test.ts: skipping the browser test, ${CHROMIUM} does not exist`)

let db: string
let recon: Running
let browser: Browser | undefined
const closing: Array<() => unknown> = []

beforeAll(async () => {
  db = await createMigratedDatabase("admin_dashboard")
  recon = await startRecon(db)
  await createOperator(db, "grace")
  await setDeposits(db, 4, 1)
  await addSms(db, ["need_check", "need_check", "parse_failed", "unmatched", "duplicate"])
})
afterAll(async () => {
  for (const close of closing.reverse()) await close()
  await browser?.close()
  await recon.close()
})

const textOf = (page: Page, testId: string) => page.getByTestId(testId).textContent()

/** Waits (bounded) until the element's text is exactly `text`: the page changes when a message arrives. */
const shows = (page: Page, testId: string, text: string | RegExp) =>
  page.getByTestId(testId).filter({ hasText: typeof text === "string" ? new RegExp(`^${text}$`) : text }).waitFor({ timeout: 10_000 })

const signIn = async (page: Page, base: string) => {
  await page.goto(base)
  await page.getByTestId("account").fill("grace")
  await page.getByTestId("password").fill(PASSWORD)
  await page.getByTestId("signin-submit").click()
  await page.getByTestId("board").waitFor({ state: "visible", timeout: 15_000 })
}

describe("dashboard in Chromium", () => {
  it.skipIf(!hasChromium)("signs in, shows the counters live, follows a sync, and shows the worker's loops", async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
    })
    const worker = await fakeWorker(200, true)
    closing.push(() => worker.server.close())
    const admin = await startAdmin(db, adminEnv(recon.url, { WORKER_HEALTH_URL: worker.url }))
    closing.push(admin.close)
    const page = await browser.newPage()
    const problems: Array<string> = []
    page.on("pageerror", (error) => problems.push(error.message))
    page.on("console", (message) => message.type() === "error" && problems.push(message.text()))

    // A wrong password first: the form says so and stays.
    await page.goto(admin.url)
    await page.getByTestId("account").fill("grace")
    await page.getByTestId("password").fill("not the password")
    await page.getByTestId("signin-submit").click()
    await shows(page, "signin-error", "wrong account or password")

    // The browser logs the refused sign-in's 401 itself; from here on nothing may go wrong.
    problems.length = 0
    await signIn(page, admin.url)
    assert.strictEqual(await textOf(page, "operator"), "grace")
    await shows(page, "ws-state", "live")
    await shows(page, "value-pending_deposit_cnt", "4")
    const counters = {
      pending_deposit_cnt: "4",
      manual_review_cnt: "1",
      sms_need_check_cnt: "2",
      parse_fail_cnt: "1",
      unmatched_sms_cnt: "1",
      duplicate_sms_cnt: "1"
    }
    for (const [key, value] of Object.entries(counters)) assert.strictEqual(await textOf(page, `value-${key}`), value, key)
    assert.strictEqual(await textOf(page, "recon-state"), "recon_service: available")

    await shows(page, "worker-status", /^ready \(pid 4242/)
    const loop = page.getByTestId("loop-order_match_loop")
    assert.deepStrictEqual(await loop.locator("td").allTextContents().then((cells) => cells.slice(0, 4)), ["order_match_loop", "running", "fresh", "2"])
    assert.strictEqual(await page.getByTestId("loop-parse_loop").locator("td[data-field=state]").textContent(), "running")

    await setDeposits(db, 6, 3)
    await addSms(db, ["duplicate", "duplicate"])
    assert.strictEqual((await sync(admin.url, RECON_TOKEN)).http, 200)
    await shows(page, "value-pending_deposit_cnt", "6")
    await shows(page, "value-manual_review_cnt", "3")
    await shows(page, "value-duplicate_sms_cnt", "3")

    // Sign out and back in: the session is in this tab only.
    await page.getByTestId("signout").click()
    await page.getByTestId("signin").waitFor({ state: "visible", timeout: 5_000 })
    assert.deepStrictEqual(problems, [])
    console.log(`dashboard showed ${JSON.stringify({ ...counters, pending_deposit_cnt: "4 -> 6", manual_review_cnt: "1 -> 3", duplicate_sms_cnt: "1 -> 3" })}, worker ready with 2 loops`)
  })

  it.skipIf(!hasChromium)("shows recon unavailable and the worker unreachable, with admin's own counters still live", async () => {
    browser ??= await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
    })
    const admin = await startAdmin(db, adminEnv("http://127.0.0.1:9", { WORKER_HEALTH_URL: "http://127.0.0.1:9" }))
    closing.push(admin.close)
    const page = await browser.newPage()
    await signIn(page, admin.url)
    await shows(page, "value-pending_deposit_cnt", /^\d+$/)
    for (const key of ["sms_need_check_cnt", "parse_fail_cnt", "unmatched_sms_cnt", "duplicate_sms_cnt"]) {
      assert.strictEqual(await textOf(page, `value-${key}`), "unavailable", key)
    }
    assert.strictEqual(await textOf(page, "recon-state"), "recon_service: unavailable (recon_service is unreachable)")
    await shows(page, "worker-status", "unreachable \\(no connection to the worker's health port\\)")
  })
})

/** A browser page of the given size with its errors collected. */
const newPage = async (width: number, height: number) => {
  browser ??= await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
  })
  const page = await browser.newPage({ viewport: { width, height } })
  const problems: Array<string> = []
  page.on("pageerror", (error) => problems.push(error.message))
  page.on("console", (message) => message.type() === "error" && problems.push(message.text()))
  return { page, problems }
}

const query = <A>(f: Parameters<typeof sql<A>>[1]) => sql(db, f)

/** What parse and match leave behind: an SMS in a review status, and the deposits flagged for it. */
const reviewSms = (status: string, body: string, payer: string | null, amount: string | null) => {
  const [sender, bank] = body.includes("농협") ? ["15882100", "NH농협"] : body.includes("신한") ? ["15778000", "신한"] : ["16449999", "KB국민"]
  return query((sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
      (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount)
    VALUES ('demo-phone', ${sender}, ${body}, ${body.replace(/\s/g, "")}, now(), ${status}, ${payer === null ? null : bank},
      ${payer}, ${amount}) RETURNING id`, (rows) => Number(rows[0]!.id)))
}

const pendingDeposit = (name: string, amount: string, taskStatus: number | null) =>
  query((sql) => Effect.gen(function*() {
    // Ids after setDeposits' player 1, which it sets by hand.
    const [player] = yield* sql<{ id: bigint }>`INSERT INTO recon.player (id, name)
      VALUES ((SELECT coalesce(max(id), 0) + 1 FROM recon.player), ${name}) RETURNING id`
    const [deposit] = yield* sql<{ id: bigint }>`INSERT INTO recon.deposit (player_id, from_bank_owner, amount, task_status)
      VALUES (${player!.id}, ${name}, ${amount}, ${taskStatus}) RETURNING id`
    return Number(deposit!.id)
  }))

describe("review queue in Chromium", () => {
  it.skipIf(!hasChromium)("shows a manual review live, approves a candidate, follows it to approved, rejects and passes others, by mouse and keyboard", async () => {
    const worker = await fakeWorker(200, true, allLoops)
    closing.push(() => worker.server.close())
    const admin = await startAdmin(db, adminEnv(recon.url, { WORKER_HEALTH_URL: worker.url }))
    closing.push(admin.close)
    await query((sql) => sql`DELETE FROM recon.shooter_sms WHERE status IN ('need_check', 'unmatched', 'manual_review')`)
    await setDeposits(db, 2, 0)
    const { page, problems } = await newPage(1280, 800)
    await signIn(page, admin.url)
    await shows(page, "ws-state", "live")
    await page.getByTestId("review-empty").waitFor({ state: "visible", timeout: 5_000 })

    // Two players share a name and each has a pending deposit of the amount: matching routes the SMS
    // to manual review, flags both deposits, and tells admin (sync).
    const first = await pendingDeposit("김민준", "50000", 6)
    const second = await pendingDeposit("김민준", "50000", 6)
    const review = await reviewSms("manual_review", "[Web발신]\n[KB]11/23 16:02\n834702**717\n김민준\n입금\n50,000\n잔액1,250,000", "김민준", "50000")
    const stray = await reviewSms("unmatched", "[Web발신]\n농협 입금30,000원\n11/23 16:03 352-****-4273-63 이도윤 잔액3,710,000원", "이도윤", "30000")
    const held = await reviewSms("need_check", "[Web발신]\n신한11/23 16:04\n110-496-922482\n입금     70,000\n잔액    870,045\n 박서연", null, null)
    assert.strictEqual((await sync(admin.url, RECON_TOKEN)).http, 200)
    const item = page.getByTestId(`review-${review}`)
    await item.waitFor({ timeout: 5_000 })
    await shows(page, "value-manual_review_cnt", "2")
    await shows(page, "value-pending_deposit_cnt", "4")
    assert.include(await item.locator("[data-field=body]").textContent(), "834702**717")
    assert.strictEqual(await item.locator("[data-field=payer]").textContent(), "김민준")
    assert.strictEqual(await item.locator("[data-field=amount]").textContent(), "50,000")
    assert.strictEqual(await item.locator("input[type=radio]").count(), 2)
    assert.include(await item.getByTestId(`candidate-${review}-${first}`).locator("..").textContent(), `deposit #${first} · 김민준`)
    await page.getByTestId(`review-${stray}`).waitFor()
    await page.getByTestId(`review-${held}`).waitFor()
    await shows(page, "review-counts", /^1 to check · 1 manual review · 1 unmatched/)
    await page.getByTestId(`sms-${review}`).waitFor()
    mkdirSync(DOCS, { recursive: true })
    await page.screenshot({ path: `${DOCS}dashboard.png`, fullPage: true })

    // Approve: nothing to approve until a deposit is chosen; then two clicks.
    assert.isTrue(await page.getByTestId(`approve-${review}`).isDisabled())
    await page.getByTestId(`candidate-${review}-${second}`).check()
    await page.getByTestId(`approve-${review}`).click()
    await shows(page, "review-outcome", `SMS #${review}: approve to deposit #${second} -> approving`)
    await item.waitFor({ state: "detached", timeout: 5_000 })
    await shows(page, "value-manual_review_cnt", "0")
    const row = page.getByTestId(`sms-${review}`).locator("[data-field=status]")
    await row.filter({ hasText: /^approving$/ }).waitFor({ timeout: 5_000 })

    // The worker takes it through the wallet (played here by the database writes they make): the
    // dashboard follows without a reload, and the pending counter moves.
    await query((sql) => Effect.all([
      sql`UPDATE recon.deposit SET status = 'approved', sms_id = ${review}, approved_at = now() WHERE id = ${second}`,
      sql`UPDATE recon.shooter_sms SET status = 'approved' WHERE id = ${review}`
    ]))
    await row.filter({ hasText: /^approved$/ }).waitFor({ timeout: 8_000 })
    await shows(page, "value-pending_deposit_cnt", "3")

    // Reject the unmatched one and pass the held one with the keyboard alone.
    await page.getByTestId(`reject-${stray}`).focus()
    await page.keyboard.press("Enter")
    await page.getByTestId(`review-${stray}`).waitFor({ state: "detached", timeout: 5_000 })
    await shows(page, "value-unmatched_sms_cnt", "0")
    await page.getByTestId(`sms-${stray}`).locator("[data-field=status]").filter({ hasText: /^rejected$/ }).waitFor({ timeout: 5_000 })
    await page.getByTestId(`pass-${held}`).focus()
    await page.keyboard.press("Space")
    await page.getByTestId(`review-${held}`).waitFor({ state: "detached", timeout: 5_000 })
    await shows(page, "review-outcome", `SMS #${held}: pass -> received`)
    await page.getByTestId("review-empty").waitFor({ state: "visible", timeout: 5_000 })

    const decided = await query((sql) => sql<{ sms_id: bigint; operator: string; action: string }>`SELECT sms_id, operator, action
      FROM recon.sms_decision WHERE ${sql.in("sms_id", [review, stray, held])} ORDER BY id`)
    assert.deepStrictEqual(decided.map((d) => [Number(d.sms_id), d.operator, d.action]), [[review, "grace", "approve"], [stray, "grace", "reject"], [held, "grace", "pass"]])
    assert.deepStrictEqual(problems, [])
  })

  it.skipIf(!hasChromium)("fits a 390 px wide phone screen: no sideways scrolling, the loops table inside its card", async () => {
    const worker = await fakeWorker(200, true, allLoops)
    closing.push(() => worker.server.close())
    const admin = await startAdmin(db, adminEnv(recon.url, { WORKER_HEALTH_URL: worker.url }))
    closing.push(admin.close)
    const deposit = await pendingDeposit("최서윤", "1234567", 6)
    await pendingDeposit("최서윤", "1234567", 6)
    const review = await reviewSms("manual_review", "[Web발신]\n[KB]11/23 16:05\n834702**717\n최서윤\n입금\n1,234,567\n잔액12,345,678", "최서윤", "1234567")
    const { page, problems } = await newPage(390, 844)
    await signIn(page, admin.url)
    await page.getByTestId(`review-${review}`).waitFor({ timeout: 8_000 })
    await page.getByTestId(`candidate-${review}-${deposit}`).waitFor()
    await shows(page, "worker-status", /^ready/)
    await page.getByTestId("loop-pushsvc_listener_supervisor").waitFor()
    const widths = await page.evaluate(() => {
      const { document, window } = globalThis as any
      const wrap = document.querySelector("[data-testid=worker-table]")
      const card = document.querySelector("[data-testid=worker-panel]")
      return {
        page: document.documentElement.scrollWidth,
        body: document.body.scrollWidth,
        viewport: window.innerWidth,
        loopsTable: wrap.scrollWidth,
        loopsBox: wrap.clientWidth,
        card: card.getBoundingClientRect().right
      }
    })
    assert.strictEqual(widths.viewport, 390)
    assert.isAtMost(widths.page, widths.viewport, JSON.stringify(widths))
    assert.isAtMost(widths.body, widths.viewport, JSON.stringify(widths))
    assert.isAtMost(widths.loopsTable, widths.loopsBox, JSON.stringify(widths))
    assert.isAtMost(widths.card, widths.viewport, JSON.stringify(widths))
    mkdirSync(DOCS, { recursive: true })
    await page.screenshot({ path: `${DOCS}dashboard-phone.png`, fullPage: true })
    assert.deepStrictEqual(problems, [])
  })
})
