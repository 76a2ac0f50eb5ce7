// The worker's components (long-lived fibers that are not loops) under their supervisors, reporting
// to a health registry: killed, they make readiness false in the same tick and come back with it
// after their restart; one that keeps dying escalates; time on the TestClock.
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Option, Schedule } from "effect"
import { TestClock } from "effect/testing"
import { Components } from "../../src/health/Components.ts"
import { HealthRegistry } from "../../src/health/HealthRegistry.ts"
import { settle } from "../support/time.ts"

// One loop "a" (fresh after its report) beside the components, as in the worker.
const setUp = Effect.gen(function*() {
  const context = yield* Layer.build(Components.layer({ backoff: Schedule.spaced("1 second") }).pipe(
    Layer.provideMerge(HealthRegistry.layer([{ name: "a", ttl: "30 seconds" }]))
  ))
  const registry = Context.get(context, HealthRegistry)
  const components = Context.get(context, Components)
  yield* registry.reportSuccess("a")
  const component = (name: string) => Effect.map(registry.snapshot, (s) => s.components?.find((c) => c.name === name))
  return { registry, components, component }
})

describe("Components", () => {
  it.effect("a component is ready once it runs; killed, readiness is false at once; restarted, it is back", () =>
    Effect.gen(function*() {
      const { registry, components, component } = yield* setUp
      assert.isTrue(yield* registry.ready)
      yield* components.run("batchers", Effect.never)
      yield* settle
      assert.isTrue(yield* registry.ready)
      assert.deepStrictEqual(yield* component("batchers"), { name: "batchers", state: "running", restarts: 0 })

      const fiber = Option.getOrThrow(yield* components.fiber("batchers"))
      yield* Fiber.interrupt(fiber)
      assert.isFalse(yield* registry.ready)
      assert.strictEqual((yield* component("batchers"))!.state, "exited")

      // The loop is untouched: only the component is down.
      assert.isTrue((yield* registry.snapshot).loops[0]!.fresh)
      yield* TestClock.adjust("999 millis")
      yield* settle
      assert.isFalse(yield* registry.ready)
      yield* TestClock.adjust("1 millis")
      yield* settle
      assert.isTrue(yield* registry.ready)
      assert.deepStrictEqual(yield* component("batchers"), { name: "batchers", state: "running", restarts: 1 })
    }))

  it.effect("a component that dies (a defect) is restarted the same way", () =>
    Effect.gen(function*() {
      const { registry, components, component } = yield* setUp
      let starts = 0
      yield* components.run("listener", Effect.suspend(() => ++starts === 1 ? Effect.die(new Error("boom")) : Effect.never))
      yield* settle
      assert.isFalse(yield* registry.ready)
      assert.strictEqual((yield* component("listener"))!.state, "exited")
      yield* TestClock.adjust("1 second")
      yield* settle
      assert.isTrue(yield* registry.ready)
      assert.strictEqual(starts, 2)
    }))

  it.effect("a component that keeps dying past the restart intensity fails `await`, and stays down", () =>
    Effect.gen(function*() {
      const { registry, components, component } = yield* setUp
      yield* components.run("writer", Effect.die(new Error("disk gone")))
      const escalated = yield* Effect.forkChild(components.await)
      for (let i = 0; i < 6; i++) {
        yield* settle
        yield* TestClock.adjust("1 second")
      }
      yield* settle
      const exit = yield* Fiber.await(escalated)
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "child writer exited after 5 restarts")
      assert.isFalse(yield* registry.ready)
      assert.strictEqual((yield* component("writer"))!.state, "exited")
    }))

  it.effect("a second component under a name in use is a defect", () =>
    Effect.gen(function*() {
      const { components } = yield* setUp
      yield* components.run("batchers", Effect.never)
      const exit = yield* Effect.exit(components.run("batchers", Effect.never))
      assert.isTrue(Exit.isFailure(exit))
    }))
})
