import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, Scope } from "effect"
import * as DynamicSupervisor from "../../src/actors/DynamicSupervisor.ts"
import { settle } from "../support/time.ts"

interface Spec {
  readonly url: string
}
// Plain objects: Equal.equals compares them structurally in Effect 4.
const spec = (url: string): Spec => ({ url })

// A listener stand-in: logs its start and stop, then runs until interrupted.
const harness = Effect.gen(function*() {
  const events: Array<string> = []
  const supervisor = yield* DynamicSupervisor.make<string, Spec, never>({
    run: (key, spec) =>
      Effect.suspend(() => {
        events.push(`start ${key} ${spec.url}`)
        return Effect.never
      }).pipe(Effect.onInterrupt(() => Effect.sync(() => void events.push(`stop ${key} ${spec.url}`))))
  })
  const running = Effect.map(supervisor.running, (keys) => [...keys].sort())
  return { events, supervisor, running }
})

describe("DynamicSupervisor", () => {
  it.effect("starts new keys and stops removed ones", () =>
    Effect.gen(function*() {
      const { events, supervisor, running } = yield* harness
      const first = yield* supervisor.reconcile(new Map([["a", spec("u1")], ["b", spec("u1")]]))
      assert.deepStrictEqual(first, { started: ["a", "b"], stopped: [], restarted: [], replaced: [] })
      assert.deepStrictEqual(yield* running, ["a", "b"])

      const second = yield* supervisor.reconcile(new Map([["a", spec("u1")], ["c", spec("u1")]]))
      assert.deepStrictEqual(second, { started: ["c"], stopped: ["b"], restarted: [], replaced: [] })
      assert.deepStrictEqual(yield* running, ["a", "c"])
      assert.deepStrictEqual(events, ["start a u1", "start b u1", "stop b u1", "start c u1"])

      const same = yield* supervisor.reconcile(new Map([["a", spec("u1")], ["c", spec("u1")]]))
      assert.deepStrictEqual(same, { started: [], stopped: [], restarted: [], replaced: [] })
      assert.strictEqual(events.length, 4, "an unchanged set touches nothing")
    }))

  it.effect("restarts a crashed child at the next reconcile", () =>
    Effect.gen(function*() {
      const { events, supervisor, running } = yield* harness
      const desired = new Map([["a", spec("u1")], ["b", spec("u1")]])
      yield* supervisor.reconcile(desired)
      const fiber = Option.getOrThrow(yield* supervisor.fiber("a"))
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(yield* running, ["b"])
      const result = yield* supervisor.reconcile(desired)
      assert.deepStrictEqual(result, { started: [], stopped: [], restarted: ["a"], replaced: [] })
      assert.deepStrictEqual(yield* running, ["a", "b"])
      assert.deepStrictEqual(events.at(-1), "start a u1")
    }))

  it.effect("restarts a key whose spec changed, stopping the old child first", () =>
    Effect.gen(function*() {
      const { events, supervisor } = yield* harness
      yield* supervisor.reconcile(new Map([["a", spec("u1")]]))
      const result = yield* supervisor.reconcile(new Map([["a", spec("u2")]]))
      assert.deepStrictEqual(result, { started: [], stopped: [], restarted: [], replaced: ["a"] })
      assert.deepStrictEqual(events, ["start a u1", "stop a u1", "start a u2"])
    }))

  it.effect("compares specs with a custom isSame (e.g. a version field)", () =>
    Effect.gen(function*() {
      let starts = 0
      const supervisor = yield* DynamicSupervisor.make<number, { version: number; note: string }, never>({
        run: () => Effect.suspend(() => (starts++, Effect.never)),
        isSame: (previous, next) => previous.version === next.version
      })
      yield* supervisor.reconcile(new Map([[1, { version: 1, note: "x" }]]))
      yield* supervisor.reconcile(new Map([[1, { version: 1, note: "y" }]]))
      assert.strictEqual(starts, 1)
      yield* supervisor.reconcile(new Map([[1, { version: 2, note: "y" }]]))
      assert.strictEqual(starts, 2)
    }))

  it.effect("closing its scope stops every child", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { events, supervisor } = yield* Scope.provide(harness, scope)
      yield* supervisor.reconcile(new Map([["a", spec("u1")], ["b", spec("u1")]]))
      yield* settle
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(events.filter((e) => e.startsWith("stop")).sort(), ["stop a u1", "stop b u1"])
    }))
})
