// match.suggestions of /shooter/sms/get on a real database (DESIGN section 11): near misses of
// each kind among many unrelated pending deposits, none for unrelated names, deposits taken or no
// longer pending left out, only for unmatched and manual_review SMS; and the loose name key of the
// database and of the ranking agree.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { looseNameKey } from "../../src/domain/Suggestions.ts"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { recon, type Running, startRecon } from "../support/recon.ts"

let db: string
let server: Running
let call: ReturnType<typeof recon>

const query = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  runSql(db, Effect.gen(function*() {
    return yield* f(yield* SqlClient.SqlClient)
  }).pipe(Effect.orDie))

let seq = 0
const sms = (status: string, payer: string | null, amount: string | null, extra: { deposit_id?: number; match?: unknown } = {}) =>
  query((sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
      (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount, deposit_id, match_detail)
    VALUES ('dev-s', '16449999', ${`[KB] ${payer} 입금 ${amount} #${++seq}`}, ${`sg${seq}`}, now(), ${status}, 'KB국민', ${payer},
      ${amount}, ${extra.deposit_id ?? null}, ${extra.match === undefined ? null : JSON.stringify(extra.match)}::jsonb) RETURNING id`,
  (rows) => Number(rows[0]!.id)))

const deposit = (owner: string, amount: string, status = "pending") =>
  query((sql) => Effect.map(sql<{ id: bigint }>`
    WITH p AS (INSERT INTO recon.player (name) VALUES (${owner}) RETURNING id)
    INSERT INTO recon.deposit (player_id, from_bank_owner, amount, status) SELECT id, ${owner}, ${amount}, ${status} FROM p RETURNING id`,
  (rows) => Number(rows[0]!.id)))

const suggestions = async (id: number) => {
  const answer = await call("/shooter/sms/get", { id })
  assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
  return answer.body.data.match?.suggestions as Array<any> | undefined
}

beforeAll(async () => {
  db = await createMigratedDatabase("suggest")
  server = await startRecon(db)
  call = recon(server.url)
  // A realistic crowd: 20,000 pending deposits of other names, every amount.
  await query((sql) => sql`
    WITH p AS (INSERT INTO recon.player (name) SELECT '고객' || g FROM generate_series(1, 20000) AS g RETURNING id, name)
    INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT id, name, (1 + id % 100) * 1000 FROM p`)
}, 60_000)
afterAll(() => server.close())

describe("sms/get of an unmatched SMS suggests near misses", () => {
  it("one of each kind, with its reasons, a score, and the deposit's player and owner", async () => {
    const cases = [
      { payer: "김.민준", owner: "김민준", amount: "50000", reasons: ["name_separators"] },
      { payer: "coin1147 박석호", owner: "박석호", amount: "50000", reasons: ["name_prefix"] },
      { payer: "국민김철수", owner: "김철수", amount: "70000", reasons: ["name_prefix"] },
      { payer: "(주)패러블엔터", owner: "(주)패러블엔터테인먼트", amount: "1000000", reasons: ["name_truncated"] },
      { payer: "이*름", owner: "이푸름", amount: "30000", reasons: ["masked_name"] },
      { payer: "*서연", owner: "이서연", amount: "30000", reasons: ["masked_name"] },
      { payer: "정우성", owner: "정우성", amount: "50500", depositAmount: "50000", reasons: ["amount_differs"] }
    ]
    for (const c of cases) {
      const id = await deposit(c.owner, c.depositAmount ?? c.amount)
      const smsId = await sms("unmatched", c.payer, c.amount)
      const found = await suggestions(smsId)
      assert.isDefined(found, c.payer)
      const mine = found!.find((s) => s.deposit_id === id)
      assert.isDefined(mine, `${c.payer}: ${JSON.stringify(found)}`)
      assert.deepStrictEqual(mine.reasons, c.reasons, c.payer)
      assert.strictEqual(mine.from_bank_owner, c.owner)
      assert.strictEqual(mine.amount, c.depositAmount ?? c.amount)
      assert.isNumber(mine.player_id)
      assert.isTrue(mine.score > 0 && mine.score <= 1)
    }
  })

  it("sum_of_sms: two SMS of one payer that add up to a deposit, each SMS pointing at it", async () => {
    const id = await deposit("한가람", "100000")
    const first = await sms("unmatched", "한가람", "60000")
    const second = await sms("manual_review", "한 가람", "40000")
    for (const [smsId, other] of [[first, second], [second, first]] as const) {
      const found = await suggestions(smsId)
      assert.deepStrictEqual(found!.map((s) => [s.deposit_id, s.reasons, s.sms_ids]), [[id, ["sum_of_sms"], [smsId, other]]])
    }
  })

  it("[] for a payer no pending deposit resembles, and nothing from the crowd", async () => {
    assert.deepStrictEqual(await suggestions(await sms("unmatched", "아무개", "12345")), [])
    // 고객12 is truncated by nobody: the crowd's names are 고객1…고객20000, and 고객12 is one of them exactly.
    const found = await suggestions(await sms("unmatched", "고객12", "999000"))
    assert.deepStrictEqual(found, [])
  })

  it("leaves out deposits no longer pending, and one another SMS is being approved against", async () => {
    const expired = await deposit("오지호", "20000", "expired")
    const taken = await deposit("오지호", "20000")
    await sms("approving", "오지호", "20000", { deposit_id: taken })
    const free = await deposit("오지호", "20000")
    const found = await suggestions(await sms("unmatched", "오.지호", "20000"))
    assert.deepStrictEqual(found!.map((s) => s.deposit_id), [free])
    assert.notInclude(found!.map((s) => s.deposit_id), expired)
  })

  it("only for unmatched and manual_review SMS; a manual review keeps its candidates beside them", async () => {
    const a = await deposit("배수지", "10000")
    const b = await deposit("배수지", "10000")
    const near = await deposit("배수지", "10500")
    const review = await sms("manual_review", "배수지", "10000", { match: { decision: "manual_review", candidates: [{ deposit_id: a }, { deposit_id: b }] } })
    const answer = await call("/shooter/sms/get", { id: review })
    assert.deepStrictEqual(answer.body.data.match.candidates.map((c: any) => c.deposit_id), [a, b])
    assert.deepStrictEqual(answer.body.data.match.suggestions.map((s: any) => [s.deposit_id, s.reasons]), [[near, ["amount_differs"]]])
    for (const status of ["parsed", "approved", "rejected", "ignored"]) {
      assert.isUndefined(await suggestions(await sms(status, "배수지", "10500")), status)
    }
  })
})

describe("the loose name key", () => {
  it("is the same in the database (recon.loose_name_key) and in the ranking", async () => {
    const alphabet = fc.constantFrom(..."김이박민준ㆍ·._-()[]ＫＢkbAZ0９ *＊\u3000\u00a0\u200b\u2027㈜", "(주)")
    const names = fc.sample(fc.array(alphabet, { minLength: 1, maxLength: 8 }).map((a) => a.join("")), 300)
    const fromSql = await query((sql) => sql<{ k: string | null }>`
      SELECT recon.loose_name_key(n) AS k FROM jsonb_array_elements_text(${JSON.stringify(names)}::jsonb) WITH ORDINALITY AS x(n, i) ORDER BY i`)
    assert.deepStrictEqual(fromSql.map((r) => r.k), names.map(looseNameKey))
  })
})
