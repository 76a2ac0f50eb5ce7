// The sign-in counters on the test clock: a lockout lasts until its window ends, a success clears
// the account's count (not the address's), and the waiting room refuses past its size.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { signInRefused } from "../../src/admin/Failures.ts"
import { SignInLimits } from "../../src/admin/SignInLimits.ts"

const limits = { perAccount: 2, perAddress: 3, windowMs: 60_000, maxWaiting: 1 }

describe("SignInLimits", () => {
  it.effect("refuses past the account's limit until the window ends, with the seconds left", () =>
    Effect.gen(function*() {
      const guard = yield* SignInLimits
      yield* guard.attempt("alice", "10.0.0.1")
      yield* guard.attempt("alice", "10.0.0.2")
      yield* TestClock.adjust("20 seconds")
      const refused = yield* Effect.flip(guard.attempt("alice", "10.0.0.3"))
      assert.strictEqual(refused.retryAfterS, 40)
      assert.strictEqual(signInRefused(refused).status, 429)
      yield* TestClock.adjust("40 seconds")
      yield* guard.attempt("alice", "10.0.0.3")
    }).pipe(Effect.provide(SignInLimits.layer(limits))))

  it.effect("a success clears the account's count but not the address's", () =>
    Effect.gen(function*() {
      const guard = yield* SignInLimits
      yield* guard.attempt("bob", "10.0.0.9")
      yield* guard.attempt("bob", "10.0.0.9")
      yield* guard.succeeded("bob")
      yield* guard.attempt("bob", "10.0.0.9")
      const refused = yield* Effect.flip(guard.attempt("carol", "10.0.0.9"))
      assert.include(signInRefused(refused).data?.detail ?? "", "too many sign-in attempts")
    }).pipe(Effect.provide(SignInLimits.layer(limits))))

  it.effect("refuses a sign-in at once when the waiting room is full", () =>
    Effect.gen(function*() {
      const guard = yield* SignInLimits
      const gate = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(guard.queued(Deferred.await(gate)))
      yield* Effect.yieldNow
      const second = yield* Effect.exit(guard.queued(Effect.void))
      assert.isTrue(Exit.isFailure(second))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(guard.queued(Effect.void))))
    }).pipe(Effect.provide(SignInLimits.layer(limits))))
})
