import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { configProblems, parseArgs } from "../../src/meta/cli.ts"
import { createTestDatabase, runSql } from "../support/database.ts"
import { MAIN } from "../support/process.ts"
import { startFakeNocoBase } from "./support/FakeNocoBase.ts"
import { buildDamagedSvc, metadataTexts } from "./support/fixture.ts"


interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `recon meta <args>`: the run's built command ({@link MAIN}). */
const meta = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}): Promise<Ran> =>
  new Promise((resolve) => {
    const base: Record<string, string | undefined> = { ...process.env, DATABASE_URL: undefined, NOCOBASE_ACCOUNT: undefined, NOCOBASE_PASSWORD: undefined }
    const merged = Object.fromEntries(Object.entries({ ...base, ...env }).filter(([, v]) => v !== undefined)) as Record<string, string>
    execFile(process.execPath, [MAIN, "meta", ...args], { env: merged, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
      resolve({ code, stdout, stderr })
    })
  })

describe("meta command line: parsing and configuration", () => {
  it("parses the subcommands and their flags", () => {
    assert.deepStrictEqual(parseArgs(["audit", "--collection", "orders", "--json"]), { _tag: "audit", schema: "svc", collection: "orders", json: true })
    assert.deepStrictEqual(parseArgs(["audit", "--schema=nb"]), { _tag: "audit", schema: "nb", collection: undefined, json: false })
    assert.deepStrictEqual(parseArgs(["repair"]), { _tag: "repair", schema: "svc", mode: "dry-run", undo: undefined })
    assert.deepStrictEqual(parseArgs(["repair", "--apply"]), { _tag: "repair", schema: "svc", mode: "apply", undo: undefined })
    assert.deepStrictEqual(parseArgs(["repair", "--undo", "12"]), { _tag: "repair", schema: "svc", mode: "dry-run", undo: "12" })
    assert.deepStrictEqual(parseArgs(["refresh", "--url", "http://x:13000", "--restart"]), { _tag: "refresh", schema: "svc", url: "http://x:13000", restart: true })
    assert.deepStrictEqual(parseArgs(["pretty-node", "customers", "homepage"]), { _tag: "pretty-node", schema: "svc", collection: "customers", field: "homepage" })
    for (const bad of [[], ["frob"], ["audit", "--apply"], ["repair", "--apply", "--undo", "1"], ["repair", "--undo", "x"], ["audit", "--collection"], ["audit", "--schema", "svc;drop"], ["pretty-node", "a"], ["audit", "--json", "--json"], ["refresh", "extra"]]) {
      assert.isString(parseArgs(bad), JSON.stringify(bad))
    }
  })

  it("names every missing or wrong key", () => {
    const audit = parseArgs(["audit"])
    const refresh = parseArgs(["refresh"])
    assert.isObject(audit)
    assert.isObject(refresh)
    if (typeof audit === "string" || typeof refresh === "string") return
    assert.deepStrictEqual(configProblems(audit, {}), ["DATABASE_URL is not set (expected postgres://user:password@host:port/database)"])
    assert.deepStrictEqual(configProblems(audit, { DATABASE_URL: "mysql://h/db" }), ["DATABASE_URL is not a postgres:// URL"])
    assert.deepStrictEqual(configProblems(audit, { DATABASE_URL: "postgresql://u:p@h:5432/db" }), [])
    assert.deepStrictEqual(configProblems(refresh, {}).map((line) => line.split(" ")[0]), ["--url", "NOCOBASE_ACCOUNT", "NOCOBASE_PASSWORD"])
    const withUrl = parseArgs(["refresh", "--url", "ftp://x"])
    if (typeof withUrl !== "string") {
      assert.deepStrictEqual(configProblems(withUrl, { NOCOBASE_ACCOUNT: "a", NOCOBASE_PASSWORD: "b" }), ["--url is not an http(s) URL"])
    }
  })

  it("exits 2 with one line per configuration problem, and a usage line for bad arguments", async () => {
    const unset = await meta(["audit"])
    assert.strictEqual(unset.code, 2)
    assert.strictEqual(unset.stderr.trim(), "DATABASE_URL is not set (expected postgres://user:password@host:port/database)")
    assert.strictEqual((await meta(["repair", "--apply"], { DATABASE_URL: "not a url" })).code, 2)
    const refresh = await meta(["refresh"])
    assert.strictEqual(refresh.code, 2)
    assert.strictEqual(refresh.stderr.trim().split("\n").length, 3)
    const unknown = await meta(["audit", "--fix"])
    assert.strictEqual(unknown.code, 2)
    assert.match(unknown.stderr, /unknown flag --fix[\s\S]*usage: meta audit/)
    assert.strictEqual((await meta(["heal"])).code, 2)
  }, 120_000)

  it("--help of meta and of each subcommand: its flags on stdout, exit 0", async () => {
    const top = await meta(["--help"])
    assert.strictEqual(top.code, 0, top.stderr)
    for (const sub of ["audit", "repair", "refresh", "pretty-node"]) assert.include(top.stdout, sub)
    const flags: Record<string, ReadonlyArray<string>> = {
      audit: ["--collection", "--json", "--schema"],
      repair: ["--apply", "--undo", "--schema"],
      refresh: ["--url", "--restart", "--schema"],
      "pretty-node": ["COLLECTION", "FIELD", "--schema"]
    }
    for (const [sub, names] of Object.entries(flags)) {
      const help = await meta([sub, "--help"])
      assert.strictEqual(help.code, 0, `${sub}: ${help.stderr}`)
      assert.strictEqual(help.stderr, "", sub)
      for (const name of names) assert.include(help.stdout, name, sub)
    }
  }, 120_000)
})

