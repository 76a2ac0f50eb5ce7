// The plugin's components (dist/components/index.js, the same code its NocoBase client bundle
// registers) drawn by React 18 in a plain page, for when the real NocoBase client cannot draw a
// page's blocks. React is installed once into the NocoBase cache (npm: react, react-dom 18.3.1).
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { join, resolve } from "node:path"
import { assert } from "@effect/vitest"
import type { Browser } from "playwright-core"
import { cacheDir } from "./RealNocoBase.ts"

const reactDir = (): string => {
  const dir = join(cacheDir(), "react-page")
  if (!existsSync(join(dir, "node_modules", "react-dom", "umd", "react-dom.production.min.js"))) {
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "package.json"), "{\"name\":\"recon-react-page\",\"private\":true}")
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "react@18.3.1", "react-dom@18.3.1"], { cwd: dir, timeout: 300_000 })
  }
  return join(dir, "node_modules")
}

const ROWS = [
  ["attachment_url", { uiKind: "attachment_url", preview: "image" }, "/logo.svg"],
  ["url", { uiKind: "url", preview: "link", copyable: true, ellipsis: true }, "example.com/docs"],
  ["email", { uiKind: "email", preview: "link" }, "ops@example.com"],
  ["phone", { uiKind: "phone", preview: "link" }, "+82 2-1234-5678"],
  ["domain", { uiKind: "domain", preview: "link", validator: "domain" }, "Example.org"],
  ["unix_timestamp", { uiKind: "unix_timestamp" }, 1709251200],
  ["richtext_html", { uiKind: "richtext_html", ellipsis: true }, "<p>Hello <b>world</b> &amp; friends: a long HTML note that runs past the width of its column</p><script>alert(1)</script>"],
  ["multi_select", { uiKind: "multi_select" }, ["vip", "new"]],
  ["m2m_array", { uiKind: "m2m_array" }, [{ label: "Kim" }, { label: "Lee" }]],
  ["internal_path", { uiKind: "internal_path", copyable: true }, "/deposits/42"]
] as const

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>SvcPrettyField</title>
<style>body{font:14px system-ui,sans-serif;margin:24px}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:6px 10px;text-align:left;max-width:340px}</style>
<script src="/react.js"></script><script src="/react-dom.js"></script><script src="/components.js"></script></head>
<body><h3>SvcPrettyField, SvcPostAction (plugin-svc-preset-actions)</h3><div id="root"></div><script>
const h = React.createElement, C = SvcComponents
const rows = ${JSON.stringify(ROWS).replaceAll("</", "<\\/")}
function Edit() {
  const [value, setValue] = React.useState(1709251200)
  return h("span", null, h(C.SvcPrettyField, { uiKind: "unix_timestamp", readPretty: false, value, onChange: setValue }), " stored: ", h("code", { id: "stored" }, String(value)))
}
function Action() {
  const [said, setSaid] = React.useState("")
  return h("span", null, C.recordAction("POST", { url: "/internal/settle", title: "Settle", confirm: "Settle this record?" }, {
    record: { guid: "g-1", amount: "12.50" },
    send: async (method, url, record) => { const r = await fetch(url, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(record) }); return { status: r.status, body: await r.json() } },
    ask: async (question) => window.confirm(question),
    tell: (ok, message) => setSaid((ok ? "✔ " : "✖ ") + message)
  }), " ", h("span", { id: "said" }, said))
}
ReactDOM.createRoot(document.getElementById("root")).render(h("table", null, h("tbody", null,
  ...rows.map(([kind, props, value]) => h("tr", { key: kind }, h("th", null, kind), h("td", null, h(C.SvcPrettyField, { fieldName: kind, ...props, value })))),
  h("tr", null, h("th", null, "edit drawer (Asia/Seoul)"), h("td", null, h(Edit))),
  h("tr", null, h("th", null, "SvcPostAction"), h("td", null, h(Action)))
)))
</script></body></html>`

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="96" height="40"><rect width="96" height="40" rx="6" fill="#1677ff"/><text x="48" y="26" font-size="16" text-anchor="middle" fill="#fff">logo</text></svg>`

