// `meta refresh` against a local server speaking NocoBase's wire format, for the odd answers
// (stale in one respect only, 5xx, no answer, never back after a restart). The real server's
// behaviour is covered by RealNocoBase.nocobase.ts (`npm run test:nocobase`).
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { SqlClient } from "effect/sql"
import { applyRepairs, latestRun } from "../../src/meta/Doctor.ts"
import { refresh, type RefreshOptions } from "../../src/meta/Refresh.ts"
import { createTestDatabase, runSql } from "../support/database.ts"
import { type FakeNocoBaseOptions, startFakeNocoBase } from "./support/FakeNocoBase.ts"
import { buildDamagedSvc } from "./support/fixture.ts"

const ACCOUNT = "admin@nocobase.com"
const PASSWORD = "s3cret-Passw0rd"
const GUID = "0b7c6a52-0000-4000-8000-00000000000a"

const run = ({ password, ...options }: Omit<RefreshOptions, "account" | "password" | "say"> & { password?: string }) => {
  const said: Array<string> = []
  return Effect.runPromise(
    refresh({
      account: ACCOUNT,
      password: Redacted.make(password ?? PASSWORD),
      pollInterval: 50,
      waitTimeout: 20_000,
      ...options,
      say: (line) => Effect.sync(() => said.push(line))
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.exit)
  ).then((exit) => ({ exit, said }))
}

type Server = Omit<FakeNocoBaseOptions, "databaseUrl" | "account" | "password">

/** A damaged schema with an order, a server that loaded it (and cached its pages), then the repair applied behind its back. */
const repairedBehindTheServer = async (server: Server) => {
  const url = await createTestDatabase("meta")
  await runSql(url, buildDamagedSvc)
  await runSql(url, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO svc.orders (guid, code, amount, quantity) VALUES (${GUID}, 'A-1', 12.5, 3)`
  }))
  const nocobase = await startFakeNocoBase({ databaseUrl: url, account: ACCOUNT, password: PASSWORD, ...server })
  await runSql(url, applyRepairs("svc"))
  const latest = await runSql(url, latestRun("svc"))
  return { url, nocobase, run: latest! }
}

const value = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isFailure(exit)) assert.fail(`refresh failed: ${Cause.pretty(exit.cause)}`)
  return (exit as Exit.Success<A, E>).value
}

const failure = <A, E>(exit: Exit.Exit<A, E>) => {
  assert.isTrue(Exit.isFailure(exit), "expected a failure")
  return (Exit.isFailure(exit) ? Cause.squash(exit.cause) : {}) as { _tag: string; step: string; status: number | null; message: string }
}

const targets = (report: { problems: ReadonlyArray<{ target: string }> }) => [...new Set(report.problems.map((problem) => problem.target))].sort()

describe("meta refresh against a NocoBase-speaking server", () => {
  it("the latest run lists every column value it wrote, and the page each repaired node belongs to", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: true })
    await nocobase.close()
    assert.strictEqual(latest.rows.length, 21)
    assert.deepInclude(latest.rows, {
      table: "fields", key: "f_orders_amount", collection: "orders", column: "interface", before: "decimal", after: "number"
    })
    assert.strictEqual(latest.pageRoots["f_orders_amount"], "p_orders")
    assert.strictEqual(latest.pageRoots["t_items"], "b_items")
  })

  it("signs in, calls dataSources:refresh on main and finds every repaired value served when the server reloads", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: true })
    try {
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: false, run: latest })
      const report = value(exit)
      assert.isTrue(report.fresh, said.join("\n"))
      assert.isFalse(report.restarted)
      assert.deepStrictEqual(report.checked, { collections: 4, fields: 7, pages: 6, records: 1, values: 39 })
      assert.deepStrictEqual(nocobase.calls.slice(0, 3), ["POST auth:signIn", "POST dataSources:refresh", "GET collections:listMeta"])
      for (const call of ["GET fields:list", "GET uiSchemas:getJsonSchema/t_orders", "GET uiSchemas:getJsonSchema/p_orders", "GET orders:list", "GET orders:get"]) {
        assert.include(nocobase.calls, call)
      }
      assert.isFalse(nocobase.calls.some((call) => call.includes("app:")))
      assert.isTrue(nocobase.authorizations.every((header) => /^Bearer [0-9a-f]{32}$/.test(header)))
      assert.include(said.join("\n"), "running metadata: fresh, serves every repaired value")
      assert.include(said.join("\n"), "note  products: no record to fetch by guid")
      assert.notInclude(said.join("\n"), PASSWORD)
    } finally {
      await nocobase.close()
    }
  })

  it("reports a server stale in collection options, fields, page nodes and records, without restarting it", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: false, preloadPages: true })
    try {
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: false, run: latest })
      const report = value(exit)
      assert.isFalse(report.fresh)
      assert.isTrue(report.problems.every((problem) => problem.kind === "stale"))
      assert.deepStrictEqual(targets(report), ["collection", "field", "page", "record"])
      const lines = said.join("\n")
      assert.include(lines, `stale  collection  orders  options.filterTargetKey: running server has (absent), repaired "guid"`)
      assert.include(lines, `stale  field  orders.amount  interface: running server has "decimal", repaired "number"`)
      assert.include(lines, `stale  field  orders.amount  options.uiSchema.x-component: running server has "Number", repaired "InputNumber"`)
      assert.include(lines, `stale  page  uiSchema t_orders  schema.x-component-props.rowKey: getJsonSchema/t_orders serves "id", repaired "guid"`)
      assert.include(lines, `stale  record  orders  orders:get?filterByTk=${GUID} answered HTTP 400: Invalid SQL column or table reference`)
      assert.include(lines, "run `meta refresh --restart` (app:clearCache and app:restart)")
      assert.isFalse(nocobase.calls.some((call) => call.includes("app:")))
    } finally {
      await nocobase.close()
    }
  })

  it("a page node cached in its page is stale even when the node itself is served fresh", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: true, preloadPages: ["p_orders"] })
    try {
      const report = value((await run({ baseUrl: nocobase.url, restart: false, run: latest })).exit)
      assert.deepStrictEqual(targets(report), ["page"])
      const details = report.problems.map((problem) => `${problem.subject}: ${problem.detail}`)
      assert.include(details, `uiSchema t_orders: schema.x-component-props.rowKey: getJsonSchema/p_orders (its page) serves "id", repaired "guid"`)
      assert.include(details, `uiSchema f_orders_amount: schema.x-component: getJsonSchema/p_orders (its page) serves "Number", repaired "InputNumber"`)
    } finally {
      await nocobase.close()
    }
  })

  it("with --restart: app:clearCache and app:restart, waits for the server and finds it serving the repair", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: false, preloadPages: true })
    try {
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: true, run: latest })
      const report = value(exit)
      assert.isTrue(report.fresh, said.join("\n"))
      assert.isTrue(report.restarted && report.cacheCleared)
      const clear = nocobase.calls.indexOf("POST app:clearCache")
      const restart = nocobase.calls.indexOf("POST app:restart")
      assert.isTrue(clear !== -1 && restart > clear, nocobase.calls.join(", "))
      assert.isTrue(nocobase.downAnswers() > 0, "the restart window was never observed")
      assert.include(said.join("\n"), "server answers again after")
      assert.match(said.filter((line) => line.startsWith("running metadata:")).at(-1)!, /running metadata: fresh/)
    } finally {
      await nocobase.close()
    }
  })

  it("only page nodes stale: --restart clears the cache and does not restart", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: true, preloadPages: true })
    try {
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: true, run: latest })
      const report = value(exit)
      assert.isTrue(report.fresh, said.join("\n"))
      assert.isTrue(report.cacheCleared)
      assert.isFalse(report.restarted)
      assert.include(nocobase.calls, "POST app:clearCache")
      assert.notInclude(nocobase.calls, "POST app:restart")
      assert.include(said.join("\n"), "stale  page  uiSchema t_orders")
    } finally {
      await nocobase.close()
    }
  })

  it("collection options and fields stale but no page node: --restart restarts without clearing the cache", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: false })
    try {
      const { exit } = await run({ baseUrl: nocobase.url, restart: true, run: latest })
      const report = value(exit)
      assert.isTrue(report.fresh)
      assert.isFalse(report.cacheCleared)
      assert.notInclude(nocobase.calls, "POST app:clearCache")
      assert.include(nocobase.calls, "POST app:restart")
    } finally {
      await nocobase.close()
    }
  })

  it("a server still stale after the restart is reported stale", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: false, restartReloads: false })
    try {
      const { exit } = await run({ baseUrl: nocobase.url, restart: true, run: latest, waitTimeout: 1_000 })
      const report = value(exit)
      assert.isFalse(report.fresh)
      assert.isTrue(report.restarted)
      assert.deepStrictEqual(targets(report), ["collection", "field", "record"])
    } finally {
      await nocobase.close()
    }
  })

  it("a server that never comes back after app:restart fails after the wait, naming the step", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: false, restartMs: Infinity })
    try {
      const { exit } = await run({ baseUrl: nocobase.url, restart: true, run: latest, waitTimeout: 600 })
      const error = failure(exit)
      assert.deepInclude(error, { _tag: "NocoBaseError", step: "app:restart" })
      assert.include(error.message, "did not answer within")
      assert.isTrue(nocobase.downAnswers() > 0)
    } finally {
      await nocobase.close()
    }
  })

  it("a 5xx answer fails with the step, the status and the server's message", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: true, failWith: { action: "collections:listMeta", status: 502 } })
    try {
      const error = failure((await run({ baseUrl: nocobase.url, restart: true, run: latest })).exit)
      assert.deepInclude(error, { _tag: "NocoBaseError", step: "collections:listMeta", status: 502 })
      assert.include(error.message, "injected 502")
      assert.notInclude(nocobase.calls, "POST app:restart")
    } finally {
      await nocobase.close()
    }
  })

  it("a server that does not answer a call fails after the request timeout", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: true, hang: "collections:listMeta" })
    try {
      const error = failure((await run({ baseUrl: nocobase.url, restart: false, run: latest, requestTimeout: 300 })).exit)
      assert.deepInclude(error, { _tag: "NocoBaseError", step: "collections:listMeta", status: null })
      assert.include(error.message, "no answer within")
    } finally {
      await nocobase.close()
    }
  })

  it("a value changed in the database since the run is reported as changed, and no restart is tried for it", async () => {
    const { url, nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: true })
    try {
      await runSql(url, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE svc.fields SET interface = 'decimal' WHERE key = 'f_orders_amount'`
      }))
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: true, run: latest })
      const report = value(exit)
      assert.isFalse(report.fresh)
      assert.deepStrictEqual(report.problems.map((problem) => `${problem.kind} ${problem.subject}`), ["changed orders.amount"])
      assert.include(said.join("\n"), `interface: fields:list (the database) has "decimal", repaired "number", since run ${latest.runId}`)
      assert.isFalse(nocobase.calls.some((call) => call.includes("app:")))
    } finally {
      await nocobase.close()
    }
  })

  it("without the repair log it compares the synchronised collections' fields with the database, and clears the cache on restart", async () => {
    const { nocobase } = await repairedBehindTheServer({ refreshReloads: false })
    try {
      const stale = value((await run({ baseUrl: nocobase.url, restart: false })).exit)
      assert.deepStrictEqual(targets(stale), ["field"])
      assert.include(stale.problems.map((problem) => problem.subject), "orders.amount")
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: true })
      const report = value(exit)
      assert.isTrue(report.fresh, said.join("\n"))
      assert.isTrue(report.cacheCleared && report.restarted)
      assert.include(said.join("\n"), "no repair log")
    } finally {
      await nocobase.close()
    }
  })

  it("a rejected sign-in fails with the server's message and never shows the password", async () => {
    const { nocobase, run: latest } = await repairedBehindTheServer({ refreshReloads: true })
    try {
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: false, run: latest, password: "wrong-password" })
      const error = failure(exit)
      assert.deepInclude(error, { _tag: "NocoBaseError", step: "auth:signIn", status: 401 })
      assert.include(error.message, "incorrect")
      assert.notInclude(error.message + said.join("\n"), "wrong-password")
      assert.deepStrictEqual(nocobase.calls, ["POST auth:signIn"])
    } finally {
      await nocobase.close()
    }
  })
})
