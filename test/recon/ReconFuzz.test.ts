// Schema-violating and random bodies at every route: each answer is a 4xx envelope and the
// database does not change.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { ReconApi } from "../../src/api/ReconApi.ts"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { post, type Running, startRecon } from "../support/recon.ts"

const endpoints = Object.values(ReconApi.groups).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint) => {
    const payload = endpoint.payload.get("application/json")!.schemas[0] as Schema.Codec<unknown, unknown>
    const fields = "fields" in payload ? Object.keys(payload.fields as object) : []
    return { path: endpoint.path as string, payload, fields }
  })
)

let db: string
let server: Running
beforeAll(async () => {
  db = await createMigratedDatabase("fuzz")
  server = await startRecon(db)
  // Something to change: a registration, a device, a phone and an SMS in each state.
  await post(server.url, "/internal/recon/pushsvc/add_device", { device_id: "fuzz-1", format: "smsforwarder" })
  await post(server.url, "/internal/recon/shooter/phone/add", { phone: "01011112222" })
})
afterAll(() => server.close())

const snapshot = () =>
  runSql(db, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tables = ["shooter_device", "shooter_push", "shooter_phone", "shooter_sms", "shooter_template_recharge", "player", "deposit"]
    const out: Record<string, string> = {}
    for (const table of tables) {
      const [row] = yield* sql<{ digest: string | null }>`SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t.id), '')) AS digest
        FROM ${sql.literal(`recon.${table}`)} t`
      out[table] = row!.digest ?? ""
    }
    return out
  }))

const violates = (payload: Schema.Codec<unknown, unknown>) => {
  const decode = Schema.decodeUnknownResult(payload as Schema.Codec<unknown, unknown, never, never>)
  return (value: unknown) => Result.isFailure(decode(value, { onExcessProperty: "error" }))
}

describe("property: bad bodies never change anything", () => {
  it("random JSON values and near-miss objects get a 4xx envelope on every route", async () => {
    const before = await snapshot()
    for (const endpoint of endpoints) {
      const nearMiss = fc.dictionary(fc.constantFrom(...endpoint.fields, "extra"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.jsonValue({ maxDepth: 3 }), nearMiss).filter(violates(endpoint.payload)), async (body) => {
          const answer = await post(server.url, endpoint.path, body)
          assert.isAtLeast(answer.http, 400, `${endpoint.path} ${JSON.stringify(body)} → ${answer.http}`)
          assert.isBelow(answer.http, 500, `${endpoint.path} ${JSON.stringify(body)} → ${JSON.stringify(answer.body)}`)
          assert.strictEqual(answer.body.status, answer.http)
          assert.isString(answer.body.msg)
        }),
        { numRuns: 25 }
      )
      await fc.assert(
        fc.asyncProperty(fc.string({ maxLength: 40 }).filter((s) => { try { JSON.parse(s); return false } catch { return true } }), async (raw) => {
          const answer = await post(server.url, endpoint.path, undefined, { raw })
          assert.strictEqual(answer.http, 400)
          assert.strictEqual(answer.body.msg, "bad_request")
        }),
        { numRuns: 5 }
      )
    }
    assert.deepStrictEqual(await snapshot(), before)
  }, 120_000)
})
