// Actors under a Supervisor reporting to the HealthRegistry, wired as the worker wires them.
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option, Schedule } from "effect"
import { TestClock } from "effect/testing"
import * as Actor from "../../src/actors/Actor.ts"
import * as Supervisor from "../../src/actors/Supervisor.ts"
import { HealthRegistry } from "../../src/health/HealthRegistry.ts"
import { settle } from "../support/time.ts"

// Two loops, ttl 30 s, a pass every 10 s; `failing` decides whether loop "a" fails its passes.
const worker = Effect.gen(function*() {
  const registry = Context.get(
    yield* Layer.build(HealthRegistry.layer([{ name: "a", ttl: "30 seconds" }, { name: "b", ttl: "30 seconds" }])),
    HealthRegistry
  )
  const control = { failing: false, passes: { a: 0, b: 0 } }
  const loop = (name: "a" | "b") =>
    Actor.make({
      name,
      every: "10 seconds",
      pass: Effect.suspend(() => {
        control.passes[name]++
        return name === "a" && control.failing ? Effect.fail("database down") : Effect.void
      }),
      retry: Schedule.spaced("2 seconds"),
      onSuccess: registry.reportSuccess(name)
    })
  const supervisor = yield* Supervisor.make({
    children: [yield* loop("a"), yield* loop("b")],
    backoff: Schedule.spaced("1 second"),
    onChildExit: (name) => registry.reportExit(name),
    onChildRestart: (name) => registry.reportRestart(name)
  })
  yield* settle
  return { registry, supervisor, control }
})

describe("readiness of supervised loops", () => {
  it.effect("a loop fiber that exits makes readiness false in the same tick; it returns after the restarted loop's success", () =>
    Effect.gen(function*() {
      const { registry, supervisor } = yield* worker
      assert.isTrue(yield* registry.ready)
      const fiber = Option.getOrThrow(yield* supervisor.fiber("a"))
      yield* Fiber.interrupt(fiber)
      assert.isFalse(yield* registry.ready, "false as soon as the fiber has exited")
      const a = (yield* registry.snapshot).loops.find((loop) => loop.name === "a")!
      assert.strictEqual(a.state, "exited")

      yield* TestClock.adjust("1 second")
      yield* settle
      assert.isTrue(yield* registry.ready, "ready again after the restarted loop's first pass")
      const again = (yield* registry.snapshot).loops.find((loop) => loop.name === "a")!
      assert.strictEqual(again.state, "running")
      assert.strictEqual(again.restarts, 1)
    }))

  it.effect("a loop whose passes keep failing goes stale exactly at its TTL; the loop, the supervisor and the other loops stay up", () =>
    Effect.gen(function*() {
      const { registry, supervisor, control } = yield* worker
      const escalation = yield* Effect.forkChild(supervisor.await)
      control.failing = true
      // The last success of "a" was at 0; from now on every pass fails and is retried.
      yield* TestClock.adjust("29999 millis")
      assert.isTrue(yield* registry.ready)
      yield* TestClock.adjust("1 millis")
      assert.isFalse(yield* registry.ready)
      const snapshot = yield* registry.snapshot
      assert.deepStrictEqual(
        snapshot.loops.map((loop) => [loop.name, loop.state, loop.fresh]),
        [["a", "stale", false], ["b", "running", true]]
      )
      assert.isAbove(control.passes.a, 5, "a kept retrying")
      assert.isUndefined(escalation.pollUnsafe())
      assert.isTrue(Option.isSome(yield* supervisor.fiber("a")), "a's fiber is still alive")

      control.failing = false
      yield* TestClock.adjust("2 seconds")
      assert.isTrue(yield* registry.ready, "the next retry succeeds and a is fresh again")
    }))
})
