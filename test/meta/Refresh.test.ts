import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { applyRepairs } from "../../src/meta/Doctor.ts"
import { refresh, type RefreshOptions } from "../../src/meta/Refresh.ts"
import { createTestDatabase, runSql } from "../support/database.ts"
import { startFakeNocoBase } from "./support/FakeNocoBase.ts"
import { buildDamagedSvc } from "./support/fixture.ts"

const ACCOUNT = "admin@nocobase.com"
const PASSWORD = "s3cret-Passw0rd"

const run = ({ password, ...options }: Omit<RefreshOptions, "account" | "password" | "say"> & { password?: string }) => {
  const said: Array<string> = []
  return Effect.runPromise(
    refresh({
      account: ACCOUNT,
      password: Redacted.make(password ?? PASSWORD),
      pollInterval: 50,
      waitTimeout: 3_000,
      ...options,
      say: (line) => Effect.sync(() => said.push(line))
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.exit)
  ).then((exit) => ({ exit, said }))
}

/** A damaged schema, a server that loaded it, then the repair applied behind the server's back. */
const repairedBehindTheServer = async (server: { refreshReloads: boolean; restartReloads?: boolean }) => {
  const url = await createTestDatabase("meta")
  await runSql(url, buildDamagedSvc)
  const nocobase = await startFakeNocoBase({ databaseUrl: url, account: ACCOUNT, password: PASSWORD, ...server })
  await runSql(url, applyRepairs("svc"))
  return { url, nocobase }
}

const value = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isFailure(exit)) assert.fail(`refresh failed: ${Cause.pretty(exit.cause)}`)
  return (exit as Exit.Success<A, E>).value
}

describe("meta refresh against a NocoBase-speaking server", () => {
  it("signs in, calls dataSources:refresh on main and finds the running metadata fresh when the server reloads", async () => {
    const { nocobase } = await repairedBehindTheServer({ refreshReloads: true })
    try {
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: false, clearCache: false })
      const report = value(exit)
      assert.isTrue(report.fresh)
      assert.isFalse(report.restarted)
      assert.strictEqual(report.collections, 7) // the synchronised ones (db2cm and dbsync)
      assert.deepStrictEqual(nocobase.calls.slice(0, 3), ["POST auth:signIn", "POST dataSources:refresh", "GET collections:listMeta"])
      assert.isTrue(nocobase.calls.includes("GET fields:list"))
      assert.isFalse(nocobase.calls.some((call) => call.includes("app:")))
      assert.isTrue(nocobase.authorizations.every((header) => /^Bearer [0-9a-f]{32}$/.test(header)))
      assert.include(said.join("\n"), "running metadata: fresh")
      assert.notInclude(said.join("\n"), PASSWORD)
    } finally {
      await nocobase.close()
    }
  })

  it("reports a server that stays stale after dataSources:refresh, without restarting it", async () => {
    const { nocobase } = await repairedBehindTheServer({ refreshReloads: false })
    try {
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: false, clearCache: true })
      const report = value(exit)
      assert.isFalse(report.fresh)
      assert.isTrue(report.problems.every((problem) => problem.kind === "stale"))
      const stale = report.problems.map((problem) => `${problem.collection}.${problem.field}`).sort()
      assert.deepStrictEqual(stale, [
        "order_items.qty", "orders.amount", "orders.code", "orders.quantity", "products.price", "products.rating"
      ])
      const amount = report.problems.find((problem) => problem.field === "amount")!
      assert.include(amount.detail, `running server has interface "decimal" / x-component "Number", database "number" / "InputNumber"`)
      assert.isFalse(nocobase.calls.some((call) => call.includes("app:")))
      assert.include(said.join("\n"), "running metadata: STALE")
      assert.include(said.join("\n"), "--restart")
    } finally {
      await nocobase.close()
    }
  })

  it("with --restart: app:clearCache, app:restart, waits for the server and finds it fresh", async () => {
    const { nocobase } = await repairedBehindTheServer({ refreshReloads: false })
    try {
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: true, clearCache: true })
      const report = value(exit)
      assert.isTrue(report.fresh, said.join("\n"))
      assert.isTrue(report.restarted)
      const clear = nocobase.calls.indexOf("POST app:clearCache")
      const restart = nocobase.calls.indexOf("POST app:restart")
      assert.isTrue(clear !== -1 && restart > clear, nocobase.calls.join(", "))
      assert.isTrue(nocobase.downAnswers() > 0, "the restart window was never observed")
      assert.include(said.join("\n"), "server answers again after")
      assert.match(said.at(-1)!, /running metadata: fresh/)
    } finally {
      await nocobase.close()
    }
  })

  it("with --restart but no page-schema repairs, it does not clear the cache", async () => {
    const { nocobase } = await repairedBehindTheServer({ refreshReloads: false })
    try {
      const { exit } = await run({ baseUrl: nocobase.url, restart: true, clearCache: false })
      assert.isTrue(value(exit).fresh)
      assert.isFalse(nocobase.calls.includes("POST app:clearCache"))
      assert.isTrue(nocobase.calls.includes("POST app:restart"))
    } finally {
      await nocobase.close()
    }
  })

  it("a server still stale after the restart is reported stale", async () => {
    const { nocobase } = await repairedBehindTheServer({ refreshReloads: false, restartReloads: false })
    try {
      const { exit } = await run({ baseUrl: nocobase.url, restart: true, clearCache: false, waitTimeout: 1_000 })
      const report = value(exit)
      assert.isFalse(report.fresh)
      assert.isTrue(report.restarted)
      assert.strictEqual(report.problems.length, 6)
    } finally {
      await nocobase.close()
    }
  })

  it("a database that was never repaired is reported as such, and a restart is not tried", async () => {
    const url = await createTestDatabase("meta")
    await runSql(url, buildDamagedSvc)
    const nocobase = await startFakeNocoBase({ databaseUrl: url, account: ACCOUNT, password: PASSWORD, refreshReloads: true })
    try {
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: true, clearCache: true })
      const report = value(exit)
      assert.isFalse(report.fresh)
      assert.isTrue(report.problems.length > 0 && report.problems.every((problem) => problem.kind === "not-repaired"))
      assert.isFalse(nocobase.calls.includes("POST app:restart"))
      assert.include(said.join("\n"), "meta repair --apply")
    } finally {
      await nocobase.close()
    }
  })

  it("a rejected sign-in fails with the server's message and never shows the password", async () => {
    const { nocobase } = await repairedBehindTheServer({ refreshReloads: true })
    try {
      const { exit, said } = await run({ baseUrl: nocobase.url, restart: false, clearCache: false, password: "wrong-password" })
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) as { _tag: string; step: string; status: number; message: string } : undefined
      assert.deepInclude(error, { _tag: "NocoBaseError", step: "auth:signIn", status: 401 })
      assert.include(error!.message, "incorrect")
      assert.notInclude(error!.message + said.join("\n"), "wrong-password")
      assert.deepStrictEqual(nocobase.calls, ["POST auth:signIn"])
    } finally {
      await nocobase.close()
    }
  })
})
