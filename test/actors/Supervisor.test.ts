import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option, Schedule } from "effect"
import { TestClock } from "effect/testing"
import * as Supervisor from "../../src/actors/Supervisor.ts"
import { settle } from "../support/time.ts"

// Records hook calls and child starts, so each test can assert the whole history.
const recorder = () => {
  const events: Array<string> = []
  return {
    events,
    child: (name: string) => ({
      name,
      run: Effect.suspend(() => {
        events.push(`start ${name}`)
        return Effect.never
      })
    }),
    onChildExit: (name: string) => Effect.sync(() => void events.push(`exit ${name}`)),
    onChildRestart: (name: string, restarts: number) => Effect.sync(() => void events.push(`restart ${name} ${restarts}`))
  }
}

const interruptChild = (supervisor: Supervisor.Supervisor, name: string) =>
  Effect.gen(function*() {
    const fiber = yield* supervisor.fiber(name)
    assert.isTrue(Option.isSome(fiber), `${name} is running`)
    yield* Fiber.interrupt(Option.getOrThrow(fiber))
  })

describe("Supervisor", () => {
  it.effect("restarts an interrupted child after its backoff; the exit hook fires in the same tick", () =>
    Effect.gen(function*() {
      const r = recorder()
      const supervisor = yield* Supervisor.make({
        children: [r.child("a"), r.child("b")],
        backoff: Schedule.spaced("1 second"),
        onChildExit: r.onChildExit,
        onChildRestart: r.onChildRestart
      })
      assert.deepStrictEqual(r.events, ["start a", "start b"])
      yield* interruptChild(supervisor, "a")
      assert.deepStrictEqual(r.events, ["start a", "start b", "exit a"])
      assert.isTrue(Option.isNone(yield* supervisor.fiber("a")))
      yield* TestClock.adjust("999 millis")
      assert.deepStrictEqual(r.events, ["start a", "start b", "exit a"])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(r.events, ["start a", "start b", "exit a", "restart a 1", "start a"])
      assert.isTrue(Option.isSome(yield* supervisor.fiber("a")))
    }))

  it.effect("restarts a child that completes, fails or dies, and passes the exit to the hook", () =>
    Effect.gen(function*() {
      const exits: Array<string> = []
      let runs = 0
      const outcomes = [Effect.void, Effect.fail("failed"), Effect.die("died"), Effect.never]
      yield* Supervisor.make({
        children: [{ name: "c", run: Effect.suspend(() => outcomes[runs++]!) }],
        backoff: Schedule.spaced("1 second"),
        onChildExit: (_, exit) =>
          Effect.sync(() => void exits.push(Exit.isSuccess(exit) ? "completed" : Exit.hasDies(exit) ? "died" : "failed"))
      })
      yield* TestClock.adjust("3 seconds")
      assert.strictEqual(runs, 4)
      assert.deepStrictEqual(exits, ["completed", "failed", "died"])
    }))

  it.effect("backs off exponentially between restarts of the same child", () =>
    Effect.gen(function*() {
      const r = recorder()
      const supervisor = yield* Supervisor.make({
        children: [r.child("a")],
        backoff: Schedule.exponential("1 second"),
        onChildRestart: r.onChildRestart
      })
      yield* interruptChild(supervisor, "a")
      yield* TestClock.adjust("1 second")
      yield* interruptChild(supervisor, "a")
      yield* TestClock.adjust("1999 millis")
      assert.isTrue(Option.isNone(yield* supervisor.fiber("a")), "the second restart waits 2 s")
      yield* TestClock.adjust("1 millis")
      assert.isTrue(Option.isSome(yield* supervisor.fiber("a")))
      assert.deepStrictEqual(r.events.filter((e) => e.startsWith("restart")), ["restart a 1", "restart a 2"])
    }))

  it.effect("more than 5 restarts within 60 s escalate", () =>
    Effect.gen(function*() {
      const r = recorder()
      const supervisor = yield* Supervisor.make({
        children: [r.child("a"), r.child("b")],
        backoff: Schedule.spaced("1 second"),
        onChildExit: r.onChildExit
      })
      const escalation = yield* Effect.forkChild(Effect.flip(supervisor.await))
      // Five exits spread over both children are five restarts: still within the intensity.
      for (const name of ["a", "b", "a", "b", "a"]) {
        yield* interruptChild(supervisor, name)
        yield* TestClock.adjust("1 second")
      }
      assert.isUndefined(escalation.pollUnsafe())
      yield* interruptChild(supervisor, "b")
      yield* settle
      assert.isDefined(escalation.pollUnsafe(), "the sixth exit escalates")
      const error = yield* Fiber.join(escalation)
      assert.strictEqual(error._tag, "SupervisorEscalated")
      assert.strictEqual(error.child, "b")
      assert.strictEqual(error.restarts, 5)
      yield* TestClock.adjust("1 minute")
      assert.isTrue(Option.isNone(yield* supervisor.fiber("b")), "no restart after escalation")
      assert.strictEqual(r.events.filter((e) => e === "exit b").length, 3)
    }))

  it.effect("two children exiting together never pass the intensity by one, even with a backoff that yields", () =>
    Effect.gen(function*() {
      let starts = 0
      // Both children wait on the same signal and die when it fires: their exits come in one tick.
      let signal = Deferred.makeUnsafe<void>()
      const dying = (name: string) => ({
        name,
        run: Effect.suspend(() => (starts++, Effect.andThen(Deferred.await(signal), Effect.die(`${name} died`))))
      })
      const bothDie = Effect.gen(function*() {
        const fired = signal
        signal = Deferred.makeUnsafe<void>()
        yield* Deferred.succeed(fired, undefined)
        yield* settle
        yield* TestClock.adjust("1 second")
        yield* settle
      })
      const supervisor = yield* Supervisor.make({
        children: [dying("a"), dying("b")],
        maxRestarts: 3,
        // A backoff whose step is effectful: the keepers interleave between the intensity check and the restart.
        backoff: Schedule.spaced("1 second").pipe(Schedule.modifyDelay(({ duration }) => Effect.as(Effect.yieldNow, duration)))
      })
      const escalation = yield* Effect.forkChild(Effect.flip(supervisor.await))
      yield* bothDie
      assert.isUndefined(escalation.pollUnsafe(), "two exits together: two restarts, within 3")
      assert.strictEqual(starts, 4)
      yield* bothDie
      // The second joint exit: one restart is allowed (the third), the other escalates.
      assert.isDefined(escalation.pollUnsafe(), "the fourth exit within the window escalates")
      const error = yield* Fiber.join(escalation)
      assert.strictEqual(error.restarts, 3)
      assert.strictEqual(starts, 5, "the first starts and exactly three restarts")
    }))

  it.effect("restarts spread over more than 60 s do not escalate", () =>
    Effect.gen(function*() {
      const r = recorder()
      const supervisor = yield* Supervisor.make({
        children: [r.child("a")],
        backoff: Schedule.spaced("1 second"),
        onChildRestart: r.onChildRestart
      })
      const escalation = yield* Effect.forkChild(supervisor.await)
      // Every 13 s: never more than 5 restarts in any 60 s window, 12 restarts in all.
      for (let i = 0; i < 12; i++) {
        yield* interruptChild(supervisor, "a")
        yield* TestClock.adjust("13 seconds")
      }
      assert.isUndefined(escalation.pollUnsafe())
      assert.strictEqual(r.events.at(-2), "restart a 12")
      assert.isTrue(Option.isSome(yield* supervisor.fiber("a")))
    }))

  it.effect("the sixth exit just inside the window escalates, just outside it does not", () =>
    Effect.gen(function*() {
      const run = (gapMillis: number) =>
        Effect.gen(function*() {
          const r = recorder()
          const supervisor = yield* Supervisor.make({ children: [r.child("a")], backoff: Schedule.spaced("1 millis") })
          const escalation = yield* Effect.forkChild(supervisor.await)
          // Five restarts at 0 … 4 ms, then the sixth exit `gapMillis` after the first.
          for (let i = 0; i < 5; i++) {
            yield* interruptChild(supervisor, "a")
            yield* TestClock.adjust("1 millis")
          }
          yield* TestClock.adjust(gapMillis - 5)
          yield* interruptChild(supervisor, "a")
          yield* settle
          return escalation.pollUnsafe() !== undefined
        }).pipe(Effect.scoped)
      assert.isTrue(yield* run(59_999))
      assert.isFalse(yield* run(60_000))
    }))

  it.effect("refuses two children with the same name", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Supervisor.make({ children: [{ name: "a", run: Effect.never }, { name: "a", run: Effect.never }] }))
      assert.isTrue(Exit.hasDies(exit))
    }))

  it.effect("shutting the supervisor down interrupts the children without hooks or restarts", () =>
    Effect.gen(function*() {
      const r = recorder()
      const stopped: Array<string> = []
      const child = (name: string) => ({
        name,
        run: Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => void stopped.push(name))))
      })
      const fiber = yield* Effect.forkChild(Supervisor.run({
        children: [child("a"), child("b")],
        onChildExit: r.onChildExit,
        onChildRestart: r.onChildRestart
      }))
      yield* settle
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(stopped.sort(), ["a", "b"])
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(r.events, [])
      assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(fiber)))
    }))

  it.effect("run fails with SupervisorEscalated so the caller can exit with code 1", () =>
    Effect.gen(function*() {
      const result = yield* Supervisor.run({
        children: [{ name: "crasher", run: Effect.die("always") }],
        backoff: Schedule.spaced("1 second")
      }).pipe(Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("10 seconds")
      assert.isDefined(result.pollUnsafe())
      const error = yield* Fiber.join(result)
      assert.strictEqual(error.child, "crasher")
    }))
})

