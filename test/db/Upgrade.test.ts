// A database an earlier release left upgrades cleanly. Each fixture (test/db/fixtures/upgrade/,
// made by dump.ts there: pg_dump of a release's migrated database and a few rows) is restored into
// an empty database, `recon migrate` brings it to today, and then: every migration recorded, the
// repeatable definitions applied with today's checksums, the schema exactly a fresh database's
// (tables, columns, constraints, indexes, triggers, views, functions), the release's rows kept
// (its operator template untouched, the built-ins today's, once each); from ea7b16a, every function
// the same but for white space (0024 lays match_pass out anew); from fabb09a (the functions the code
// calls still in its migrations, but three), every function byte for byte the same
// (pg_get_functiondef): the text a definition took over is the migrations' own; and the money path
// runs on it: an SMS pushed by the release's phone is parsed, matched to the release's pending
// deposit and approved by the wallet, once.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { builtins0012 } from "../../src/db/BuiltinTemplates.ts"
import { definitionChecksum } from "../../src/db/Migrations.ts"
import { migrations } from "../../src/db/migrations/index.ts"
import { definitions } from "../../src/db/sql/index.ts"
import { createMigratedDatabase, createTestDatabase, runSqlAlone, sql } from "../support/database.ts"
import { smsState } from "../support/match.ts"
import { runCommandToEnd, waitForUrl, workerProcess } from "../support/process.ts"
import { RECON_TOKEN, serve } from "../support/recon.ts"
import { startWallet, walletState } from "../support/wallet.ts"
import { eventually } from "../support/time.ts"
import { pushForwarder } from "../support/worker.ts"

/**
 * The statements of a plain pg_dump, in order: split at each `;` outside quotes ('…', "…", $tag$…$tag$)
 * and comments; psql's own commands (`\restrict`…) left out.
 */
const dumpStatements = (text: string): ReadonlyArray<string> => {
  const statements: Array<string> = []
  let current = ""
  let i = 0
  const upTo = (end: number) => {
    current += text.slice(i, end)
    i = end
  }
  while (i < text.length) {
    const c = text[i]!
    if (c === "\\" && current.trim() === "" && (i === 0 || text[i - 1] === "\n")) {
      const end = text.indexOf("\n", i)
      i = end === -1 ? text.length : end + 1
    } else if (c === "-" && text[i + 1] === "-") {
      const end = text.indexOf("\n", i)
      i = end === -1 ? text.length : end
    } else if (c === "'" || c === "\"") {
      let j = i + 1
      while (j < text.length && !(text[j] === c && text[j + 1] !== c)) j += text[j] === c ? 2 : 1
      upTo(j + 1)
    } else if (c === "$" && !/[\w$]/.test(text[i - 1] ?? "")) {
      const tag = /^\$(?:[A-Za-z_]\w*)?\$/.exec(text.slice(i, i + 64))?.[0]
      if (tag === undefined) upTo(i + 1)
      else upTo(text.indexOf(tag, i + tag.length) + tag.length)
    } else if (c === ";") {
      if (current.trim() !== "") statements.push(current.trim())
      current = ""
      i++
    } else {
      upTo(i + 1)
    }
  }
  if (current.trim() !== "") throw new Error(`the dump ends inside a statement: ${current.slice(0, 80)}`)
  return statements
}

/** Restores a plain dump into the empty database at `url`, on one connection (its SETs hold for what follows). */
const restore = (url: string, dump: string) =>
  runSqlAlone(url, Effect.gen(function*() {
    const client = yield* SqlClient.SqlClient
    yield* client.withTransaction(Effect.forEach(dumpStatements(dump), (statement) => client.unsafe(statement), { discard: true }))
  }).pipe(Effect.orDie))

/**
 * The schema of recon's three schemas as sorted lines: what a fresh database and an upgraded one
 * must share. A trigger's WHEN is compared without its parentheses: the dump writes `a OR b OR c`
 * as PostgreSQL deparsed it, `((a OR b) OR c)`, which restores as nested ORs where a fresh
 * database holds one (the same condition, printed differently).
 */
