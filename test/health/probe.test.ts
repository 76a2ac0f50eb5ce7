import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { HealthRegistry } from "../../src/health/HealthRegistry.ts"
import * as Heartbeat from "../../src/health/Heartbeat.ts"
import { judge } from "../../src/health/probe.ts"

const probeFile = join(import.meta.dirname, "../../src/health/probe.ts")
const dir = mkdtempSync(join(tmpdir(), "recon-probe-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const loops = ["pushsvc_listener_supervisor", "missing_sms_sync_loop", "sms_id_sync_loop", "phone_whitelist_loop", "parse_loop", "order_match_loop", "chatbot_poll_loop"]

const heartbeat = (options: { ready: boolean; ageSeconds: number; stale?: ReadonlyArray<string> }) =>
  JSON.stringify({
    ready: options.ready,
    pid: 1234,
    written_at: new Date(Date.now() - options.ageSeconds * 1000).toISOString(),
    loops: Object.fromEntries(loops.map((name) => {
      const fresh = !options.stale?.includes(name)
      return [name, { state: fresh ? "running" : "stale", last_success_at: null, ttl_s: 30, fresh, restarts: 0 }]
    }))
  })

// Runs the probe as the container would: a fresh node process, configured through the environment.
// The age it prints is counted on its own clock, somewhere between `before` and `after`: `ages` is
// what it can print for the file's written_at, however long the process took to start. (That time
// is a figure of bench/worker.ts.)
const probe = (name: string, content: string | undefined) => {
  const path = join(dir, name)
  if (content !== undefined) writeFileSync(path, content)
  const before = Date.now()
  const result = spawnSync(process.execPath, [probeFile], {
    env: { ...process.env, SVC_WORKER_HEARTBEAT_FILE: path },
    encoding: "utf8"
  })
  const after = Date.now()
  const ages = () => {
    const writtenAt = Date.parse(JSON.parse(readFileSync(path, "utf8")).written_at)
    const seconds = (now: number) => Math.max(0, Math.floor((now - writtenAt) / 1000))
    return { min: seconds(before), max: seconds(after) }
  }
  return { code: result.status, stdout: result.stdout, path, ages }
}

/** The probe printed `line(age)` for an age it could have counted (see `probe`). */
const assertAged = (result: ReturnType<typeof probe>, pattern: RegExp, line: (age: number) => string) => {
  const age = Number(pattern.exec(result.stdout)?.[1])
  const { min, max } = result.ages()
  assert.isTrue(Number.isInteger(age) && age >= min && age <= max, `${JSON.stringify(result.stdout)}: age between ${min} and ${max} s`)
  assert.strictEqual(result.stdout, line(age))
}

describe("probe", () => {
  it("exits 1 with one line when the file is missing", () => {
    const result = probe("missing.heartbeat", undefined)
    assert.strictEqual(result.code, 1)
    assert.strictEqual(result.stdout, `not ready: heartbeat file ${result.path} missing\n`)
  })

  it("exits 1 when the heartbeat is older than 15 s", () => {
    const result = probe("old.heartbeat", heartbeat({ ready: true, ageSeconds: 42 }))
    assert.strictEqual(result.code, 1)
    assertAged(result, /heartbeat (\d+)s old/, (age) => `not ready: heartbeat ${age}s old\n`)
  })

  it("exits 1 when the worker is not ready, naming the loop", () => {
    const result = probe("not-ready.heartbeat", heartbeat({ ready: false, ageSeconds: 1, stale: ["parse_loop"] }))
    assert.strictEqual(result.code, 1)
    assert.strictEqual(result.stdout, "not ready: loop parse_loop stale\n")
  })

  it("exits 0 when ready and fresh", () => {
    const result = probe("ready.heartbeat", heartbeat({ ready: true, ageSeconds: 2 }))
    assert.strictEqual(result.code, 0)
    assertAged(result, /written (\d+)s ago/, (age) => `ready: 7 loops fresh, written ${age}s ago\n`)
  })

  it.live("accepts the file the worker's registry and heartbeat writer produce", () =>
    Effect.gen(function*() {
      const registry = Context.get(
        yield* Layer.build(HealthRegistry.layer(loops.map((name) => ({ name, ttl: "30 seconds" })))),
        HealthRegistry
      )
      for (const name of loops) yield* registry.reportSuccess(name)
      const path = join(dir, "worker.heartbeat")
      yield* Heartbeat.writeAtomically(path, JSON.stringify(Heartbeat.toHeartbeatJson(yield* registry.snapshot)))
      const result = probe("worker.heartbeat", undefined)
      assert.strictEqual(result.code, 0)
      assertAged(result, /written (\d+)s ago/, (age) => `ready: 7 loops fresh, written ${age}s ago\n`)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it("judges the edge cases", () => {
    const now = Date.parse("2025-01-01T00:00:15.000Z")
    const at = (iso: string, ready = true) => JSON.stringify({ ready, pid: 1, written_at: iso, loops: {} })
    assert.deepStrictEqual(judge("/f", at("2025-01-01T00:00:00.000Z"), now), { ok: true, line: "ready: 0 loops fresh, written 15s ago" })
    assert.deepStrictEqual(judge("/f", at("2024-12-31T23:59:59.999Z"), now), { ok: false, line: "not ready: heartbeat 15s old" })
    assert.deepStrictEqual(judge("/f", "{not json", now), { ok: false, line: "not ready: heartbeat file /f is not JSON" })
    assert.deepStrictEqual(judge("/f", "{}", now), { ok: false, line: "not ready: heartbeat file /f is not a heartbeat" })
    assert.deepStrictEqual(judge("/f", at("2025-01-01T00:00:10.000Z", false), now), {
      ok: false,
      line: "not ready: worker reports not ready, written 5s ago"
    })
    const twoDown = JSON.stringify({
      ready: false,
      written_at: "2025-01-01T00:00:14.000Z",
      loops: { a: { state: "exited", fresh: false }, b: { state: "running", fresh: true }, c: { state: "restarting", fresh: false } }
    })
    assert.deepStrictEqual(judge("/f", twoDown, now), { ok: false, line: "not ready: loops a exited, c restarting" })
    const componentDown = JSON.stringify({
      ready: false,
      written_at: "2025-01-01T00:00:14.000Z",
      loops: { a: { state: "running", fresh: true } },
      components: { change_listener: { state: "running", restarts: 0 }, ingest_batchers: { state: "exited", restarts: 2 } }
    })
    assert.deepStrictEqual(judge("/f", componentDown, now), { ok: false, line: "not ready: component ingest_batchers exited" })
  })
})
