// Benchmark of parsing (figures printed, nothing asserted): the rule engine (compiling the
// built-ins, the largest rules allowed, 10,000 rules in one process), the cost of reading one SMS
// (the guard, the built-in templates, the built-in reader, each alone and together; sender known
// or not), parse_loop working through a backlog of 100,000 mixed SMS, and the time from the
// webhook's 200 to `parsed` with the worker running.
// node bench/parse.ts   — DATABASE_URL when set (needs CREATE DATABASE), else an embedded server.
import { Effect, Layer, Redacted, References, Result } from "effect"
import { FetchHttpClient } from "effect/http"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { cpus } from "node:os"
import { join } from "node:path"
import { pgLayer } from "../src/db/Database.ts"
import { freePort } from "../src/db/EmbeddedPostgres.ts"
import { builtins0007, builtins0012 as builtins } from "../src/db/BuiltinTemplates.ts"
import { classifyTransaction } from "../src/parse/DepositGuard.ts"
import { knownNonDeposits } from "../src/parse/NonDeposits.ts"
import { smsForwarderFormBody } from "../src/domain/SmsForwarder.ts"
import { parseSms } from "../src/parse/SmsParse.ts"
import { type LoadedTemplate, templateSet } from "../src/parse/Templates.ts"
import { readSms } from "../src/parse/SmsReader.ts"
import { normalizeSmsText } from "../src/domain/SmsText.ts"
import { compileRule, estimateRuleSize, maxRuleSize } from "../src/parse/TemplateRule.ts"
import { Kicks, loopStores, Worker } from "../src/loops/Loop.ts"
import { ParseInbox, ParseLoop } from "../src/loops/ParseLoop.ts"
import { HealthRegistry } from "../src/health/HealthRegistry.ts"
import { benchDatabase } from "./support.ts"

const BACKLOG = 100_000
const LATENCY_SAMPLES = 1_000

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const ms = (n: number) => `${n.toFixed(2)} ms`
const report = (line: string) => console.log(line)
const time = <A>(f: () => A): [A, number] => {
  const started = performance.now()
  const value = f()
  return [value, performance.now() - started]
}

