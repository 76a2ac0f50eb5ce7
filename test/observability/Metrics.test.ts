// GET /metrics of real processes (DESIGN section 11): `all` (the four ports, one process, one
// registry) with every family and its labels from start-up, accepted by `promtool check metrics`,
// routes as patterns, the process's memory; a real Prometheus scraping the four ports and answering queries about SMS
// pushed meanwhile; a single service serving only its own process's metrics; SVC_METRICS=off.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { loops } from "../../src/loops/index.ts"
import { type AllProcess, pushFundingSms, startAll, trustedPhone } from "../support/allProcess.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { smsState } from "../support/match.ts"
import { runCommandToEnd, spawnCommand, waitForUrl } from "../support/process.ts"
import { RECON_TOKEN } from "../support/recon.ts"
import { eventuallyAsync } from "../support/time.ts"

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** The samples of a Prometheus text exposition (label values here have no escaped quotes). */
const samples = (text: string): Array<Sample> =>
  text.split("\n").flatMap((line) => {
    const found = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (found === null) return []
    const labels = Object.fromEntries([...(found[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]))
    return [{ name: found[1]!, labels, value: Number(found[3]) }]
  })

const types = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]))

const scrape = async (base: string) => {
  const response = await fetch(`${base}/metrics`).catch((error) => {
    throw new Error(`GET ${base}/metrics: ${error}\n${all?.output() ?? ""}`)
  })
  return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() }
}

const onPath = (binary: string) => spawnSync("sh", ["-c", `command -v ${binary}`]).status === 0

/** The families of DESIGN section 11 (with the exporter's suffixes), their type and labels. */
const FAMILIES = {
  recon_sms_status_changes_total: { type: "counter", labels: ["status"] },
  recon_parse_total: { type: "counter", labels: ["outcome", "reader"] },
  recon_match_decisions_total: { type: "counter", labels: ["decision"] },
  recon_wallet_call_seconds: { type: "histogram", labels: ["outcome"] },
  recon_loop_pass_seconds: { type: "histogram", labels: ["loop"] },
  recon_loop_fresh: { type: "gauge", labels: ["loop"] },
  recon_loop_restarts_total: { type: "counter", labels: ["loop"] },
  recon_http_request_seconds: { type: "histogram", labels: ["service", "route", "status"] }
} as const

const LOOPS = loops.map((loop) => loop.name)

const scope = Scope.makeUnsafe()
let db: string
let all: AllProcess
beforeAll(async () => {
  db = await createMigratedDatabase("metrics")
  await trustedPhone(db, "metrics-phone-7", "15778000")
  all = await Effect.runPromise(Scope.provide(startAll(db), scope))
}, 120_000)
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