describe("meta command line: a whole session on a damaged schema", () => {
  it("audit → repair dry run → apply → audit → apply again → undo", async () => {
    const url = await createTestDatabase("meta")
    await runSql(url, buildDamagedSvc)
    const env = { DATABASE_URL: url }
    const original = await runSql(url, metadataTexts)

    const audit = await meta(["audit"], env)
    assert.strictEqual(audit.code, 1, audit.stderr)
    assert.match(audit.stdout, /^CHECK\s+REPAIR\s+COLLECTION\s+SUBJECT\s+DETAIL/)
    assert.include(audit.stdout, "35 findings in schema svc: 26 repaired by `meta repair --apply`, 9 need a person")
    assert.include(audit.stdout, "checklist 3: 2 rows (orders, products)")
    assert.include(audit.stdout, "left alone as NocoBase's own: 1 platform-internal collection (users) with their fields and page nodes, defined in code by @nocobase/plugin-users (options.origin); 1 NocoBase system field (customers.createdAt: read-only, with a system-info interface of NocoBase's own)")

    const json = await meta(["audit", "--json", "--collection", "products"], env)
    assert.strictEqual(json.code, 1)
    const parsed = JSON.parse(json.stdout) as { findings: Array<{ collection: string; check: string }>; checklist: Array<{ rows: Array<string> }> }
    assert.isTrue(parsed.findings.length === 9 && parsed.findings.every((finding) => finding.collection === "products"))
    assert.deepStrictEqual(parsed.checklist.map((item) => item.rows.length), [1, 2, 1, 0, 2])
    assert.strictEqual((await meta(["audit", "--collection", "nope"], env)).code, 2)
    assert.strictEqual((await meta(["audit", "--schema", "public"], env)).code, 2)

    const dry = await meta(["repair"], env)
    assert.strictEqual(dry.code, 0, dry.stderr)
    assert.include(dry.stdout, `fields orders.amount (key f_orders_amount) [wrong-interface, number-component, field-incomplete]\n  interface: "decimal" -> "number"`)
    assert.match(dry.stdout, /dry run: 17 rows \(4 collections, 7 fields, 6 page nodes\) would change/)
    assert.deepStrictEqual(await runSql(url, metadataTexts), original)

    const apply = await meta(["repair", "--apply"], env)
    assert.strictEqual(apply.code, 0, apply.stderr)
    const lastLine = apply.stdout.trimEnd().split("\n").at(-1)!
    assert.match(lastLine, /^run [0-9]+$/)
    const runId = lastLine.slice(4)

    const after = await meta(["audit"], env)
    assert.strictEqual(after.code, 1)
    assert.include(after.stdout, "9 findings in schema svc: 0 repaired by `meta repair --apply`, 9 need a person")
    for (const item of [1, 2, 3, 4, 5]) assert.include(after.stdout, `checklist ${item}: 0 rows`)

    const again = await meta(["repair", "--apply"], env)
    assert.strictEqual(again.code, 0)
    assert.include(again.stdout, "nothing to repair in schema svc")
    assert.match(again.stdout.trimEnd().split("\n").at(-1)!, /^run [0-9]+$/)

    const undo = await meta(["repair", "--undo", runId], env)
    assert.strictEqual(undo.code, 0, undo.stderr)
    assert.include(undo.stdout, `restored 21 column values of run ${runId} in schema svc`)
    assert.deepStrictEqual(await runSql(url, metadataTexts), original)
    const twice = await meta(["repair", "--undo", runId], env)
    assert.strictEqual(twice.code, 1)
    assert.include(twice.stderr, "already undone")

    const node = await meta(["pretty-node", "customers", "homepage"], env)
    assert.strictEqual(node.code, 0, node.stderr)
    assert.deepInclude(JSON.parse(node.stdout), { "x-component": "SvcPrettyField", "x-collection-field": "customers.homepage", "x-read-pretty": true })
    const bad = await meta(["pretty-node", "products", "bad_meta"], env)
    assert.strictEqual(bad.code, 1)
    assert.include(bad.stderr, `unknown key "colour"`)
    assert.strictEqual((await meta(["pretty-node", "products", "nope"], env)).code, 1)
    // the database password never shows
    for (const ran of [audit, dry, apply, undo, bad]) assert.notInclude(ran.stdout + ran.stderr, "recon@")
  }, 300_000)

  it("refresh: stale is exit 1, --restart fixes it (exit 0), a rejected password is a configuration error; secrets never printed", async () => {
    const url = await createTestDatabase("meta")
    await runSql(url, buildDamagedSvc)
    const nocobase = await startFakeNocoBase({ databaseUrl: url, account: "admin", password: "pa55-word-xyz", refreshReloads: false, preloadPages: true })
    try {
      const env = { DATABASE_URL: url, NOCOBASE_ACCOUNT: "admin", NOCOBASE_PASSWORD: "pa55-word-xyz" }
      const applied = await meta(["repair", "--apply"], env)
      assert.strictEqual(applied.code, 0)
      const stale = await meta(["refresh", "--url", nocobase.url], env)
      assert.strictEqual(stale.code, 1, stale.stderr)
      assert.include(stale.stdout, "running metadata: STALE")
      const fixed = await meta(["refresh", "--url", nocobase.url, "--restart"], env)
      assert.strictEqual(fixed.code, 0, fixed.stdout + fixed.stderr)
      assert.include(fixed.stdout, "app:clearCache: done") // the server served page nodes from its cache
      assert.include(fixed.stdout, "app:restart: requested")
      assert.match(fixed.stdout.split("\n").filter((line) => line.startsWith("running metadata:")).at(-1)!, /^running metadata: fresh/)
      const rejected = await meta(["refresh", "--url", nocobase.url], { ...env, NOCOBASE_PASSWORD: "nope-nope" })
      assert.strictEqual(rejected.code, 2)
      assert.include(rejected.stderr, "NOCOBASE_ACCOUNT / NOCOBASE_PASSWORD rejected")
      for (const ran of [stale, fixed, rejected]) {
        assert.notInclude(ran.stdout + ran.stderr, "pa55-word-xyz")
        assert.notInclude(ran.stdout + ran.stderr, "nope-nope")
        assert.notMatch(ran.stdout + ran.stderr, /Bearer|[0-9a-f]{32}/)
      }
    } finally {
      await nocobase.close()
    }
  }, 240_000)
})