const schemaOf = (url: string) =>
  sql(url, (client) => client<{ line: string }>`
    WITH objects AS (
      SELECT format('column %s.%s %s %s %s %s', c.table_schema, c.table_name, c.column_name, c.data_type, c.is_nullable, coalesce(c.column_default, '')) AS line
        FROM information_schema.columns AS c WHERE c.table_schema IN ('recon', 'wallet', 'admin')
      UNION ALL SELECT format('constraint %s %s %s', r.conrelid::regclass, r.conname, pg_get_constraintdef(r.oid))
        FROM pg_constraint AS r JOIN pg_namespace AS n ON n.oid = r.connamespace WHERE n.nspname IN ('recon', 'wallet', 'admin')
      UNION ALL SELECT format('index %s', indexdef) FROM pg_indexes WHERE schemaname IN ('recon', 'wallet', 'admin')
      UNION ALL SELECT format('trigger %s', pg_get_triggerdef(t.oid))
        FROM pg_trigger AS t JOIN pg_class AS k ON k.oid = t.tgrelid JOIN pg_namespace AS n ON n.oid = k.relnamespace
        WHERE NOT t.tgisinternal AND n.nspname IN ('recon', 'wallet', 'admin')
      UNION ALL SELECT format('view %s.%s %s', schemaname, viewname, definition) FROM pg_views WHERE schemaname IN ('recon', 'wallet', 'admin')
      UNION ALL SELECT format('function %s', pg_get_functiondef(p.oid))
        FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace WHERE n.nspname IN ('recon', 'wallet', 'admin')
    )
    SELECT line FROM objects ORDER BY line`.pipe(Effect.map((rows) => rows.map((row) => row.line.startsWith("trigger ") ? row.line.replace(/[()]/g, "") : row.line))))

const startWorker = (db: string, walletUrl: string) => workerProcess(db, walletUrl, RECON_TOKEN)

/** Each function of recon's schemas: its signature and result, and its body with white space made one space. */
const functionsOf = (url: string) =>
  sql(url, (client) => client<{ name: string; body: string }>`
    SELECT format('%s.%s(%s) %s %s %s', n.nspname, p.proname, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid),
      p.provolatile, l.lanname) AS name, regexp_replace(btrim(p.prosrc), '[[:space:]]+', ' ', 'g') AS body
    FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace JOIN pg_language AS l ON l.oid = p.prolang
    WHERE n.nspname IN ('recon', 'wallet', 'admin') ORDER BY 1`)

/** Each function of recon's schemas as PostgreSQL prints it back (pg_get_functiondef): signature, attributes and body, exactly. */
const functionTextsOf = (url: string) =>
  sql(url, (client) => client<{ text: string }>`
    SELECT pg_get_functiondef(p.oid) AS text FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
    WHERE n.nspname IN ('recon', 'wallet', 'admin') ORDER BY n.nspname, p.proname`.pipe(Effect.map((rows) => rows.map((row) => row.text))))

// sameFunctions: the release's last migration is 23 or 24, whose functions (recon.match_pass in
// full, the repeatable definitions) must be the same ones laid out anew, but for those changed
// since on purpose (`changedSince`: recon.lease_due_sms in plpgsql, its version 2, planned once per
// connection; both in their lease-owner versions of migration 0025, the old signatures kept as
// wrappers). sameFunctionTexts: every other function exactly as the release left it (the six
// functions the code calls that became definitions after fabb09a).
const ownerLeases = ["recon.lease_due_sms(", "recon.match_pass("]
const releases = [
  { commit: "abc6717", lastMigration: 11, sameFunctions: false, sameFunctionTexts: false, changedSince: [] },
  { commit: "ea7b16a", lastMigration: 23, sameFunctions: true, sameFunctionTexts: false, changedSince: ownerLeases },
  { commit: "fabb09a", lastMigration: 24, sameFunctions: true, sameFunctionTexts: true, changedSince: ownerLeases }
]

