import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { RE2JS } from "re2js"
import { knownNonDeposits } from "../../src/parse/NonDeposits.ts"
import { readingSteps } from "../../src/parse/RuleCost.ts"
import { normalizeSmsText } from "../../src/domain/SmsText.ts"
import {
  compileRule,
  type CompiledRule,
  estimateRuleSize,
  maxRuleSize,
  maxStepsPerChar,
  probeOf,
  type RuleRejected,
  validateRule
} from "../../src/parse/TemplateRule.ts"
import { builtins } from "../support/parse.ts"

const ok = (result: Result.Result<CompiledRule, RuleRejected>): CompiledRule => {
  if (Result.isFailure(result)) assert.fail(`expected the rule to be accepted, got: ${result.failure.detail}`)
  return result.success
}

const rejected = (result: Result.Result<CompiledRule, RuleRejected>): string => {
  if (Result.isSuccess(result)) assert.fail(`expected a rejection of ${result.success.source}`)
  assert.strictEqual(result.failure._tag, "RuleRejected")
  return result.failure.detail
}

describe("compileRule", () => {
  it("accepts both named-group syntaxes and extracts with either", () => {
    for (const rule of ["(?P<name>\\S+) (?P<amount>[\\d,]+)원", "(?<name>\\S+) (?<amount>[\\d,]+)원", "(?<name>\\S+) (?P<amount>[\\d,]+)원"]) {
      const compiled = ok(compileRule(rule))
      assert.strictEqual(compiled.source, rule)
      assert.deepStrictEqual(compiled.extract("입금 홍길동 50,000원"), { name: "홍길동", amount: "50000" })
    }
  })

  it("rejects rules without the name or amount group", () => {
    assert.strictEqual(rejected(compileRule("(?P<name>\\S+) ([\\d,]+)원")), "rule has no (?P<amount>…) group")
    assert.strictEqual(rejected(compileRule("(\\S+) (?<amount>[\\d,]+)원")), "rule has no (?P<name>…) group")
    assert.strictEqual(rejected(compileRule("입금 ([\\d,]+)원")), "rule has no (?P<name>…) and (?P<amount>…) groups")
    // The group name must be a real group, not text that merely looks like one.
    assert.strictEqual(rejected(compileRule("\\(\\?P<name>x\\) (?P<amount>\\d+)")), "rule has no (?P<name>…) group")
  })

  it("rejects what RE2 cannot compile: backreferences, lookaround, syntax errors", () => {
    const cases: ReadonlyArray<[string, string]> = [
      ["(?P<name>\\S+) (?P<amount>\\d+) \\1", "invalid escape sequence: `\\1`"],
      ["(?P<name>\\S+) (?P<amount>\\d+)(?=원)", "(?="],
      ["(?<=입금 )(?P<amount>\\d+) (?P<name>\\S+)", "(?<"],
      ["(?P<name>\\S+ (?P<amount>\\d+)", "missing closing )"],
      ["(?P<name>\\S+) (?P<amount>\\d{1001})", "invalid repeat count"]
    ]
    for (const [rule, fragment] of cases) {
      const detail = rejected(compileRule(rule))
      assert.isTrue(detail.startsWith("rule does not compile: "), detail)
      assert.include(detail, fragment)
      assert.notInclude(detail, "Invalid regular expression") // RE2's reason, not the wrapper's prefix
    }
  })

  it("rejects empty rules and rules over 2,000 characters", () => {
    assert.strictEqual(rejected(compileRule("")), "rule is empty")
    const long = `(?P<name>\\S+) (?P<amount>\\d+)${"x".repeat(2_001)}`
    assert.strictEqual(rejected(compileRule(long)), "rule is longer than 2,000 characters: 2,030 (30 over)")
    const atLimit = `(?P<name>\\S+) (?P<amount>\\d+)`.padEnd(2_000, "x")
    ok(compileRule(atLimit))
  })

  it("runs a catastrophic-backtracking rule in linear time", () => {
    const compiled = ok(compileRule("^(?P<name>(a+)+)(?P<amount>\\d+)$"))
    assert.deepStrictEqual(compiled.extract("aaaa123"), { name: "aaaa", amount: "123" })
    const hostile = `${"a".repeat(200_000)}!`
    // A backtracking engine needs 2^200000 steps here (the test would never end); RE2's machine
    // 11 a character, at most twice its program's size (15 instructions) whatever the text.
    assert.isUndefined(compiled.extract(hostile))
    const re = RE2JS.compile("^(?P<name>(a+)+)(?P<amount>\\d+)$")
    assert.deepStrictEqual(readingSteps(re, hostile), { steps: 2_200_006, characters: 200_001 })
    assert.isAtMost(readingSteps(re, hostile).steps, 2 * re.programSize() * (hostile.length + 1))
    // Plain (a+)+$ as a rule body is fine too once it has its groups.
    const plain = ok(compileRule("(?P<name>x)?(?P<amount>\\d)?(a+)+$"))
    assert.isUndefined(plain.extract(hostile))
  })

  it("extract trims the name, normalises amount and balance, keeps time and account, and needs an amount", () => {
    const compiled = ok(compileRule(
      "(?P<time>\\d\\d/\\d\\d \\d\\d:\\d\\d) (?P<account>\\S+)\\n입금(?P<amount>[^\\n]*)\\n(?P<name>[^\\n]*)(?:\\n잔액(?P<balance>\\S+))?"
    ))
    assert.deepStrictEqual(compiled.extract("[하나]06/12 14:23 123-**-45\n입금 １０，０００원\n  이순신 \n잔액1,000,000원"), {
      name: "이순신",
      amount: "10000",
      time: "06/12 14:23",
      account: "123-**-45",
      balance: "1000000"
    })
    assert.deepStrictEqual(compiled.extract("06/12 14:23 123-**-45\n입금5,000\n이순신"), {
      name: "이순신",
      amount: "5000",
      time: "06/12 14:23",
      account: "123-**-45"
    })
    assert.isUndefined(compiled.extract("06/12 14:23 123-**-45\n입금{{amount}}\n이순신"))
    assert.isUndefined(compiled.extract("06/12 14:23 123-**-45\n입금5,000\n   "))
    assert.isUndefined(compiled.extract("nothing here"))
  })
})

