// deploy/prometheus with Prometheus' own tool: `promtool check rules` and `check config`, and
// `promtool test rules` runs alerts.test.yml (each alert fires on its condition, after its `for`,
// and not on healthy series). Debian's `prometheus` package brings promtool (.ci/run installs it);
// without it those tests are skipped and say so. The cross-checks below need nothing: every alert
// has a unit test and a runbook section, and reads only DESIGN section 11's families.
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { parse } from "yaml"

const root = join(import.meta.dirname, "../..")
const dir = join(root, "deploy/prometheus")
const promtool = spawnSync("promtool", ["--version"]).status === 0
if (!promtool) console.warn("promtool not found (apt-get install -y prometheus): promtool checks of deploy/prometheus skipped")

const run = (...args: Array<string>) => {
  const result = spawnSync("promtool", args, { cwd: dir, encoding: "utf8" })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

const rules = parse(readFileSync(join(dir, "alerts.yml"), "utf8")).groups.flatMap((group: any) => group.rules) as Array<any>
const tests = parse(readFileSync(join(dir, "alerts.test.yml"), "utf8")).tests as Array<any>

describe.skipIf(!promtool)(`deploy/prometheus with promtool${promtool ? "" : " (skipped: no promtool; apt-get install -y prometheus)"}`, () => {
  it("promtool check rules alerts.yml", () => {
    const { status, output } = run("check", "rules", "alerts.yml")
    assert.strictEqual(status, 0, output)
    assert.include(output, `SUCCESS: ${rules.length} rules found`)
  })

  it("promtool check config prometheus.yml (with its rule file)", () => {
    const { status, output } = run("check", "config", "prometheus.yml")
    assert.strictEqual(status, 0, output)
  })

  it("promtool test rules alerts.test.yml", () => {
    const { status, output } = run("test", "rules", "alerts.test.yml")
    assert.strictEqual(status, 0, output)
  })
})

describe("deploy/prometheus/alerts.yml", () => {
  it("has a unit test in which each alert fires", () => {
    const fired = new Set(tests.flatMap((test) => test.alert_rule_test.filter((t: any) => t.exp_alerts.length > 0).map((t: any) => t.alertname)))
    assert.deepStrictEqual(rules.filter((rule) => !fired.has(rule.alert)).map((rule) => rule.alert), [])
  })

  it("names a runbook section of docs/OPERATIONS.md for each alert", () => {
    const anchors = new Set(
      [...readFileSync(join(root, "docs/OPERATIONS.md"), "utf8").matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!.toLowerCase().replace(/[^a-z0-9 _-]/g, "").replaceAll(" ", "-"))
    )
    for (const rule of rules) {
      assert.match(rule.annotations.runbook, /^docs\/OPERATIONS\.md#/, rule.alert)
      assert.isTrue(anchors.has(rule.annotations.runbook.split("#")[1]), `${rule.alert}: ${rule.annotations.runbook} is no heading of docs/OPERATIONS.md`)
      assert.include(["page", "ticket"], rule.labels.severity, rule.alert)
    }
  })

  it("reads only the families of DESIGN section 11 (with the exporter's suffixes) and `up`", () => {
    const families = [
      "recon_sms_status_changes",
      "recon_parse",
      "recon_match_decisions",
      "recon_wallet_call_seconds",
      "recon_loop_pass_seconds",
      "recon_loop_fresh",
      "recon_loop_restarts",
      "recon_http_request_seconds"
    ]
    const names = new Set(rules.flatMap((rule) => [...String(rule.expr).matchAll(/(?<=^|[\s(])(recon_[a-z_]+|up)(?=[{[\s)]|$)/gm)].map((m) => m[1]!)))
    assert.isAtLeast(names.size, 10)
    const unknown = [...names].filter((name) => name !== "up" && !families.some((family) => new RegExp(`^${family}(_total|_bucket|_count|_sum)?$`).test(name)))
    assert.deepStrictEqual(unknown, [])
  })
})