describe("upgrade from an earlier release", () => {
  for (const release of releases) {
    it.live(`${release.commit} (migrations to ${release.lastMigration}): migrated to today, the same schema as a fresh database, its rows kept, the money path runs`, () =>
      Effect.gen(function*() {
        const db = yield* Effect.promise(() => createTestDatabase(`upgrade_${release.commit}`))
        yield* Effect.promise(() => restore(db, readFileSync(new URL(`fixtures/upgrade/${release.commit}.sql`, import.meta.url), "utf8")))
        const recorded = yield* Effect.promise(() => sql(db, (client) => client<{ id: number }>`SELECT id FROM recon.schema_migrations ORDER BY id`))
        assert.deepStrictEqual(recorded.map((row) => Number(row.id)), migrations.filter((m) => m.id <= release.lastMigration).map((m) => m.id))
        const functionsBefore = yield* Effect.promise(() => functionsOf(db))
        const functionTextsBefore = yield* Effect.promise(() => functionTextsOf(db))
        const templatesBefore = yield* Effect.promise(() => sql(db, (client) => client<{ id: number; rule: string; sample: string }>`
          SELECT id::int AS id, rule, sample FROM recon.shooter_template_recharge WHERE rule_source = 'manual'`))

        // `recon migrate`, as an operator upgrading runs it.
        const migrated = yield* Effect.promise(() => runCommandToEnd(["migrate"], { DATABASE_URL: db }))
        assert.strictEqual(migrated.status, 0, migrated.stderr)
        const pending = migrations.filter((m) => m.id > release.lastMigration).map((m) => `${String(m.id).padStart(4, "0")}_${m.name}`)
        assert.include(migrated.stdout, pending.length === 0 ? "migrations: up to date" : `migrations applied: ${pending.join(", ")}`)

        const applied = yield* Effect.promise(() => sql(db, (client) => client<{ id: number }>`SELECT id FROM recon.schema_migrations ORDER BY id`))
        assert.deepStrictEqual(applied.map((row) => Number(row.id)), migrations.map((m) => m.id))
        const defined = yield* Effect.promise(() => sql(db, (client) => client<{ name: string; version: number; checksum: string }>`
          SELECT name, version, checksum FROM recon.schema_definition ORDER BY name`))
        assert.deepStrictEqual(defined, definitions.map((d) => ({ name: d.name, version: d.version, checksum: definitionChecksum(d) })).sort((a, b) => a.name.localeCompare(b.name)))

        const unchanged = (rows: ReadonlyArray<{ readonly name: string }>) => rows.filter((row) => !release.changedSince.some((name) => row.name.startsWith(name)))
        if (release.sameFunctions) assert.deepStrictEqual(unchanged(yield* Effect.promise(() => functionsOf(db))), unchanged(functionsBefore))
        const unchangedTexts = (texts: ReadonlyArray<string>) => texts.filter((text) => !release.changedSince.some((name) => text.includes(`FUNCTION ${name}`)))
        if (release.sameFunctionTexts) assert.deepStrictEqual(unchangedTexts(yield* Effect.promise(() => functionTextsOf(db))), unchangedTexts(functionTextsBefore))
        const fresh = yield* Effect.promise(() => createMigratedDatabase("upgrade_fresh"))
        assert.deepStrictEqual(yield* Effect.promise(() => schemaOf(db)), yield* Effect.promise(() => schemaOf(fresh)))

        const templates = yield* Effect.promise(() => sql(db, (client) => client<{ key: string | null; rule_source: string }>`
          SELECT builtin_key AS key, rule_source FROM recon.shooter_template_recharge ORDER BY id`))
        assert.deepStrictEqual(templates.filter((t) => t.rule_source === "builtin").map((t) => t.key).sort(), builtins0012.map((t) => t.key).sort())
        assert.deepStrictEqual(
          yield* Effect.promise(() => sql(db, (client) => client`SELECT id::int AS id, rule, sample FROM recon.shooter_template_recharge WHERE rule_source = 'manual'`)),
          templatesBefore
        )
        assert.strictEqual(templatesBefore.length, 1)

        // The release's phone pushes a payment of its pending deposit: parsed, matched, approved, once.
        const [deposit] = yield* Effect.promise(() => sql(db, (client) => client<{ id: number }>`
          SELECT id::int AS id FROM recon.deposit WHERE from_bank_owner = '홍길동' AND status = 'pending'`))
        const wallet = yield* serve(startWallet(db))
        const worker = yield* startWorker(db, wallet.url)
        assert.isTrue(yield* Effect.promise(() => waitForUrl(`${worker.base}/health/live`, 60_000)), worker.output())
        const answer = yield* Effect.promise(() =>
          pushForwarder(worker.base, "legacy-phone", {
            from: "15778000",
            sms: "[Web발신]\n신한 11/22 09:41\n입금 30,000원\n홍길동\n잔액 1,250,000",
            secret: "s-legacy-phone",
            timestamp: Date.now()
          })
        )
        assert.strictEqual(answer.http, 200)
        const [sms] = yield* Effect.promise(() => sql(db, (client) => client<{ id: number }>`
          SELECT id::int AS id FROM recon.shooter_sms WHERE device_id = 'legacy-phone' AND status <> 'rejected'`))
        yield* eventually("approved", Effect.promise(async () => (await smsState(db, sms!.id)).status === "approved"), 60_000)
        const state = yield* Effect.promise(() => walletState(db, deposit!.id))
        assert.deepStrictEqual([state.status, state.smsId, state.ledger.length, Number(state.balance)], ["approved", sms!.id, 1, 30000])
      }), 150_000)
  }
})