describe("validateRule", () => {
  it("rejects a rule that does not extract name and amount from the sample, saying why", () => {
    const rule = "\\[KB\\]\\S+ \\S+\\n\\S+\\n(?P<name>[^\\n]+)\\n입금\\n(?P<amount>[\\d,]+)"
    const detail = rejected(validateRule(rule, "[신한] 입금 50,000원 홍길동"))
    assert.strictEqual(detail, "rule does not extract name and amount from the sample: it does not match")
    const garbage = rejected(validateRule("(?P<name>\\S+) (?P<amount>\\S+)", "입금 홍길동 오만원"))
    assert.isTrue(garbage.startsWith("rule does not extract name and amount from the sample: "), garbage)
    assert.include(garbage, "not an amount")
    const emptyName = rejected(validateRule("(?P<name>[a-z]*)입금 (?P<amount>[\\d,]+)", "입금 5,000"))
    assert.include(emptyName, "name group captured nothing")
  })

  it("reports compile errors before looking at the sample", () => {
    assert.strictEqual(rejected(validateRule("(\\S+) ([\\d,]+)", "홍길동 5,000")), "rule has no (?P<name>…) and (?P<amount>…) groups")
  })

  it("with rejectNonDeposits, rejects a rule that reads a withdrawal as a deposit", () => {
    const sample = "[Web발신]\n[KB]01/20 10:13\n971372**874\n박희자\n입금\n141,000\n잔액1,033,072"
    const lax = "\\[KB\\]\\S+ \\S+\\n\\S+\\n(?P<name>[^\\n]+)\\n(?:입금|출금)\\n(?P<amount>[\\d,]+)"
    assert.deepStrictEqual(ok(validateRule(lax, sample)).extract(sample), { name: "박희자", amount: "141000" })
    const detail = rejected(validateRule(lax, sample, { rejectNonDeposits: true }))
    assert.isTrue(detail.startsWith("rule extracts a deposit from a known withdrawal"), detail)
    assert.include(detail, "KB국민")
    assert.include(detail, "출금")

    // Any transaction word after 입금 lets a deposit reversal through.
    const reversal = "\\[KB\\]\\S+ \\S+\\n\\S+\\n(?P<name>[^\\n]+)\\n입금\\S*\\n(?P<amount>[\\d,]+)"
    assert.include(rejected(validateRule(reversal, sample, { rejectNonDeposits: true })), "입금취소")

    // A rule matching anything with an amount also catches notices/OTPs: the detail names the kind.
    const anything = "(?P<amount>[\\d,]+)원\\s*(?P<name>\\S+)"
    const notice = rejected(validateRule(anything, "입금 10,000원 홍길동", { rejectNonDeposits: true }))
    assert.match(notice, /^rule extracts a deposit from a known (withdrawal|non-transaction)/)
  })

  // One rule per format, checked against every row of that format in the corpus, and against
  // every known non-deposit message.
  const corpusRules: ReadonlyArray<{
    readonly bank: string
    readonly rule: string
    readonly rows: ReadonlyArray<readonly [text: string, name: string, amount: string]>
  }> = [
    {
      bank: "KB국민",
      rule:
        "\\[KB\\](?P<time>\\d{2}/\\d{2} \\d{2}:\\d{2})\\n(?P<account>\\S+)\\n(?P<name>[^\\n]+)\\n입금\\n(?P<amount>[\\d,]+)(?:\\n잔액(?P<balance>[\\d,]+))?",
      rows: [
        ["[Web발신]\n[KB]01/20 10:13\n971372**874\n박희자\n입금\n141,000\n잔액1,033,072", "박희자", "141000"],
        ["[Web발신]\n[KB]08/18 10:00\n821337**680\n(주)패러블엔터테인먼트\n입금\n1,000,000", "(주)패러블엔터테인먼트", "1000000"],
        ["[Web발신]\n[KB]08/18 10:02\n821337**680\nA&B미디어\n입금\n1,000,002", "A&B미디어", "1000002"],
        ["보낸사람 : 16449999\n[KB]07/04 15:24\n942902**347\n김양곤\n입금\n600,000\n잔액1,320,000", "김양곤", "600000"]
      ]
    },
    {
      bank: "NH농협",
      rule:
        "농협 입금(?P<amount>[\\d,]+)원\\n(?P<time>\\d{2}/\\d{2} \\d{2}:\\d{2}) (?P<account>[\\d*-]+) (?P<name>\\S+)(?: 잔액(?P<balance>[\\d,]+)원)?",
      rows: [
        ["보낸사람 : 15882100\n농협 입금10,000원\n07/04 15:18 352-****-4273-63 신동수 잔액3,710,000원", "신동수", "10000"],
        ["보낸사람 : 15882100\n농협 입금300,000원\n07/25 18:53 356-****-5583-73 윤신한 잔액1,320,000원", "윤신한", "300000"],
        ["농협 입금3,825,000원\n08/11 14:48 352-****-1682-33 장동선", "장동선", "3825000"],
        ["보낸사람 : 15882100\n농협 입금1원\n07/22 18:46 352-****-4273-63 otp8887 잔액2,150,001원", "otp8887", "1"]
      ]
    },
    {
      bank: "신한",
      rule:
        "신한(?P<time>\\d{2}/\\d{2} \\d{2}:\\d{2})\\n(?P<account>[\\d*-]+)\\n입금\\s+(?P<amount>[\\d,]+)\\n잔액\\s+(?P<balance>[\\d,]+)\\n\\s*(?P<name>[^\\n]+)",
      rows: [
        ["보낸사람 : 15778000()\n[Web발신]\n신한07/04 15:28\n110-496-922482\n입금     100,000\n잔액    870,045\n 박현옥", "박현옥", "100000"],
        ["[Web발신]\n신한06/12 14:23\n110-***-123456\n입금     50,000\n잔액  1,234,567\n 홍길동", "홍길동", "50000"]
      ]
    },
    {
      bank: "카카오뱅크",
      rule:
        "\\[카카오뱅크\\] \\S+ (?P<time>\\d{2}/\\d{2} \\d{2}:\\d{2}) 입금 (?P<amount>[\\d,]+)원 (?P<name>.+?) 잔액 (?P<balance>[\\d,]+)원",
      rows: [["[Web발신] [카카오뱅크] 심*민(8205) 08/23 14:20 입금 500,000원 박진환 잔액 9,851,574원", "박진환", "500000"]]
    },
    {
      bank: "unknown (full-width)",
      rule: "입금 (?P<amount>[0-9０-９,，]+)원\\n\\d{2}/\\d{2}\\s+\\d{2}:\\d{2}\\s+(?P<name>\\S+)",
      rows: [["입금 １０，０００원\n04/12   15:30  홍길동", "홍길동", "10000"]]
    }
  ]

  for (const { bank, rows, rule } of corpusRules) {
    it(`accepts a good rule for the ${bank} corpus deposits, also with rejectNonDeposits`, () => {
      const [first] = rows
      assert.isDefined(first)
      const compiled = ok(validateRule(rule, first[0], { rejectNonDeposits: true }))
      for (const [text, name, amount] of rows) {
        const extraction = compiled.extract(text)
        assert.isDefined(extraction, text)
        assert.strictEqual(extraction.name, name)
        assert.strictEqual(extraction.amount, amount)
      }
    })
  }
})