report(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}`)

// 1. The rule engine.
{
  const [, cold] = time(() => builtins.forEach((t) => compileRule(`${t.rule}(?:cold)?`)))
  const [, warm] = time(() => builtins.forEach((t) => compileRule(`${t.rule}(?:warm)?`)))
  report(`compiling the ${builtins.length} built-in rules: ${ms(cold)} in a fresh process (JIT cold), ${ms(warm)} again (warm)`)
  const fill = (unit: string) => {
    let rule = "(?P<name>\\S+) (?P<amount>\\d+)"
    while (estimateRuleSize(rule + unit) <= maxRuleSize && rule.length + unit.length <= 2_000) rule += unit
    return rule
  }
  const probe = `입금 a1 ${"가나다라 12,345원 홍길동\n".repeat(100)}`.slice(0, 2_000)
  for (const unit of ["[^\\n]{0,20}", "\\pL{1,20}", "(?i:[a-z가-힣]{1,10})", "가나다라마바사", "(?:[^x]{1,5}){1,4}"]) {
    const rule = fill(unit)
    const [compiled, compileTime] = time(() => compileRule(rule))
    if (Result.isFailure(compiled)) {
      report(`  at the size bound, ${unit}: refused (${compiled.failure.detail})`)
      continue
    }
    const [, matchTime] = time(() => compiled.success.extract(probe))
    report(`  at the size bound (${maxRuleSize} estimated instructions), ${rule.length} chars of ${unit}: compile ${ms(compileTime)}, one 2,000-character text ${ms(matchTime)}`)
  }
  const heapBefore = process.memoryUsage().heapUsed
  const [, many] = time(() => {
    for (let i = 0; i < 10_000; i++) {
      const compiled = compileRule(`\\[KB\\]\\d{2}/\\d{2} \\d{2}:\\d{2}\\s*[\\d*]+\\s*(?P<name>[^\\n]+?)\\s*입금${i}\\s*(?P<amount>[\\d,]+)`)
      if (Result.isFailure(compiled)) throw new Error(compiled.failure.detail)
    }
  })
  globalThis.gc?.()
  report(`10,000 distinct rules compiled in one process: ${(many / 1000).toFixed(1)} s (${(many / 10).toFixed(0)} µs each), all accepted; heap ${((process.memoryUsage().heapUsed - heapBefore) / 1e6).toFixed(1)} MB above the start${globalThis.gc === undefined ? " (no --expose-gc: includes garbage)" : ""}`)
}

// The mixed traffic: every layout a built-in was ever written for (0007's samples: some read by
// today's templates, the others by the built-in reader after every template failed) with other
// amounts, every known non-deposit.
const deposits = builtins0007.map((t) => ({ sender: builtins.find((b) => b.key === t.key)?.sender ?? null, text: t.sample }))
const others = knownNonDeposits.map((m) => ({ sender: null, text: m.text }))
const mixed = (i: number): { readonly sender: string; readonly text: string } => {
  const outgoing = i % 10 >= 6 // 60 % deposits, 40 % withdrawals, card approvals, notices
  const pool = outgoing ? others : deposits
  const base = pool[(i * 7919) % pool.length]!
  const amount = (1_000 + (i % 997) * 1_013).toLocaleString("en")
  const text = base.text.replace(/\d{1,3}(?:,\d{3})+(?=원|\n| |$)/, amount)
  // 70 % from the bank's own number (its templates first), the rest from numbers no template names.
  return { sender: i % 10 < 7 && base.sender !== null ? base.sender : `0105555${String(i % 10_000).padStart(4, "0")}`, text }
}

// 2. Reading one SMS in memory, all built-ins loaded: the whole parse, and its parts alone.
{
  const loaded: ReadonlyArray<LoadedTemplate> = builtins.map((t, i) => {
    const compiled = compileRule(t.rule)
    if (Result.isFailure(compiled)) throw new Error(compiled.failure.detail)
    return { id: i + 1, bank: t.bank, sender: t.sender, ruleSource: "builtin" as const, rule: compiled.success }
  })
  const set = templateSet(loaded)
  const receivedAt = new Date()
  const messages = Array.from({ length: 20_000 }, (_, i) => mixed(i))
  for (const m of messages.slice(0, 2_000)) parseSms({ body: m.text, sender: m.sender, receivedAt }, set) // warm-up
  const perSms = (subset: ReadonlyArray<unknown>, run: () => void) => {
    const [, total] = time(run)
    return `${(total * 1000 / subset.length).toFixed(1)} µs per SMS (${subset.length} SMS)`
  }
  const measure = (label: string, pick: (m: { sender: string; text: string }) => string, filter: (m: { sender: string; text: string }) => boolean) => {
    const subset = messages.filter(filter)
    report(`  ${label}: ${perSms(subset, () => subset.forEach((m) => parseSms({ body: m.text, sender: pick(m), receivedAt }, set)))}`)
  }
  report(`reading one SMS in memory with the ${loaded.length} built-ins (guard, then templates in order, then the built-in reader):`)
  measure("mixed traffic as generated", (m) => m.sender, () => true)
  measure("deposits from the bank's own number (its templates first)", (m) => m.sender, (m) => m.sender.startsWith("1"))
  measure("the same deposits from an unknown number (every template in order)", () => "01099990000", (m) => m.sender.startsWith("1"))
  measure("outgoing money and notices (the guard alone)", (m) => m.sender, (m) => !/입금|보냈어요/.test(m.text))
  // The parts, each alone on the same mixed texts (normalised once, as parseSms does).
  const texts = messages.map((m) => normalizeSmsText(m.text))
  const templatesInOrder = set.forSender("01099990000").flatMap((t) => "extract" in t.rule ? [t.rule] : [])
  report("the parts of one read, each alone on the mixed texts:")
  report(`  the built-in reader (tokens and slots): ${perSms(texts, () => texts.forEach((t) => readSms(t)))}`)
  report(`  the guard (the reader's reading, then its judgement): ${perSms(texts, () => texts.forEach((t) => classifyTransaction(t)))}`)
  report(`  the ${templatesInOrder.length} built-in templates, every one tried: ${perSms(texts, () => texts.forEach((t) => templatesInOrder.forEach((rule) => rule.extract(t))))}`)
}