describe("GET /metrics under `all`", () => {
  it("every family and label on each of the four ports from start-up (restarts at 0 per loop); routes are patterns", async () => {
    const ports = [all.recon, all.push, all.admin, all.wallet]
    for (const port of ports) {
      const { contentType, status, text } = await scrape(port)
      assert.strictEqual(status, 200)
      assert.match(contentType ?? "", /^text\/plain; version=0\.0\.4/)
      const declared = types(text)
      const found = samples(text)
      for (const [family, { labels, type }] of Object.entries(FAMILIES)) {
        assert.strictEqual(declared[family], type, `${family} on ${port}`)
        const series = found.filter((s) => s.name === family || s.name.startsWith(`${family}_`))
        assert.isNotEmpty(series, family)
        for (const s of series) for (const label of labels) assert.property(s.labels, label, `${family} has ${label}`)
      }
      const restarts = found.filter((s) => s.name === "recon_loop_restarts_total")
      assert.deepStrictEqual(restarts.map((s) => [s.labels.loop, s.value]).sort(), LOOPS.map((loop) => [loop, 0]).sort())
      // Ready: every loop has passed, so each is fresh and has a pass duration.
      assert.deepStrictEqual(found.filter((s) => s.name === "recon_loop_fresh").map((s) => [s.labels.loop, s.value]).sort(), LOOPS.map((loop) => [loop, 1]).sort())
      for (const loop of LOOPS) assert.isTrue(found.some((s) => s.name === "recon_loop_pass_seconds_count" && s.labels.loop === loop && s.value >= 1), loop)
      // The process's memory, read at the scrape: what /proc says, give or take the scrape's own allocations.
      assert.strictEqual(declared.process_resident_memory_bytes, "gauge")
      assert.strictEqual(declared.nodejs_heap_used_bytes, "gauge")
      const rss = found.find((s) => s.name === "process_resident_memory_bytes")!.value
      // The process serving the ports (`all` runs as a child of the command it was started with).
      const { pid } = await (await fetch(`${all.push}/health/live`)).json() as { pid: number }
      const procRss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024
      assert.isAbove(rss, 30e6, `${port}: rss ${rss}`)
      assert.isBelow(Math.abs(rss - procRss) / procRss, 0.2, `${port}: rss ${rss} against /proc's ${procRss}`)
      const heap = found.find((s) => s.name === "nodejs_heap_used_bytes")!.value
      assert.isTrue(heap > 1e6 && heap < rss, `${port}: heap ${heap}`)
      assert.sameMembers(found.filter((s) => s.name === "recon_sms_status_changes_total").map((s) => s.labels.status!), [
        "received", "need_check", "rejected", "duplicate", "ignored", "parse_failed", "parsed", "unmatched", "manual_review", "approving", "approved"
      ])
    }

    // Traffic: an SMS to approval, a push for an unknown device, a path no service has.
    const smsId = await pushFundingSms(db, all.push, "metrics-phone-7", "15778000", "이순신", 41000)
    await fetch(`${all.push}/push/no-such-device-31337`, { method: "POST", body: "from=1&content=x" })
    await fetch(`${all.wallet}/no/such/path/31337`)
    await eventuallyAsync("the SMS approved", async () => (await smsState(db, smsId)).status === "approved", { timeoutMs: 60_000, everyMs: 100 })
    const { text } = await scrape(all.admin)
    const found = samples(text)
    const value = (name: string, labels: Record<string, string>) =>
      found.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0
    for (const status of ["received", "parsed", "approving", "approved"]) assert.isAtLeast(value("recon_sms_status_changes_total", { status }), 1, status)
    assert.isAtLeast(value("recon_parse_total", { outcome: "parsed", reader: "template" }), 1)
    assert.isAtLeast(value("recon_match_decisions_total", { decision: "approve" }), 1)
    assert.isAtLeast(value("recon_wallet_call_seconds_count", { outcome: "agreed" }), 1)
    assert.isAtLeast(value("recon_http_request_seconds_count", { service: "recon_worker", route: "/push/:device_id", status: "200" }), 1)
    assert.isAtLeast(value("recon_http_request_seconds_count", { service: "recon_worker", route: "/push/:device_id", status: "404" }), 1)
    assert.isAtLeast(value("recon_http_request_seconds_count", { service: "wallet_service", route: "/internal/wallet/deposit/agree", status: "200" }), 1)
    assert.isAtLeast(value("recon_http_request_seconds_count", { service: "wallet_service", route: "unmatched", status: "404" }), 1)
    // Bounded label values: no raw path, no device id.
    assert.notInclude(text, "31337")
    assert.notInclude(text, "metrics-phone-7")
  }, 120_000)

  const promtool = onPath("promtool")
  it.skipIf(!promtool)(`promtool check metrics accepts every port's /metrics${promtool ? "" : " — SKIPPED: no promtool on PATH (apt-get install -y prometheus)"}`, async () => {
    for (const port of [all.recon, all.push, all.admin, all.wallet]) {
      const lint = spawnSync("promtool", ["check", "metrics"], { input: (await scrape(port)).text, encoding: "utf8" })
      assert.strictEqual(lint.status, 0, `promtool on ${port}: ${lint.stdout}${lint.stderr}`)
    }
  })

  const prometheus = onPath("prometheus")
  it.skipIf(!prometheus)(`a real Prometheus scrapes the four ports every second and answers queries on every family${prometheus ? "" : " — SKIPPED: no prometheus on PATH (apt-get install -y prometheus)"}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "recon-prometheus-"))
    const port = await freePort()
    const targets = [all.recon, all.push, all.admin, all.wallet].map((base) => base.replace("http://", ""))
    writeFileSync(join(dir, "prometheus.yml"), [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "scrape_configs:",
      "  - job_name: recon",
      "    static_configs:",
      `      - targets: [${targets.map((t) => `"${t}"`).join(", ")}]`
    ].join("\n"))
    const server = spawn("prometheus", [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`
    ], { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    server.stdout.on("data", (chunk) => (output += chunk))
    server.stderr.on("data", (chunk) => (output += chunk))
    const api = `http://127.0.0.1:${port}`
    const query = async (promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> => {
      const response = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(() => undefined)
      if (response === undefined || !response.ok) return []
      const body = await response.json() as { status: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } }
      return body.status === "success" ? body.data.result : []
    }
    const eventually = (what: string, check: () => Promise<boolean>) =>
      eventuallyAsync(what, check, { timeoutMs: 90_000, everyMs: 250, detail: () => `prometheus said:\n${output.slice(-2000)}` })
    try {
      assert.isTrue(await waitForUrl(`${api}/-/ready`, 60_000), output)
      await eventually("the four targets up", async () => (await query("up == 1")).length === 4)
      const approved = async () => Number((await query(`sum(recon_sms_status_changes_total{status="approved"})`))[0]?.value[1] ?? -1)
      await eventually("the counter scraped", async () => (await approved()) >= 0)
      const before = await approved()
      await pushFundingSms(db, all.push, "metrics-phone-7", "15778000", "유관순", 52000)
      await eventually("the approval counted in Prometheus", async () => (await approved()) > before)
      for (const family of Object.keys(FAMILIES)) {
        const name = FAMILIES[family as keyof typeof FAMILIES].type === "histogram" ? `${family}_bucket` : family
        await eventually(`${name} in Prometheus on every target`, async () =>
          new Set((await query(`count by (instance) (${name})`)).map((r) => r.metric.instance)).size === 4)
      }
      await eventually("the webhook's latency by route pattern", async () =>
        (await query(`sum(rate(recon_http_request_seconds_count{service="recon_worker",route="/push/:device_id"}[1m]))`)).length === 1)
      assert.deepStrictEqual((await query(`recon_loop_restarts_total > 0`)), [])
    } finally {
      server.kill("SIGTERM")
      await new Promise((resolve) => server.once("exit", resolve))
      rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})

describe("GET /metrics of a single service", () => {
  const startWallet = async (env: Record<string, string>) => {
    const port = await freePort()
    const wallet = spawnCommand(["wallet"], { DATABASE_URL: db, SVC_WALLET_PORT: String(port), SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN, ...env })
    const base = `http://127.0.0.1:${port}`
    assert.isTrue(await waitForUrl(`${base}/health`, 60_000), wallet.output())
    return { base, stop: async () => (wallet.child.kill("SIGTERM"), await wallet.exited) }
  }

  it("serves its own process's metrics; SVC_METRICS=off answers /metrics as an unknown route; a bad value is exit 2", async () => {
    const on = await startWallet({})
    try {
      await fetch(`${on.base}/health`)
      const { text } = await scrape(on.base)
      const services = new Set(samples(text).filter((s) => s.name === "recon_http_request_seconds_count").map((s) => s.labels.service))
      assert.deepStrictEqual([...services], ["wallet_service"])
      assert.notInclude(text, "recon_loop_restarts_total")
    } finally {
      assert.strictEqual(await on.stop(), 0)
    }
    const off = await startWallet({ SVC_METRICS: "off" })
    try {
      const response = await fetch(`${off.base}/metrics`)
      assert.strictEqual(response.status, 404)
      assert.deepStrictEqual(await response.json(), { status: 404, msg: "not_found", data: { detail: "no such route", issues: [] } })
    } finally {
      assert.strictEqual(await off.stop(), 0)
    }
    const bad = await runCommandToEnd(["wallet"], { DATABASE_URL: db, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN, SVC_METRICS: "maybe" })
    assert.strictEqual(bad.status, 2)
    assert.include(bad.stderr, "config: SVC_METRICS: expected one of on, off, true, false, 1, 0, got \"maybe\"")
  }, 120_000)
})
