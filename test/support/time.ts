// Waiting in tests: the two jobs, each written once.
//
// - `settle` is for effects on the TestClock: it lets the fibers a test forked run until each
//   waits again (on the clock, a queue, a deferred). It moves no clock, waits on nothing real, has
//   no timeout and cannot fail; what it lets happen, the test asserts next.
// - `eventually` is for things that happen on their own schedule, off the test's fiber: a server,
//   a child process, a file another fiber writes, a database. It polls a check on the real clock
//   until it holds. Its deadline is a bound on the wait, never a measure of speed: past it the test
//   fails with "timed out after N ms waiting for: <what>" (and the `detail` given, e.g. a process's
//   output). A deadline a check meets only when the machine is fast is a wall-clock assertion in
//   disguise: time-based behaviour goes through the TestClock instead.
import { Effect } from "effect"

/** Lets forked fibers run until each waits again (10 yields); for effects on the TestClock. */
export const settle: Effect.Effect<void> = Effect.gen(function*() {
  for (let i = 0; i < 10; i++) yield* Effect.yieldNow
})

/** Waits on the real clock (I/O), whatever clock the test's effects run on. */
export const realWait = (ms: number): Effect.Effect<void> => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

export interface EventuallyOptions {
  /** How long to keep trying before the test fails (10 s). */
  readonly timeoutMs?: number
  /** The real time between two checks (25 ms: each check is a query or a request, and a run polls thousands of times; more for a check that is itself costly). */
  readonly everyMs?: number
  /** Appended to the failure (a process's output, a server's last answer). */
  readonly detail?: () => string
}

const options = (given: number | EventuallyOptions | undefined) => typeof given === "number" ? { timeoutMs: given } : given ?? {}

/**
 * Checks `check` on the real clock every `everyMs` until it answers true; dies with
 * "timed out after N ms waiting for: `what`" past `timeoutMs` (a number is the timeout).
 */
export const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, given?: number | EventuallyOptions): Effect.Effect<void, E, R> =>
  Effect.gen(function*() {
    const { timeoutMs = 10_000, everyMs = 25, detail } = options(given)
    const until = Date.now() + timeoutMs
    while (!(yield* check)) {
      if (Date.now() > until) {
        return yield* Effect.die(new Error(`timed out after ${timeoutMs} ms waiting for: ${what}${detail === undefined ? "" : `\n${detail()}`}`))
      }
      yield* realWait(everyMs)
    }
  })

/** {@link eventually} for a test written with promises: the same contract, `check` a promise. */
export const eventuallyAsync = (what: string, check: () => Promise<boolean>, given?: number | EventuallyOptions): Promise<void> =>
  Effect.runPromise(eventually(what, Effect.promise(check), given))