describe("knownNonDeposits", () => {
  it("holds the corpus rows and a dozen more, with real line breaks", () => {
    assert.isAtLeast(knownNonDeposits.length, 28 + 12)
    assert.isAtLeast(knownNonDeposits.filter((m) => m.kind === "wd").length, 20)
    assert.isAtLeast(knownNonDeposits.filter((m) => m.kind === "other").length, 8)
    for (const message of knownNonDeposits) {
      assert.notInclude(message.text, "\\n")
      assert.isAbove(message.text.trim().length, 0)
    }
    assert.isTrue(knownNonDeposits.some((m) => m.text.includes("\n출금\n2,960,000\n")))
  })
})

describe("the rule engine", () => {
  it("compiles 10,000 distinct rules in one process, and the last one works like the first", () => {
    // re2-wasm refused every rule after ~3,200 (its 16 MiB heap full, nothing ever freed); re2js
    // rules are ordinary objects the garbage collector frees.
    const ruleFor = (i: number) => `\\[KB\\]\\d{2}/\\d{2} \\d{2}:\\d{2}\\s*[\\d*]+\\s*(?P<name>[^\\n]+?)\\s*입금${i}\\s*(?P<amount>[\\d,]+)`
    for (let i = 0; i < 10_000; i++) {
      const compiled = ok(compileRule(ruleFor(i)))
      if (i % 2_500 === 0 || i === 9_999) {
        assert.deepStrictEqual(compiled.extract(`[KB]01/20 10:13\n971372**874\n박희자\n입금${i}\n141,000`), { name: "박희자", amount: "141000" })
      }
    }
  }, 120_000)

  it("refuses rules that would compile to a large program, before compiling them", () => {
    const fill = (unit: string) => {
      let rule = "(?P<name>\\S+) (?P<amount>\\d+)"
      while (rule.length + unit.length <= 2_000) rule += unit
      return rule
    }
    for (const unit of ["\\S{1,1000}", "[^\\n]{0,999}", "\\pL{1,100}", "(?:\\pL|\\pN){1,50}", "(?:(?:a{10}){10}){10}"]) {
      const rule = fill(unit)
      const size = estimateRuleSize(rule)
      const over = (size - maxRuleSize).toLocaleString("en")
      assert.strictEqual(
        rejected(compileRule(rule)),
        `rule is too large: it would compile to about ${size.toLocaleString("en")} instructions, more than 2,000 (${over} over; lower the repetition counts)`,
        unit
      )
    }
    // Case folding makes character classes dear: counted ten times.
    assert.isAbove(estimateRuleSize("(?i)[a-z가-힣]{1,10}"), 10 * estimateRuleSize("[a-z가-힣]{1,10}") / 2)
    // The built-in templates stay far below the bound.
    for (const t of builtins) assert.isBelow(estimateRuleSize(t.rule), maxRuleSize / 4, t.key)
  })

  it("counts what reading costs in steps of RE2's machine, the same on every run", () => {
    // Small programs counted by hand: "a" is [fail, rune a, match], the search starts at every position.
    assert.deepStrictEqual(readingSteps(RE2JS.compile("a"), "aaa"), { steps: 10, characters: 3 })
    assert.deepStrictEqual(readingSteps(RE2JS.compile("^a"), "aa"), { steps: 6, characters: 2 })
    assert.deepStrictEqual(readingSteps(RE2JS.compile("\\bab\\b"), "ab ab"), { steps: 21, characters: 5 })
    // A plain template on a KB deposit (pins re2js's program: a new version that compiles it
    // differently shows here first).
    const plain = RE2JS.compile("(?P<name>[^\\n]+?)\\s*입금\\s*(?P<amount>\\d{1,3}(?:,\\d{3})+|\\d+)")
    assert.deepStrictEqual(readingSteps(plain, "[KB]01/20 10:13\n971372**874\n박희자\n입금\n141,000\n잔액1,033,072"), { steps: 588, characters: 54 })
    // The work grows with the threads a rule keeps alive: [^\n]{0,k} keeps k.
    const perChar = (k: number) => readingSteps(RE2JS.compile(`[^\\n]{0,${k}}`), "가".repeat(1_000)).steps / 1_000
    assert.isBelow(perChar(1), 10)
    assert.isAbove(perChar(100), 200)
    // Counting stops past a budget, after the character that crossed it.
    const stopped = readingSteps(RE2JS.compile("[^\\n]{0,100}"), "가".repeat(1_000), 10_000)
    assert.isAbove(stopped.steps, 10_000)
    assert.isBelow(stopped.characters, 1_000)
  })

  it("accepts every built-in template on its sample, each far below the step bound", () => {
    for (const t of builtins) {
      ok(validateRule(t.rule, t.sample))
      const probe = probeOf(normalizeSmsText(t.sample))
      const { characters, steps } = readingSteps(RE2JS.compile(t.rule), probe)
      assert.strictEqual(characters, probe.length, t.key)
      // 9 to 34 a character (kb_amount_first and kakaobank the dearest): a fifteenth of the bound.
      assert.isBelow(steps / characters, maxStepsPerChar / 10, t.key)
    }
  })

  // Broad classes repeated and nested: linear for RE2, but each character keeps many threads alive.
  const slowRule = (() => {
    let rule = "(?P<name>a)(?P<amount>\\d)"
    while (estimateRuleSize(`${rule}(?:[^x]{1,5}){1,4}`) <= maxRuleSize) rule += "(?:[^x]{1,5}){1,4}"
    return rule
  })()
  const slowSample = "입금 a1 " + "가나다 ".repeat(100)

  it("refuses a rule that costs RE2 too many steps a character, saying how many and the limit", () => {
    // Was: timed beside a plain template ("took N ms, M times a plain template (at most 50 times,
    // or 20 ms)"), an answer that moved with the machine's load. Now a count, exact on any machine.
    assert.strictEqual(
      rejected(validateRule(slowRule, slowSample)),
      "rule is too slow: reading its sample repeated, RE2 took 1,001,970 steps in the first 378 characters, 2,651 a character: " +
        "2,151 over the limit of 500 a character (5.3 times; narrow or shorten repeated classes such as [^x]{1,5} or .{0,50})"
    )
  })

  it("decides without a clock: the same rule and sample always get the same answer", () => {
    // Any read of the clock during a decision throws, so no answer can depend on the machine's
    // load; each decision is taken twice and compared.
    const withoutClock = <A>(decide: () => A): A => {
      const { now } = performance
      const dateNow = Date.now
      const stop = (): number => {
        throw new Error("the rule decision read the clock")
      }
      performance.now = stop
      Date.now = stop
      try {
        return decide()
      } finally {
        performance.now = now
        Date.now = dateNow
      }
    }
    const answer = (result: Result.Result<CompiledRule, RuleRejected>) => Result.isSuccess(result) ? "accepted" : result.failure.detail
    const cls = fc.constantFrom("[^x]", "[^\\n]", "\\S", ".", "[가-힣]", "[\\d,]", "\\s")
    const piece = fc.oneof(
      fc.constantFrom("입금", "원", "\\s*", "\\s+", "[^\\n]*", "\\d+", "\\n", " ", "잔액", ".*?", "\\[KB\\]", "(?:입금|출금)"),
      fc.tuple(cls, fc.nat(3), fc.nat(12)).map(([c, min, extra]) => `${c}{${min},${min + extra}}`),
      fc.tuple(cls, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 5 })).map(([c, inner, outer]) => `(?:${c}{1,${inner}}){1,${outer}}`)
    )
    const rule = fc.tuple(fc.array(piece, { maxLength: 6 }), fc.array(piece, { maxLength: 6 }), fc.array(piece, { maxLength: 30 }), fc.boolean())
      .map(([before, between, after, nameFirst]) => {
        const [first, second] = nameFirst ? ["(?P<name>[^\\n\\d]+?)", "(?P<amount>[\\d,]+)"] : ["(?P<amount>[\\d,]+)", "(?P<name>[^\\n\\d]+)"]
        return `${before.join("")}${first}${between.join("")}${second}${after.join("")}`
      })
    const sample = fc.constantFrom(
      "[Web발신]\n[KB]01/20 10:13\n971372**874\n박희자\n입금\n141,000\n잔액1,033,072",
      "[Web발신]\n농협 입금30,000원\n11/23 16:03 352-****-4273-63 이도윤 잔액3,710,000원",
      "입금 10,000원 홍길동",
      slowSample
    )
    const kb = "\\[KB\\](?P<time>\\d{2}/\\d{2} \\d{2}:\\d{2})\\n(?P<account>\\S+)\\n(?P<name>[^\\n]+)\\n입금\\n(?P<amount>[\\d,]+)"
    const seen = new Set<string>()
    fc.assert(
      fc.property(rule, sample, fc.boolean(), (r, s, rejectNonDeposits) => {
        const first = withoutClock(() => answer(validateRule(r, s, { rejectNonDeposits })))
        const again = withoutClock(() => answer(validateRule(r, s, { rejectNonDeposits })))
        assert.strictEqual(again, first)
        seen.add(first === "accepted" ? first : first.slice(0, first.indexOf(":")))
      }),
      {
        numRuns: 60,
        // Both sides of the bound, every run: a template accepted, the nested classes refused.
        examples: [[kb, "[Web발신]\n[KB]01/20 10:13\n971372**874\n박희자\n입금\n141,000\n잔액1,033,072", true], [slowRule, slowSample, false]]
      }
    )
    assert.isTrue(seen.has("accepted"), [...seen].join(" | "))
    assert.isTrue(seen.has("rule is too slow"), [...seen].join(" | "))
  })
})
