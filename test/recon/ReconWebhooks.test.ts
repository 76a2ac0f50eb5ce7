// /internal/recon/webhook/* through HTTP on a real database: what an operator may add, that the
// secret never comes back, the lists, and the attempts filtered by event.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { recon, type Running, startRecon } from "../support/recon.ts"

let db: string
let server: Running
let call: ReturnType<typeof recon>
const SECRET = "s3cret-of-sixteen-chars+"

beforeAll(async () => {
  db = await createMigratedDatabase("hookroutes")
  server = await startRecon(db)
  call = recon(server.url)
})
afterAll(() => server.close())

describe("/webhook/add", () => {
  it("stores the URL and the events (all four by default, each once); the secret is never in an answer", async () => {
    const all = await call("/webhook/add", { url: "https://merchant.example/hooks/recon", secret: SECRET })
    assert.strictEqual(all.http, 200, JSON.stringify(all.body))
    assert.deepStrictEqual({ ...all.body.data, id: undefined, created_at: undefined }, {
      id: undefined,
      url: "https://merchant.example/hooks/recon",
      events: ["deposit.approved", "sms.manual_review", "sms.rejected", "balance.gap"],
      pending: 0,
      failed: 0,
      created_at: undefined
    })
    const some = await call("/webhook/add", { url: "http://10.1.2.3:8080/recon", secret: SECRET, events: ["balance.gap", "deposit.approved", "balance.gap"] })
    assert.deepStrictEqual(some.body.data.events, ["balance.gap", "deposit.approved"])
    const listed = await call("/webhook/list", { page_size: 200 })
    assert.strictEqual(listed.http, 200)
    assert.deepStrictEqual(listed.body.data.items.map((w: any) => w.id), [some.body.data.id, all.body.data.id])
    for (const text of [JSON.stringify(all.body), JSON.stringify(some.body), JSON.stringify(listed.body)]) assert.notInclude(text, SECRET)
  })

  it("refuses what is no usable URL (400), a link-local or metadata target (422), a short secret or an unknown event (400); nothing stored", async () => {
    const before = (await call("/webhook/list", {})).body.data.total
    const cases: Array<[unknown, number, RegExp]> = [
      [{ url: "ftp://merchant.example/", secret: SECRET }, 400, /url/],
      [{ url: "https://user:pw@merchant.example/", secret: SECRET }, 400, /user:password/],
      [{ url: "http://169.254.169.254/latest/meta-data/", secret: SECRET }, 422, /169\.254\.169\.254/],
      [{ url: "http://metadata.google.internal/", secret: SECRET }, 422, /metadata/],
      [{ url: "https://merchant.example/", secret: "short" }, 400, /secret/],
      [{ url: "https://merchant.example/", secret: SECRET, events: ["deposit.created"] }, 400, /events/],
      [{ url: "https://merchant.example/", secret: SECRET, events: [] }, 400, /events/],
      [{ url: "https://merchant.example/" }, 400, /secret/]
    ]
    for (const [body, status, detail] of cases) {
      const answer = await call("/webhook/add", body)
      assert.strictEqual(answer.http, status, JSON.stringify([body, answer.body]))
      assert.match(JSON.stringify(answer.body.data), detail)
      assert.notInclude(JSON.stringify(answer.body), SECRET)
    }
    assert.strictEqual((await call("/webhook/list", {})).body.data.total, before)
  })
})

describe("/webhook/deliveries", () => {
  it("one item per attempt, newest first, filtered by event_id", async () => {
    const hook = (await call("/webhook/add", { url: "http://127.0.0.1:9/hook", secret: SECRET, events: ["sms.rejected"] })).body.data.id
    await runSql(db, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // Two events as the outbox writes them, and the attempts webhook_delivery_loop records.
      for (const n of [1, 2]) {
        const [event] = yield* sql<{ id: bigint }>`INSERT INTO recon.webhook_event (type, data) VALUES ('sms.rejected', ${JSON.stringify({ sms_id: n })}::jsonb) RETURNING id`
        const [delivery] = yield* sql<{ id: bigint }>`INSERT INTO recon.webhook_delivery (event_id, webhook_id) VALUES (${event!.id}, ${hook}) RETURNING id`
        yield* sql`INSERT INTO recon.webhook_attempt (delivery_id, event_id, webhook_id, attempt, status, http_status, error, at) VALUES
          (${delivery!.id}, ${event!.id}, ${hook}, 1, 'retrying', 500, 'HTTP 500', ${new Date(Date.UTC(2026, 6, 9, 1, n))}),
          (${delivery!.id}, ${event!.id}, ${hook}, 2, 'delivered', 200, NULL, ${new Date(Date.UTC(2026, 6, 9, 2, n))})`
      }
    }).pipe(Effect.orDie))
    const all = await call("/webhook/deliveries", { webhook_id: hook })
    assert.strictEqual(all.http, 200)
    assert.strictEqual(all.body.data.total, 4)
    assert.deepStrictEqual(all.body.data.items.map((a: any) => [a.attempt, a.status]), [[2, "delivered"], [2, "delivered"], [1, "retrying"], [1, "retrying"]])
    const eventId = all.body.data.items[0].event_id
    const one = await call("/webhook/deliveries", { event_id: eventId })
    assert.deepStrictEqual(one.body.data.items.map((a: any) => ({ ...a, at: undefined })), [
      { event_id: eventId, webhook_id: hook, type: "sms.rejected", attempt: 2, status: "delivered", http_status: 200, error: null, at: undefined },
      { event_id: eventId, webhook_id: hook, type: "sms.rejected", attempt: 1, status: "retrying", http_status: 500, error: "HTTP 500", at: undefined }
    ])
    assert.deepStrictEqual([one.body.data.page, one.body.data.page_size, one.body.data.total], [1, 20, 2])
    assert.strictEqual((await call("/webhook/deliveries", { event_id: 999_999 })).body.data.total, 0)
  })
})
