// Benchmark of rule validation's bound (figures printed, nothing asserted): for the built-in
// templates, a few lax rules a model might write and rules near and past the bound, the steps of
// RE2's machine a character (what validation counts, src/parse/RuleCost.ts) beside what reading
// a 2,000-character text takes in time here, and what one validation costs.
// node bench/rules.ts   — no database.
import { Result } from "effect"
import { cpus, loadavg } from "node:os"
import { RE2JS } from "re2js"
import { builtins0012 as builtins } from "../src/db/BuiltinTemplates.ts"
import { knownNonDeposits } from "../src/parse/NonDeposits.ts"
import { readingSteps } from "../src/parse/RuleCost.ts"
import { normalizeSmsText } from "../src/domain/SmsText.ts"
import { compileRule, estimateRuleSize, maxRuleSize, maxStepsPerChar, probeOf, validateRule } from "../src/parse/TemplateRule.ts"

const report = (line: string) => console.log(line)
/** The fastest of `tries` runs, in milliseconds (a pause of the process spoils one, not all). */
const fastest = (run: () => void, tries = 5): number => {
  let best = Number.POSITIVE_INFINITY
  for (let i = 0; i < tries; i++) {
    const started = performance.now()
    run()
    best = Math.min(best, performance.now() - started)
  }
  return best
}

report(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`)

const known = probeOf(knownNonDeposits.map((m) => normalizeSmsText(m.text)).join("\n"))
const kbSample = "[Web발신]\n[KB]01/20 10:13\n971372**874\n박희자\n입금\n141,000\n잔액1,033,072"
const nested = (unit: string) => {
  let rule = "(?P<name>a)(?P<amount>\\d)"
  while (estimateRuleSize(rule + unit) <= maxRuleSize) rule += unit
  return rule
}
const rows: ReadonlyArray<{ readonly label: string; readonly rule: string; readonly sample: string }> = [
  { label: "plain `name 입금 amount`", rule: "(?P<name>[^\\n]+?)\\s*입금\\s*(?P<amount>\\d{1,3}(?:,\\d{3})+|\\d+)", sample: kbSample },
  ...builtins.map((t) => ({ label: `built-in ${t.key}`, rule: t.rule, sample: t.sample })),
  { label: "lax: .{0,50} around the groups", rule: ".{0,50}(?P<name>[^\\n]{1,50})\\n입금\\n(?P<amount>[\\d,]{1,20}).{0,50}", sample: kbSample },
  { label: "lax: (?s).{0,100} before the groups", rule: "(?s).{0,100}(?P<name>[^\\n]{1,50})\\n입금\\n(?P<amount>[\\d,]{1,20})", sample: kbSample },
  { label: "[^\\n]{0,200} twice", rule: "(?P<name>[^\\n]{0,200})\\n입금\\n(?P<amount>[\\d,]+)[^\\n]{0,200}", sample: kbSample },
  { label: "(?s).{0,150} before the groups", rule: "(?s).{0,150}(?P<name>[^\\n]{1,50})\\n입금\\n(?P<amount>[\\d,]{1,20})", sample: kbSample },
  { label: "nested (?:[^x]{1,5}){1,4} to the size bound", rule: nested("(?:[^x]{1,5}){1,4}"), sample: `입금 a1 ${"가나다 ".repeat(100)}` }
]

report(`bound: ${maxStepsPerChar} steps a character on a ${known.length.toLocaleString("en")}-character text (its sample repeated; the known non-deposit messages)`)
report("rule | program | steps/char sample | steps/char known | reading the sample repeated (stops at its match) | reading the known messages | one validation | verdict")
for (const { label, rule, sample } of rows) {
  const re = RE2JS.compile(rule)
  const compiled = compileRule(rule)
  if (Result.isFailure(compiled)) {
    report(`${label} | refused at compile: ${compiled.failure.detail}`)
    continue
  }
  const probe = probeOf(normalizeSmsText(sample))
  const onSample = readingSteps(re, probe).steps
  const onKnown = readingSteps(re, known).steps
  const extract = compiled.success.extract
  const sampleMs = fastest(() => extract(probe))
  const knownMs = fastest(() => extract(known))
  let verdict = ""
  const validation = fastest(() => {
    const checked = validateRule(rule, sample)
    verdict = Result.isSuccess(checked) ? "accepted" : checked.failure.detail.slice(0, 90)
  }, 3)
  report([
    label,
    re.programSize(),
    (onSample / probe.length).toFixed(1),
    (onKnown / known.length).toFixed(1),
    `${sampleMs.toFixed(2)} ms`,
    `${knownMs.toFixed(2)} ms`,
    `${validation.toFixed(1)} ms`,
    verdict
  ].join(" | "))
}