/** Draws every case in Chromium, checks what each shows, saves a screenshot at `screenshot`. */
export const drawComponents = async (browser: Browser, componentsJs: string, screenshot: string) => {
  const modules = reactDir()
  const posted: Array<unknown> = []
  const files: Record<string, [string, string]> = {
    "/react.js": [join(modules, "react/umd/react.production.min.js"), "text/javascript"],
    "/react-dom.js": [join(modules, "react-dom/umd/react-dom.production.min.js"), "text/javascript"],
    "/components.js": [resolve(componentsJs), "text/javascript"]
  }
  const server = createServer((req, res) => {
    if (req.url === "/internal/settle" && req.method === "POST") {
      let body = ""
      req.on("data", (chunk) => body += chunk)
      req.on("end", () => {
        posted.push(JSON.parse(body))
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: { message: "settled g-1" } }))
      })
      return
    }
    if (req.url === "/logo.svg") return void res.writeHead(200, { "content-type": "image/svg+xml" }).end(LOGO)
    const file = files[req.url ?? ""]
    if (file !== undefined) return void res.writeHead(200, { "content-type": file[1] }).end(readFileSync(file[0]))
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE)
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const port = (server.address() as { port: number }).port
  const context = await browser.newContext({ viewport: { width: 900, height: 720 }, timezoneId: "Europe/Berlin", locale: "en-US" })
  try {
    const page = await context.newPage()
    const problems: Array<string> = []
    page.on("console", (message) => message.type() === "error" && problems.push(message.text()))
    page.on("pageerror", (error) => problems.push(String(error)))
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.waitForSelector(".svc-pretty-field", { timeout: 30_000 }).catch((error) => { throw new Error(`${error}\n${problems.join("\n")}`) })
    const cell = (kind: string) => page.locator(`.svc-pretty-field[data-ui-kind="${kind}"]`).first()
    assert.strictEqual(await cell("attachment_url").locator("img").getAttribute("src"), "/logo.svg")
    assert.strictEqual(await cell("url").locator("a").getAttribute("href"), "https://example.com/docs")
    assert.strictEqual(await cell("url").locator("button.svc-pretty-copy").count(), 1)
    assert.strictEqual(await cell("email").locator("a").getAttribute("href"), "mailto:ops@example.com")
    assert.strictEqual(await cell("phone").locator("a").getAttribute("href"), "tel:+82212345678")
    assert.strictEqual(await cell("domain").locator("a").getAttribute("href"), "https://example.org")
    assert.strictEqual(await cell("unix_timestamp").innerText(), "2024-03-01 09:00:00") // Asia/Seoul, not the browser's Berlin
    const html = await cell("richtext_html").innerText()
    assert.match(html, /^Hello world & friends/)
    assert.notInclude(html, "alert")
    assert.strictEqual(await cell("richtext_html").locator("span").first().evaluate((element) => (globalThis as any).getComputedStyle(element).textOverflow), "ellipsis")
    assert.strictEqual(await cell("multi_select").innerText(), "vip, new")
    assert.strictEqual(await cell("m2m_array").innerText(), "Kim, Lee")
    assert.strictEqual(await cell("internal_path").locator("button.svc-pretty-copy").count(), 1)

    // the edit drawer: a wall time typed is read in Asia/Seoul and written back as unix seconds
    const input = page.locator(".svc-pretty-time-input input")
    assert.strictEqual(await input.inputValue(), "2024-03-01 09:00:00")
    await input.fill("2024-03-02 00:00:00")
    await input.blur()
    await page.waitForFunction(() => (globalThis as any).document.getElementById("stored").textContent === "1709305200")

    // the record action: refused confirmation sends nothing; accepted, POSTs the record and shows the answer's message
    page.once("dialog", (dialog) => void dialog.dismiss())
    await page.locator(".svc-post-action").click()
    await page.waitForTimeout(300)
    assert.deepStrictEqual(posted, [])
    page.once("dialog", (dialog) => {
      assert.strictEqual(dialog.message(), "Settle this record?")
      void dialog.accept()
    })
    await page.locator(".svc-post-action").click()
    await page.waitForFunction(() => (globalThis as any).document.getElementById("said").textContent === "✔ settled g-1")
    assert.deepStrictEqual(posted, [{ guid: "g-1", amount: "12.50" }])

    await page.screenshot({ path: screenshot, fullPage: true })
    assert.deepStrictEqual(problems.filter((text) => /#130|Element type is invalid/.test(text)), [], problems.join("\n"))
    assert.deepStrictEqual(problems, [])
  } finally {
    await context.close()
    await new Promise<void>((done) => server.close(() => done()))
  }
}
