// The dashboard in a real headless Chromium: sign in, the six counters live over the websocket,
// a change in the database shown after a sync, recon shown unavailable when it is, and the
// worker's loops from a fake worker health port.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { existsSync } from "node:fs"
import { type Browser, chromium, type Page } from "playwright-core"
import { createMigratedDatabase } from "../support/database.ts"
import { RECON_TOKEN, type Running, startRecon } from "../support/recon.ts"
import { addSms, adminEnv, createOperator, fakeWorker, PASSWORD, setDeposits, startAdmin, sync } from "./support.ts"

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
  page.getByTestId(testId).filter({ hasText: typeof text === "string" ? new RegExp(`^${text}$`) : text }).waitFor({ timeout: 5_000 })

const signIn = async (page: Page, base: string) => {
  await page.goto(base)
  await page.getByTestId("account").fill("grace")
  await page.getByTestId("password").fill(PASSWORD)
  await page.getByTestId("signin-submit").click()
  await page.getByTestId("board").waitFor({ state: "visible", timeout: 5_000 })
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
