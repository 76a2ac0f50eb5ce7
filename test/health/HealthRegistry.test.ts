import { assert, describe, it } from "@effect/vitest"
import { Context, DateTime, Duration, Effect, Layer, Metric, Option, Stream } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { TestClock } from "effect/testing"
import { HealthRegistry, workIsFresh, workStaleAt } from "../../src/health/HealthRegistry.ts"
import type { LoopSpec } from "../../src/health/HealthRegistry.ts"
import { settle } from "../support/time.ts"

// Builds a registry in the test's scope, and records every readiness change it publishes.
const registryWith = (loops: ReadonlyArray<LoopSpec>) =>
  Effect.gen(function*() {
    // Built in the test's scope, so the registry's expiry timer lives as long as the test.
    const registry = Context.get(yield* Layer.build(HealthRegistry.layer(loops)), HealthRegistry)
    const changes: Array<boolean> = []
    yield* Effect.forkScoped(Stream.runForEach(registry.readiness, (ready) => Effect.sync(() => void changes.push(ready))))
    yield* settle
    const state = (name: string) =>
      Effect.map(registry.snapshot, (s) => s.loops.find((loop) => loop.name === name)!)
    return { registry, changes, state }
  })

describe("HealthRegistry", () => {
  it.effect("is not ready until every loop has reported its first success", () =>
    Effect.gen(function*() {
      const { registry, changes, state } = yield* registryWith([{ name: "a", ttl: "30 seconds" }, { name: "b", ttl: "90 seconds" }])
      assert.isFalse(yield* registry.ready)
      assert.strictEqual((yield* state("a")).state, "starting")
      yield* registry.reportSuccess("a")
      assert.isFalse(yield* registry.ready)
      assert.strictEqual((yield* state("a")).state, "running")
      yield* registry.reportSuccess("b")
      assert.isTrue(yield* registry.ready)
      yield* settle
      assert.deepStrictEqual(changes, [false, true])
    }))

  it.effect("a loop goes stale exactly at its TTL, and readiness changes at that moment", () =>
    Effect.gen(function*() {
      const { registry, changes, state } = yield* registryWith([{ name: "a", ttl: "30 seconds" }, { name: "b", ttl: "90 seconds" }])
      yield* registry.reportSuccess("a")
      yield* registry.reportSuccess("b")
      yield* TestClock.adjust("29999 millis")
      assert.isTrue(yield* registry.ready)
      assert.isTrue((yield* state("a")).fresh)
      yield* settle
      assert.deepStrictEqual(changes, [false, true])
      yield* TestClock.adjust("1 millis")
      assert.isFalse(yield* registry.ready)
      assert.deepStrictEqual(yield* state("a"), {
        name: "a",
        state: "stale",
        ttl: (yield* state("a")).ttl,
        lastSuccessAt: Option.some(DateTime.makeUnsafe(0)),
        fresh: false,
        restarts: 0
      })
      assert.isTrue((yield* state("b")).fresh)
      yield* settle
      assert.deepStrictEqual(changes, [false, true, false], "the change is published at the TTL, not at the next read")
      yield* registry.reportSuccess("a")
      assert.isTrue(yield* registry.ready)
    }))

  it.effect("a fresh success pushes the expiry back", () =>
    Effect.gen(function*() {
      const { registry } = yield* registryWith([{ name: "a", ttl: "30 seconds" }])
      yield* registry.reportSuccess("a")
      yield* TestClock.adjust("20 seconds")
      yield* registry.reportSuccess("a")
      yield* TestClock.adjust("29999 millis")
      assert.isTrue(yield* registry.ready)
      yield* TestClock.adjust("1 millis")
      assert.isFalse(yield* registry.ready)
    }))

  it.effect("an earlier expiry reported later re-arms the timer", () =>
    Effect.gen(function*() {
      const { registry, changes } = yield* registryWith([{ name: "slow", ttl: "90 seconds" }, { name: "fast", ttl: "20 seconds" }])
      yield* registry.reportSuccess("slow")
      yield* TestClock.adjust("5 seconds")
      yield* registry.reportSuccess("fast")
      yield* TestClock.adjust("19999 millis")
      yield* settle
      assert.deepStrictEqual(changes, [false, true])
      yield* TestClock.adjust("1 millis")
      yield* settle
      assert.deepStrictEqual(changes, [false, true, false])
    }))

  it.effect("an exit makes it not ready at once, until the restarted loop succeeds", () =>
    Effect.gen(function*() {
      const { registry, changes, state } = yield* registryWith([{ name: "a", ttl: "30 seconds" }, { name: "b", ttl: "30 seconds" }])
      yield* registry.reportSuccess("a")
      yield* registry.reportSuccess("b")
      yield* registry.reportExit("a")
      assert.isFalse(yield* registry.ready)
      assert.strictEqual((yield* state("a")).state, "exited")
      yield* registry.reportRestart("a")
      assert.isFalse(yield* registry.ready, "a restart alone is not a success")
      assert.strictEqual((yield* state("a")).state, "restarting")
      assert.strictEqual((yield* state("a")).restarts, 1)
      yield* registry.reportSuccess("a")
      assert.isTrue(yield* registry.ready)
      assert.strictEqual((yield* state("a")).state, "running")
      yield* settle
      assert.deepStrictEqual(changes, [false, true, false, true])
    }))

  it.effect("a loop that never succeeds turns from starting to stale after its TTL", () =>
    Effect.gen(function*() {
      const { state } = yield* registryWith([{ name: "a", ttl: "30 seconds" }])
      yield* TestClock.adjust("29999 millis")
      assert.strictEqual((yield* state("a")).state, "starting")
      yield* TestClock.adjust("1 millis")
      assert.strictEqual((yield* state("a")).state, "stale")
    }))

  it.effect("reports for an unknown loop are ignored", () =>
    Effect.gen(function*() {
      const { registry } = yield* registryWith([{ name: "a", ttl: "30 seconds" }])
      yield* registry.reportSuccess("a")
      yield* registry.reportExit("no_such_loop")
      assert.isTrue(yield* registry.ready)
      assert.deepStrictEqual((yield* registry.snapshot).loops.map((loop) => loop.name), ["a"])
    }))

  it.effect("a component has no TTL: not ready from its registration until it reports its start, then fresh however long", () =>
    Effect.gen(function*() {
      const { registry, changes } = yield* registryWith([{ name: "a", ttl: "30 seconds" }])
      yield* registry.reportSuccess("a")
      assert.isTrue(yield* registry.ready)
      yield* registry.registerComponent("batchers")
      assert.isFalse(yield* registry.ready)
      const component = Effect.map(registry.snapshot, (s) => s.components?.find((c) => c.name === "batchers"))
      assert.deepStrictEqual(yield* component, { name: "batchers", state: "starting", restarts: 0 })
      yield* registry.reportSuccess("batchers")
      assert.isTrue(yield* registry.ready)
      yield* TestClock.adjust("29 seconds")
      yield* registry.reportSuccess("a")
      yield* TestClock.adjust("29 seconds")
      assert.isTrue(yield* registry.ready)
      assert.deepStrictEqual(yield* component, { name: "batchers", state: "running", restarts: 0 })
      // Not among the loops: the loops' list is the contract's.
      assert.deepStrictEqual((yield* registry.snapshot).loops.map((loop) => loop.name), ["a"])
      yield* registry.reportExit("batchers")
      assert.isFalse(yield* registry.ready)
      assert.strictEqual((yield* component)!.state, "exited")
      yield* settle
      assert.deepStrictEqual(changes, [false, true, false, true, false])
    }))

  it.effect("exposes each loop's freshness and restarts as metrics, read at each scrape: stale shows without any event", () =>
    Effect.gen(function*() {
      const { registry } = yield* registryWith([{ name: "a", ttl: "30 seconds" }, { name: "b", ttl: "90 seconds" }])
      // `fresh restarts` of loops a and b, as Prometheus reads them.
      const scrape = Effect.map(PrometheusMetrics.format(), (text) => {
        const value = (name: string, loop: string) => new RegExp(`^${name}\\{loop="${loop}"\\} (\\d+)$`, "m").exec(text)?.[1]
        return ["a", "b"].map((loop) => `${value("recon_loop_fresh", loop)} ${value("recon_loop_restarts_total", loop)}`)
      })
      assert.deepStrictEqual(yield* scrape, ["0 0", "0 0"])
      yield* registry.reportSuccess("a")
      yield* registry.reportSuccess("b")
      assert.deepStrictEqual(yield* scrape, ["1 0", "1 0"])
      yield* TestClock.adjust("30 seconds")
      assert.deepStrictEqual(yield* scrape, ["0 0", "1 0"])
      yield* registry.reportExit("b")
      yield* registry.reportRestart("b")
      assert.deepStrictEqual(yield* scrape, ["0 0", "0 1"])
      yield* registry.reportSuccess("a")
      yield* registry.reportSuccess("b")
      assert.deepStrictEqual(yield* scrape, ["1 0", "1 1"])
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())))

  it("the work rule: idle is never stale; waiting work is stale once staleAfter passes without progress", () => {
    const idle = { staleAfterMillis: 10_000, waitingSince: undefined, lastProgressAt: 0 }
    assert.isTrue(workIsFresh(idle, 1e12))
    assert.strictEqual(workStaleAt(idle), Infinity)
    const waiting = { staleAfterMillis: 10_000, waitingSince: 5_000, lastProgressAt: undefined }
    assert.isTrue(workIsFresh(waiting, 14_999))
    assert.isFalse(workIsFresh(waiting, 15_000))
    // Progress since the work began waiting restarts the count; progress before it does not.
    assert.isTrue(workIsFresh({ ...waiting, lastProgressAt: 12_000 }, 21_999))
    assert.isFalse(workIsFresh({ ...waiting, lastProgressAt: 12_000 }, 22_000))
    assert.isFalse(workIsFresh({ ...waiting, lastProgressAt: 1_000 }, 15_000))
  })

  it.effect("a component with a work rule goes stale at once when queued work has made no progress for staleAfter, and ready again when it moves", () =>
    Effect.gen(function*() {
      const { registry, changes } = yield* registryWith([{ name: "a", ttl: "60 seconds" }])
      yield* registry.registerComponent("ingest", { staleAfter: "10 seconds" })
      yield* registry.reportSuccess("ingest")
      yield* registry.reportSuccess("a")
      const ingest = Effect.map(registry.snapshot, (s) => s.components!.find((c) => c.name === "ingest")!)
      // Idle for longer than the rule: fresh.
      yield* TestClock.adjust("20 seconds")
      assert.isTrue(yield* registry.ready)
      assert.deepStrictEqual((yield* ingest).work, { waiting: false, staleAfter: Duration.seconds(10), lastProgressAt: Option.none() })
      yield* registry.reportWaiting("ingest", true)
      yield* TestClock.adjust("9999 millis")
      assert.isTrue(yield* registry.ready)
      // A second report while waiting does not move the start of the wait.
      yield* registry.reportWaiting("ingest", true)
      yield* TestClock.adjust("1 millis")
      // The expiry timer published it: readiness false without any report.
      yield* settle
      assert.deepStrictEqual(changes, [false, true, false])
      assert.isFalse(yield* registry.ready)
      assert.strictEqual((yield* ingest).state, "stale")
      // A flush: fresh again; with work still waiting, the count starts from the flush.
      yield* registry.reportProgress("ingest")
      assert.isTrue(yield* registry.ready)
      assert.strictEqual((yield* ingest).state, "running")
      yield* TestClock.adjust("10 seconds")
      assert.isFalse(yield* registry.ready)
      // Nothing left: idle, fresh however long it stays so.
      yield* registry.reportWaiting("ingest", false)
      assert.isTrue(yield* registry.ready)
      // (Loop a's own TTL passes meanwhile: stale, then fresh again by its success.)
      yield* TestClock.adjust("5 minutes")
      yield* registry.reportSuccess("a")
      assert.isTrue(yield* registry.ready)
      assert.strictEqual((yield* ingest).state, "running")
      yield* settle
      assert.deepStrictEqual(changes, [false, true, false, true, false, true, false, true])
    }))

  it.effect("work inside a loop (registerWork) is listed with the components, and registering it again (the loop restarted) starts it afresh", () =>
    Effect.gen(function*() {
      const { registry } = yield* registryWith([{ name: "a", ttl: "60 seconds" }])
      yield* registry.reportSuccess("a")
      yield* registry.registerWork("handover", { staleAfter: "30 seconds" })
      assert.isTrue(yield* registry.ready)
      yield* registry.reportWaiting("handover", true)
      yield* TestClock.adjust("30 seconds")
      assert.isFalse(yield* registry.ready)
      const handover = Effect.map(registry.snapshot, (s) => s.components!.find((c) => c.name === "handover")!)
      assert.strictEqual((yield* handover).state, "stale")
      yield* registry.registerWork("handover", { staleAfter: "30 seconds" })
      yield* registry.reportSuccess("a")
      assert.isTrue(yield* registry.ready)
      assert.deepInclude(yield* handover, { state: "running", restarts: 0 })
      // A component without a rule is not work: registering work under its name is a defect.
      yield* registry.registerComponent("listener")
      const exit = yield* Effect.exit(registry.registerWork("listener", { staleAfter: "1 second" }))
      assert.isTrue(exit._tag === "Failure")
    }))
})
