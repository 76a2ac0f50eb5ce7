import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Latch, Schedule } from "effect"
import { TestClock } from "effect/testing"
import * as Actor from "../../src/actors/Actor.ts"
import { settle } from "../support/time.ts"

describe("Actor", () => {
  it.effect("runs a pass at start and then on its schedule", () =>
    Effect.gen(function*() {
      let passes = 0
      const actor = yield* Actor.make({ name: "ticker", every: "10 seconds", pass: Effect.sync(() => void passes++) })
      yield* Effect.forkChild(actor.run)
      yield* settle
      assert.strictEqual(passes, 1)
      yield* TestClock.adjust("9999 millis")
      assert.strictEqual(passes, 1)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(passes, 2)
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(passes, 3)
    }))

  it.effect("a kick runs a pass at once, and many kicks during a pass cause exactly one more", () =>
    Effect.gen(function*() {
      let passes = 0
      const gate = yield* Latch.make(false)
      // The second pass waits at the gate, so kicks can arrive while it runs.
      const pass = Effect.gen(function*() {
        passes++
        if (passes === 2) yield* gate.await
      })
      const actor = yield* Actor.make({ name: "kicked", every: "1 hour", pass })
      yield* Effect.forkChild(actor.run)
      yield* settle
      assert.strictEqual(passes, 1)

      yield* actor.kick
      yield* settle
      assert.strictEqual(passes, 2, "an idle actor runs a pass as soon as it is kicked")

      yield* actor.kick
      yield* actor.kick
      yield* actor.kick
      yield* settle
      assert.strictEqual(passes, 2, "kicks wait for the running pass")
      yield* gate.open
      yield* settle
      assert.strictEqual(passes, 3, "three kicks during a pass cause one more pass")
      yield* settle
      assert.strictEqual(passes, 3)
    }))

  it.effect("a failing pass is retried with backoff, reported, and the loop stays alive", () =>
    Effect.gen(function*() {
      let attempts = 0
      let failures = 0
      let successes = 0
      const pass = Effect.gen(function*() {
        attempts++
        if (attempts === 2) return yield* Effect.die("a thrown exception is retried too")
        if (attempts <= 3) return yield* Effect.fail("not yet")
      })
      const actor = yield* Actor.make({
        name: "flaky",
        every: "1 hour",
        pass,
        retry: Schedule.spaced("1 second"),
        onFailure: () => Effect.sync(() => void failures++),
        onSuccess: Effect.sync(() => void successes++)
      })
      const fiber = yield* Effect.forkChild(actor.run)
      yield* settle
      assert.deepStrictEqual([attempts, failures, successes], [1, 1, 0])
      yield* TestClock.adjust("999 millis")
      assert.deepStrictEqual([attempts, failures, successes], [1, 1, 0])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual([attempts, failures, successes], [2, 2, 0])
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual([attempts, failures, successes], [4, 3, 1])
      assert.isUndefined(fiber.pollUnsafe(), "the loop is still running")
    }))

  it.effect("when a finite retry policy gives up, the loop waits for its next tick", () =>
    Effect.gen(function*() {
      let attempts = 0
      const actor = yield* Actor.make({
        name: "broken",
        every: "10 seconds",
        pass: Effect.suspend(() => (attempts++, Effect.fail("down"))),
        retry: Schedule.spaced("1 second").pipe(Schedule.upTo({ times: 2 }))
      })
      const fiber = yield* Effect.forkChild(actor.run)
      yield* settle
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(attempts, 3)
      yield* TestClock.adjust("9999 millis")
      assert.strictEqual(attempts, 3)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(attempts, 4)
      assert.isUndefined(fiber.pollUnsafe())
    }))

  it.effect("a restarted run keeps the same mailbox and starts with a pass", () =>
    Effect.gen(function*() {
      let passes = 0
      const actor = yield* Actor.make({ name: "again", every: "1 hour", pass: Effect.sync(() => void passes++) })
      const first = yield* Effect.forkChild(actor.run)
      yield* settle
      yield* Fiber.interrupt(first)
      yield* actor.kick
      yield* Effect.forkChild(actor.run)
      yield* settle
      // The kick sent while down is covered by the start pass, not run twice.
      assert.strictEqual(passes, 2)
    }))
})
