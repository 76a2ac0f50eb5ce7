// Every route of the four services of `all` (recon, wallet, admin, the worker's push port) under
// the hostile mix of test/support/hostile.ts, one request at a time: no answer is a 5xx (or no
// answer), and no refused request (4xx) changes a row of the recon, wallet or admin tables (a
// digest of every table before and after each one).
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createOperator, login } from "../admin/support.ts"
import { startAll } from "../support/allProcess.ts"
import { createMigratedDatabase, layerFor } from "../support/database.ts"
import { hostileMix, send } from "../support/hostile.ts"
import { ADMIN_TOKEN, post, RECON_TOKEN } from "../support/recon.ts"

/** Tables written on the worker's own clock, whatever the requests (the loops' cursors). */
const WRITTEN_BY_THE_WORKER = new Set<string>(["recon.worker_cursor"])
/**
 * Columns the worker writes on its own clock: a registration's listener state, set once the worker
 * has started its listener (after a 200 add_device, so it could land beside the next request: a 409
 * for the same device then seemed to change the table).
 */
const COLUMNS_WRITTEN_BY_THE_WORKER: Record<string, ReadonlyArray<string>> = { "recon.shooter_push": ["listener_status", "last_event_at"] }
const rowText = (name: string) => {
  const columns = COLUMNS_WRITTEN_BY_THE_WORKER[name]
  return columns === undefined ? "t::text" : `(to_jsonb(t)${columns.map((column) => ` - '${column}'`).join("")})::text`
}

/** md5 of each table's rows, by name (`schema.table`), in one statement (on the test's one client: a pool per digest cost a connection per request). */
const digests = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ name: string }>`SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
    WHERE table_schema IN ('recon', 'wallet', 'admin') AND table_type = 'BASE TABLE' ORDER BY 1`
  const names = tables.map((t) => t.name).filter((name) => !WRITTEN_BY_THE_WORKER.has(name))
  const rows = yield* sql.unsafe<{ name: string; digest: string }>(names.map((name) =>
    `SELECT '${name}' AS name, md5(coalesce(string_agg(${rowText(name)}, '|' ORDER BY ${rowText(name)}), '')) AS digest FROM ${name} t`
  ).join(" UNION ALL "))
  return new Map(rows.map((row) => [row.name, row.digest]))
}).pipe(Effect.orDie)

const changed = (before: Map<string, string>, after: Map<string, string>) => [...after].filter(([name, digest]) => before.get(name) !== digest).map(([name]) => name)

describe("every route of the four services under a hostile mix", () => {
  it.live("answers no 5xx, and no refused request changes a table", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("hostile_fuzz"))
      yield* Effect.gen(function*() {
        const all = yield* startAll(db)
        // Something to change: a registration, a phone, a template, an operator.
        yield* Effect.promise(() => post(all.recon, "/internal/recon/pushsvc/add_device", { device_id: "fuzz-1", format: "smsforwarder" }))
        yield* Effect.promise(() => post(all.recon, "/internal/recon/shooter/phone/add", { phone: "01011112222" }))
        yield* Effect.promise(() => createOperator(db, "fuzzer"))
        const session = yield* Effect.promise(() => login(all.admin, "fuzzer"))
        const mix = hostileMix(all, { admin: ADMIN_TOKEN, recon: RECON_TOKEN, session })
        const serverErrors: Array<string> = []
        const stateChanging: Array<string> = []
        const statuses = new Map<number, number>()
        let before = yield* digests
        for (const request of mix) {
          const answer = yield* Effect.promise(() => send(request))
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
          const what = `${request.method} ${request.url.slice(0, 120)} ${(request.body ?? "").slice(0, 60)} → ${answer.status} ${answer.body.slice(0, 200)}`
          if (answer.status >= 500 || answer.status === 0) serverErrors.push(what)
          const after = yield* digests
          if (answer.status >= 400 && answer.status < 500) {
            const tables = changed(before, after)
            if (tables.length > 0) stateChanging.push(`${what} changed ${tables.join(", ")}`)
          }
          before = after
        }
        console.log(`hostile fuzz: ${mix.length} requests; ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(" ")}; ` +
          `${serverErrors.length} × 5xx; ${stateChanging.length} refused requests that changed state`)
        assert.deepStrictEqual(serverErrors, [])
        assert.deepStrictEqual(stateChanging, [])
      }).pipe(Effect.provide(layerFor(db)))
    })), 300_000)
})