describe("Supervisor.fork", () => {
  // An owner fiber (a loop's) with one fiber forked beside it in its scope; the owner's exit is the answer.
  const withOwner = <A, E>(options: Omit<Supervisor.ForkOptions, "answer">, child: Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      const forked = yield* Deferred.make<Fiber.Fiber<A, E>>()
      const owner = yield* Effect.forkChild(Effect.scoped(Effect.gen(function*() {
        const loop = yield* Effect.fiber
        yield* Deferred.succeed(forked, yield* Supervisor.fork({ ...options, answer: { endsOwner: loop } }, child))
        return yield* Effect.never
      })))
      const fiber = yield* Deferred.await(forked)
      yield* settle
      return { owner, fiber }
    })

  it.effect("a forever fiber that fails, dies, completes or is interrupted by anyone ends its owner", () =>
    Effect.gen(function*() {
      for (const end of [Effect.fail("boom"), Effect.die("bug"), Effect.void, Effect.never]) {
        const { owner, fiber } = yield* withOwner({ name: "child" }, Effect.andThen(Effect.sleep("1 second"), end))
        if (end === Effect.never) yield* Fiber.interrupt(fiber)
        else yield* TestClock.adjust("1 second")
        yield* settle
        const exit = owner.pollUnsafe()
        assert.isDefined(exit, "the owner ended")
        assert.isTrue(Exit.hasInterrupts(exit!))
      }
    }))

  it.effect("the owner's scope closing stops it without blaming anyone; a task's end or cancel is expected", () =>
    Effect.gen(function*() {
      const { owner, fiber } = yield* withOwner({ name: "child" }, Effect.never)
      yield* Fiber.interrupt(owner)
      assert.isTrue(Exit.hasInterrupts((yield* Fiber.await(fiber))))
      const task = yield* withOwner({ name: "timer", lifetime: "task" }, Effect.sleep("1 second"))
      yield* TestClock.adjust("1 second")
      yield* settle
      assert.isUndefined(task.owner.pollUnsafe(), "a task that ends by itself leaves its owner running")
      const cancelled = yield* withOwner({ name: "timer", lifetime: "task" }, Effect.sleep("1 second"))
      yield* Fiber.interrupt(cancelled.fiber)
      yield* settle
      assert.isUndefined(cancelled.owner.pollUnsafe(), "a cancelled task leaves its owner running")
      const failed = yield* withOwner({ name: "timer", lifetime: "task" }, Effect.andThen(Effect.sleep("1 second"), Effect.die("bug")))
      yield* TestClock.adjust("1 second")
      yield* settle
      assert.isDefined(failed.owner.pollUnsafe(), "a task that dies ends its owner")
      yield* Fiber.interrupt(task.owner)
      yield* Fiber.interrupt(cancelled.owner)
    }))

  it.effect("answer restart: a fiber that ends is run again after the backoff, as long as its scope is open", () =>
    Effect.gen(function*() {
      let starts = 0
      const fiber = yield* Effect.scoped(Effect.gen(function*() {
        const fiber = yield* Supervisor.fork(
          { name: "feed", answer: "restart" },
          Effect.suspend(() => (starts++, starts < 3 ? Effect.die("bug") : Effect.never))
        )
        yield* settle
        assert.strictEqual(starts, 1)
        // defaultBackoff: about 200 ms, then 400 ms (±20 %).
        yield* TestClock.adjust("300 millis")
        yield* settle
        assert.strictEqual(starts, 2)
        yield* TestClock.adjust("600 millis")
        yield* settle
        assert.strictEqual(starts, 3)
        assert.isUndefined(fiber.pollUnsafe())
        return fiber
      }))
      assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(fiber)))
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(starts, 3)
    }))
})