// 3. parse_loop on a backlog, then 4. the webhook's 200 → parsed with the worker process.
const db = await benchDatabase("parse")
try {
  await db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const items = Array.from({ length: BACKLOG }, (_, i) => mixed(i))
    for (let from = 0; from < BACKLOG; from += 10_000) {
      const chunk = items.slice(from, from + 10_000).map((m, k) => ({ ...m, n: from + k }))
      yield* sql`INSERT INTO recon.shooter_sms (device_id, sender, sender_normalized, body, normalized_body, received_at, status)
        SELECT 'bench', x.sender, x.sender, x.text, x.text || x.n, now() - interval '1 hour', 'received'
        FROM jsonb_to_recordset(${JSON.stringify(chunk)}::jsonb) AS x(sender text, text text, n int)`
    }
  }))
  const services = Layer.mergeAll(
    loopStores.pipe(Layer.provideMerge(Layer.orDie(pgLayer(Redacted.make(db.url), { maxConnections: 4 })))),
    Worker.layer({ port: 0, heartbeatFile: join(db.dir, "hb"), chatbot: { enabled: false, token: undefined, apiUrl: "http://127.0.0.1:9", chatIds: [] }, walletUrl: "http://127.0.0.1:9", adminUrl: "http://127.0.0.1:9", callerToken: undefined, depositTtlHours: 24 }),
    ParseInbox.layer.pipe(Layer.provideMerge(Kicks.layer)),
    FetchHttpClient.layer,
    HealthRegistry.layer([])
  )
  const passes = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pass = yield* ParseLoop.start
    const durations: Array<number> = []
    const started = performance.now()
    while (true) {
      const t0 = performance.now()
      yield* pass
      durations.push(performance.now() - t0)
      const [left] = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.shooter_sms WHERE status = 'received'`
      if (Number(left!.n) === 0) break
    }
    const total = performance.now() - started
    const counts = yield* sql<{ status: string; n: bigint }>`SELECT status, count(*) AS n FROM recon.shooter_sms GROUP BY status ORDER BY status`
    return { durations: durations.sort((a, b) => a - b), total, counts }
  }).pipe(Effect.provide(services), Effect.provideService(References.MinimumLogLevel, "Warn"))))
  report(`parse_loop on a backlog of ${BACKLOG.toLocaleString("en")} mixed SMS: ${(passes.total / 1000).toFixed(1)} s = ${(BACKLOG / passes.total * 1000).toFixed(0)} SMS/s (target >= 5,000); ${passes.durations.length} passes of up to 4,000 SMS, p50 ${ms(percentile(passes.durations, 50))}, max ${ms(passes.durations.at(-1)!)} (TTL 30 s); ${passes.counts.map((c) => `${c.status} ${c.n}`).join(", ")}`)

  // 4. The worker process with its loops; SmsForwarder posts one after another.
  await db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO recon.shooter_device (device_id, trusted) VALUES ('bench-phone', true)`
    yield* sql`INSERT INTO recon.shooter_push (device_id, format, secret) VALUES ('bench-phone', 'smsforwarder', 'bench-secret')`
    for (const phone of [...builtins.map((t) => t.sender), "15880000"]) {
      if (phone !== null) yield* sql`INSERT INTO recon.shooter_phone (phone) VALUES (${phone}) ON CONFLICT DO NOTHING`
    }
  }))
  const entry = existsSync("dist/main.js") ? "dist/main.js" : "src/main.ts"
  const port = await freePort()
  const worker = spawn(process.execPath, [entry, "worker"], {
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: db.url,
      SVC_PUSH_PORT: String(port),
      SVC_WORKER_HEARTBEAT_FILE: join(db.dir, "worker.hb"),
      LOG_LEVEL: "warn",
      SVC_INTERNAL_SERVICE_TOKEN_RECON: "bench-recon-token"
    },
    stdio: ["ignore", "inherit", "inherit"]
  })
  try {
    const base = `http://127.0.0.1:${port}`
    const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))
    while (!(await fetch(`${base}/health/ready`).then((r) => r.ok, () => false))) {
      if (worker.exitCode !== null) throw new Error(`the worker exited with code ${worker.exitCode} before it was ready`)
      await sleep(50)
    }
    const latencies = await db.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const samples: Array<number> = []
      for (let i = 0; i < LATENCY_SAMPLES + 50; i++) {
        const sms = deposits[i % deposits.length]!
        const sender = sms.sender ?? "15880000"
        // Every text different (no duplicate): another amount, and a counter the parsers ignore.
        const text = `${sms.text.replace(/\d{1,3}(?:,\d{3})+(?=원|\n| |$)/, (100_000 + i).toLocaleString("en"))}\n#${i}`
        const body = smsForwarderFormBody({ from: sender, content: text, orgContent: text, timestamp: Date.now(), secret: "bench-secret" })
        const response = yield* Effect.promise(() =>
          fetch(`${base}/push/bench-phone`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body })
        )
        yield* Effect.promise(() => response.text())
        const ok = performance.now()
        if (response.status !== 200) throw new Error(`push answered ${response.status}`)
        while (true) {
          const [row] = yield* sql<{ status: string }>`SELECT status FROM recon.shooter_sms ORDER BY id DESC LIMIT 1`
          if (row !== undefined && row.status !== "received") break
          // Polling without a pause would take the CPU the worker needs (2 cores, shared).
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1)))
        }
        if (i >= 50) samples.push(performance.now() - ok)
      }
      const counts = yield* sql<{ status: string; n: bigint }>`SELECT status, count(*) AS n FROM recon.shooter_sms
        WHERE device_id = 'bench-phone' GROUP BY status ORDER BY status`
      return { samples: samples.sort((a, b) => a - b), counts: counts.map((c) => `${c.status} ${c.n}`).join(", ") }
    }))
    const { samples, counts } = latencies
    report(`webhook 200 → parsed (${entry} worker, ${LATENCY_SAMPLES} deposits one after another, 50 warm-up; polled every ~1 ms from the bench): p50 ${ms(percentile(samples, 50))}, p99 ${ms(percentile(samples, 99))}, max ${ms(samples.at(-1)!)} (target p99 < 10 ms); ${counts}`)
  } finally {
    worker.kill("SIGTERM")
    await new Promise((resolve) => worker.on("exit", resolve))
  }
} finally {
  await db.close()
}
