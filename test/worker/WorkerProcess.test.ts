// `node src/main.ts worker` as a real process: probe and SIGTERM, the supervisor giving up (exit 1),
// and SIGKILL while webhooks arrive (every SMS answered 200 is stored exactly once after a resend).
import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from "../../src/commands/NodeFlags.ts"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { probe, spawnCommand, spawnScript, waitForUrl } from "../support/process.ts"
import { pushForwarder, register, smsRows } from "../support/worker.ts"
import { eventuallyAsync } from "../support/time.ts"

const heartbeatPath = () => join(mkdtempSync(join(tmpdir(), "recon-hb-")), "worker.heartbeat")

const startWorker = async (databaseUrl: string, heartbeatFile: string) => {
  const port = await freePort()
  const spawned = spawnCommand(["worker"], {
    DATABASE_URL: databaseUrl,
    SVC_PUSH_PORT: String(port),
    SVC_WORKER_HEARTBEAT_FILE: heartbeatFile,
    SVC_INTERNAL_SERVICE_TOKEN_RECON: "test-recon-token-0123456789",
    LOG_FORMAT: "json",
    LOG_LEVEL: "warn"
  })
  return { ...spawned, base: `http://127.0.0.1:${port}` }
}

describe("worker process", () => {
  it("serves its probes, passes `probe` once ready, and on SIGTERM exits 0 leaving a not-ready heartbeat", async () => {
    const db = await createMigratedDatabase("wproc")
    const heartbeat = heartbeatPath()
    const worker = await startWorker(db, heartbeat)
    assert.isTrue(await waitForUrl(`${worker.base}/health/ready`), worker.output())
    const live = await fetch(`${worker.base}/health/live`)
    assert.strictEqual(live.status, 200)
    // It replaced itself (same pid) with the service flags and environment of commands/NodeFlags.ts.
    const proc = (file: string) => readFileSync(`/proc/${worker.child.pid}/${file}`, "utf8").split("\0")
    for (const flag of SERVICE_NODE_FLAGS) assert.include(proc("cmdline"), flag)
    for (const [key, value] of Object.entries(SERVICE_ENV)) assert.include(proc("environ"), `${key}=${value}`)
    let verdict: ReturnType<typeof probe> | undefined
    await eventuallyAsync("the probe passing", async () => (verdict = probe(heartbeat)).code === 0, { everyMs: 100, detail: () => verdict?.line ?? "" })
    assert.strictEqual(verdict!.code, 0, verdict!.line)
    assert.match(verdict!.line, /^ready: /)
    worker.child.kill("SIGTERM")
    assert.strictEqual(await worker.exited, 0, worker.output())
    const after = probe(heartbeat)
    assert.strictEqual(after.code, 1)
    assert.isFalse(JSON.parse(readFileSync(heartbeat, "utf8")).ready)
  }, 40_000)

  it("exits with code 1 once a loop has been restarted 5 times within 60 s", async () => {
    const db = await createMigratedDatabase("wdie")
    const heartbeat = heartbeatPath()
    const worker = spawnScript(["test/support/dyingWorker.ts"], { DATABASE_URL: db, SVC_WORKER_HEARTBEAT_FILE: heartbeat, LOG_FORMAT: "json" })
    assert.strictEqual(await worker.exited, 1, worker.output())
    assert.match(worker.output(), /child parse_loop exited after 5 restarts within 60000 ms/)
    assert.strictEqual(probe(heartbeat).code, 1)
  }, 40_000)

  it("killed with SIGKILL while webhooks arrive: every SMS answered 200 is stored, and each SMS once, after a restart and a resend", async () => {
    const db = await createMigratedDatabase("wkill")
    await register(db, { deviceId: "kill-1", format: "smsforwarder", secret: "k-secret" })
    const texts = Array.from({ length: 400 }, (_, i) => `[Web발신]\n신한 11/22 09:${String(i % 60).padStart(2, "0")}\n입금 ${10_000 + i}원\n김철수\n잔액 ${5_000_000 + i}`)
    // Each SMS its own millisecond, as a phone sends them: a signature covers only the timestamp (replays are refused).
    const timestamps = texts.map((_, i) => Date.now() + i)
    const send = (base: string, i: number) =>
      pushForwarder(base, "kill-1", { from: "15778000", sms: texts[i]!, secret: "k-secret", timestamp: timestamps[i]! })

    const first = await startWorker(db, heartbeatPath())
    assert.isTrue(await waitForUrl(`${first.base}/health/live`), first.output())
    const acked = new Map<number, number>()
    let next = 0
    let killed = false
    await Promise.all(Array.from({ length: 20 }, async () => {
      while (next < texts.length) {
        const i = next++
        const answer = await send(first.base, i).catch(() => undefined)
        if (answer?.http === 200) acked.set(i, answer.body.data.sms_id)
        if (!killed && acked.size >= 120) {
          killed = true
          first.child.kill("SIGKILL")
        }
      }
    }))
    assert.strictEqual(await first.exited, null, "killed by a signal")
    assert.isAbove(acked.size, 100)
    assert.isBelow(acked.size, texts.length, "the kill happened mid-stream")
    // Every acknowledged SMS is in the database, under the id it was acknowledged with.
    const stored = await smsRows(db, ["kill-1"])
    const byId = new Map(stored.map((row) => [row.id, row]))
    for (const [i, id] of acked) assert.strictEqual(byId.get(id)?.body, texts[i])

    const second = await startWorker(db, heartbeatPath())
    assert.isTrue(await waitForUrl(`${second.base}/health/live`), second.output())
    const resent = await Promise.all(texts.map((_, i) => send(second.base, i)))
    assert.isTrue(resent.every((answer) => answer.http === 200))
    second.child.kill("SIGTERM")
    assert.strictEqual(await second.exited, 0)

    const rows = await smsRows(db, ["kill-1"])
    for (const text of texts) {
      const copies = rows.filter((row) => row.body === text)
      const originals = copies.filter((row) => row.status !== "duplicate")
      assert.strictEqual(originals.length, 1, `one original of: ${text}`)
      assert.isTrue(copies.filter((row) => row.status === "duplicate").every((row) => row.duplicate_of === originals[0]!.id))
    }
    // Acknowledged before the kill: the resend found them and was marked a duplicate.
    for (const [i] of acked) assert.isTrue(resent[i]!.body.data.duplicate)
  }, 60_000)
})
