// `node src/main.ts worker` as a real process delivering webhooks: SIGKILLed while requests are in
// flight, nothing is lost; a second worker sends what the first had claimed once its lease has run
// out (the database's record of the lease and of the attempts says so), with the same event id and body.
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { LEASE } from "../../src/loops/WebhookDeliveryLoop.ts"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { spawnCommand, waitForUrl } from "../support/process.ts"
import { eventuallyAsync } from "../support/time.ts"
import { webhookReceiver } from "../support/webhookReceiver.ts"

const SECRET = "process-secret-0123456789"

const startWorker = async (databaseUrl: string) => {
  const port = await freePort()
  const spawned = spawnCommand(["worker"], {
    DATABASE_URL: databaseUrl,
    SVC_PUSH_PORT: String(port),
    SVC_WORKER_HEARTBEAT_FILE: join(mkdtempSync(join(tmpdir(), "recon-hookproc-")), "hb"),
    SVC_INTERNAL_SERVICE_TOKEN_RECON: "test-recon-token-0123456789",
    LOG_FORMAT: "json",
    LOG_LEVEL: "warn"
  })
  return { ...spawned, base: `http://127.0.0.1:${port}` }
}

const until = (what: string, check: () => Promise<boolean>, timeoutMs: number) => eventuallyAsync(what, check, { timeoutMs, everyMs: 50 })

describe("worker process", () => {
  it("SIGKILLed mid-delivery: every event is delivered by the next worker, the same id and bytes", async () => {
    const scope = Scope.makeUnsafe()
    try {
      // The first four requests are never answered: the worker dies with them in flight.
      const receiver = await Effect.runPromise(Scope.provide(webhookReceiver(SECRET, (n) => n < 4 ? "hold" : { status: 200 }), scope))
      const db = await createMigratedDatabase("hookkill")
      const events = 20
      await runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO recon.webhook (url, secret, events) VALUES (${receiver.url}, ${SECRET}, '{sms.rejected}')`
        yield* sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status)
          SELECT 'dev-k', '16449999', 'sms ' || g, 'sms' || g, now(), 'unmatched' FROM generate_series(1, ${events}) AS g`
        // A person rejects them all at once: twenty events, written by the trigger.
        yield* sql`UPDATE recon.shooter_sms SET status = 'rejected'`
      }))

      const first = await startWorker(db)
      assert.isTrue(await waitForUrl(`${first.base}/health/live`), first.output())
      await until("requests in flight", async () => receiver.held() === 4 && receiver.received.length >= 4, 20_000)
      first.child.kill("SIGKILL")
      assert.strictEqual(await first.exited, null, "killed by a signal")
      // What was in flight at the kill: claimed by the dead worker for LEASE, no attempt recorded.
      const inFlight = receiver.received.filter((r) => r.answer === "hold").map((r) => Number(r.event.id))
      const leases = await runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ event_id: bigint; attempts: number; lease_ms: number; leased_until_ms: number }>`
          SELECT event_id, attempts, (extract(epoch FROM next_at - first_attempt_at) * 1000)::float8 AS lease_ms,
            (extract(epoch FROM next_at) * 1000)::float8 AS leased_until_ms
          FROM recon.webhook_delivery WHERE event_id IN ${sql.in(inFlight)} ORDER BY event_id`
      }))
      assert.deepStrictEqual(
        leases.map((l) => [Number(l.event_id), l.attempts, l.lease_ms]),
        [...inFlight].sort((a, b) => a - b).map((id) => [id, 0, Duration.toMillis(LEASE)])
      )

      const second = await startWorker(db)
      const delivered = () => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.webhook_delivery WHERE status = 'delivered'`
        return Number(row!.n)
      }))
      await until("every event delivered", async () => (await delivered()) === events, Duration.toMillis(LEASE) + 30_000)
      second.child.kill("SIGTERM")
      assert.strictEqual(await second.exited, 0, second.output())

      const answered = receiver.received.filter((r) => r.answer !== "hold")
      assert.deepStrictEqual(new Set(answered.map((r) => r.event.id)).size, events)
      assert.isTrue(receiver.received.every((r) => r.verified && r.eventId === String(r.event.id)))
      // What was in flight at the kill was sent again, identical, and not before its lease ran out:
      // its first recorded attempt (the second worker's) is at or past the dead worker's lease.
      for (const lost of receiver.received.filter((r) => r.answer === "hold")) {
        const again = answered.filter((r) => r.event.id === lost.event.id)
        assert.isAtLeast(again.length, 1)
        assert.isTrue(again.every((r) => r.body === lost.body))
      }
      const firstAttempts = await runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ event_id: bigint; at_ms: number }>`
          SELECT event_id, (extract(epoch FROM at) * 1000)::float8 AS at_ms FROM recon.webhook_attempt
          WHERE event_id IN ${sql.in(inFlight)} AND attempt = 1 ORDER BY event_id`
      }))
      assert.deepStrictEqual(firstAttempts.map((a) => Number(a.event_id)), leases.map((l) => Number(l.event_id)))
      firstAttempts.forEach((a, k) => assert.isAtLeast(a.at_ms, leases[k]!.leased_until_ms, `event ${a.event_id} sent again before its lease ran out`))
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 90_000)
})
