import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Context, DateTime, Duration, Effect, FileSystem, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { HeartbeatJson } from "../../src/domain/HeartbeatJson.ts"
import { HealthRegistry } from "../../src/health/HealthRegistry.ts"
import * as Heartbeat from "../../src/health/Heartbeat.ts"
import { settle } from "../support/time.ts"

// An in-memory file system that records each write and rename, so the test sees every step.
const memoryFs = () => {
  const files = new Map<string, string>()
  const ops: Array<string> = []
  const layer = FileSystem.layerNoop({
    writeFileString: (path, data) => Effect.sync(() => void (ops.push(`write ${path}`), files.set(path, data))),
    rename: (from, to) =>
      Effect.sync(() => {
        ops.push(`rename ${from} -> ${to}`)
        files.set(to, files.get(from)!)
        files.delete(from)
      })
  })
  return { files, ops, layer }
}

describe("Heartbeat", () => {
  it("toHeartbeatJson has exactly the contract's fields", () => {
    const json = Heartbeat.toHeartbeatJson({
      ready: false,
      at: DateTime.makeUnsafe("2025-01-02T03:04:05.678Z"),
      loops: [
        {
          name: "parse_loop",
          state: "running",
          ttl: Duration.seconds(30),
          lastSuccessAt: Option.some(DateTime.makeUnsafe("2025-01-02T03:04:00.000Z")),
          fresh: true,
          restarts: 2
        },
        { name: "order_match_loop", state: "starting", ttl: Duration.seconds(90), lastSuccessAt: Option.none(), fresh: false, restarts: 0 }
      ]
    }, 4242)
    assert.deepStrictEqual(json, {
      ready: false,
      pid: 4242,
      written_at: "2025-01-02T03:04:05.678Z",
      loops: {
        parse_loop: { state: "running", last_success_at: "2025-01-02T03:04:00.000Z", ttl_s: 30, fresh: true, restarts: 2 },
        order_match_loop: { state: "starting", last_success_at: null, ttl_s: 90, fresh: false, restarts: 0 }
      }
    })
    assert.deepStrictEqual(Schema.decodeUnknownSync(HeartbeatJson)(JSON.parse(JSON.stringify(json))), json)
  })

  it("toHeartbeatJson names the components beside the loops when the registry has any", () => {
    const json = Heartbeat.toHeartbeatJson({
      ready: false,
      at: DateTime.makeUnsafe("2025-01-02T03:04:05.678Z"),
      loops: [],
      components: [{ name: "ingest_batchers", state: "exited", restarts: 1 }]
    }, 4242)
    assert.deepStrictEqual(json, {
      ready: false,
      pid: 4242,
      written_at: "2025-01-02T03:04:05.678Z",
      loops: {},
      components: { ingest_batchers: { state: "exited", restarts: 1 } }
    })
    assert.deepStrictEqual(Schema.decodeUnknownSync(HeartbeatJson)(JSON.parse(JSON.stringify(json))), json)
  })

  it.effect("writes to a temp file in the same directory, then renames it over the heartbeat", () =>
    Effect.gen(function*() {
      const fs = memoryFs()
      yield* Heartbeat.writeAtomically("/run/recon/worker.heartbeat", "{}").pipe(Effect.provide(fs.layer))
      assert.strictEqual(fs.ops.length, 2)
      const temp = fs.ops[0]!.slice("write ".length)
      assert.strictEqual(dirname(temp), "/run/recon")
      assert.notStrictEqual(temp, "/run/recon/worker.heartbeat")
      assert.strictEqual(fs.ops[1], `rename ${temp} -> /run/recon/worker.heartbeat`)
      assert.deepStrictEqual([...fs.files.keys()], ["/run/recon/worker.heartbeat"])
    }))

  it.effect("replaces a real file and leaves no temp file behind", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "recon-heartbeat-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const path = join(dir, "worker.heartbeat")
      yield* Heartbeat.writeAtomically(path, "first")
      yield* Heartbeat.writeAtomically(path, "second")
      assert.strictEqual(readFileSync(path, "utf8"), "second")
      assert.deepStrictEqual(readdirSync(dir), ["worker.heartbeat"])
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("writes at start, every 5 s, and at once when readiness changes", () =>
    Effect.gen(function*() {
      const fs = memoryFs()
      const path = "/tmp/hb-test/worker.heartbeat"
      const registry = Context.get(yield* Layer.build(HealthRegistry.layer([{ name: "parse_loop", ttl: "32 seconds" }])), HealthRegistry)
      yield* Effect.forkScoped(Heartbeat.run({ path })).pipe(
        Effect.provideService(HealthRegistry, registry),
        Effect.provide(fs.layer)
      )
      const renames = () => fs.ops.filter((op) => op.startsWith("rename")).length
      const content = () => JSON.parse(fs.files.get(path)!) as HeartbeatJson
      yield* settle
      const atStart = renames()
      assert.isAtLeast(atStart, 1)
      assert.strictEqual(content().ready, false)
      assert.strictEqual(content().pid, process.pid)

      yield* registry.reportSuccess("parse_loop")
      yield* settle
      assert.strictEqual(renames(), atStart + 1, "rewritten at once, without the clock moving")
      assert.strictEqual(content().ready, true)
      assert.strictEqual(content().loops.parse_loop?.state, "running")

      yield* TestClock.adjust("4999 millis")
      assert.strictEqual(renames(), atStart + 1)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(renames(), atStart + 2, "and every 5 s")
      assert.strictEqual(content().written_at, "1970-01-01T00:00:05.000Z")
      yield* TestClock.adjust("5 seconds")
      assert.strictEqual(renames(), atStart + 3)

      // Staleness at the TTL (32 s, between the ticks at 30 s and 35 s) is a readiness change too.
      yield* TestClock.adjust("21999 millis")
      const beforeStale = renames()
      yield* TestClock.adjust("1 millis")
      yield* settle
      assert.strictEqual(renames(), beforeStale + 1)
      assert.strictEqual(content().ready, false)
      assert.strictEqual(content().loops.parse_loop?.state, "stale")
    }))
})
