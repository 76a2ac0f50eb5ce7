// The worker gives its memory back once a burst is over. V8 keeps the pages a burst made it take
// (its heap grows to several times what is live, and freed pages stay pooled) until a GC that
// reduces memory, and the memory reducer that should run one when the process goes quiet does not
// see a Node process as quiet: measured, the worker stayed at ~280 MB RSS for minutes after
// 10,000 webhooks while 40 MB were live (bench/pipeline.ts, BENCHMARKS.md). So: every 10 s, when
// the RSS has grown well past what the last such GC left and the process is quiet (its event loop
// busy under 5 % of the last 10 s: the ~100 ms pause then delays no traffic), one is run. Needs
// `gc` (main.ts starts the services with --expose-gc); without it (tests) this does nothing.
import { Effect } from "effect"
import { performance } from "node:perf_hooks"

/** How often the RSS is looked at. */
const CHECK_EVERY = "10 seconds"
/** Growth since the last memory-reducing GC worth giving back. */
const GROWTH_BYTES = 32 * 1024 * 1024
/** The event loop busy for less than this share of the last interval: quiet. */
const QUIET_UTILIZATION = 0.05

/** Runs forever: a component of the worker. */
export const memoryTrim: Effect.Effect<never> = Effect.gen(function*() {
  const collect = globalThis.gc
  if (collect === undefined) return yield* Effect.never
  // The RSS the last memory-reducing GC left (none yet: the first quiet moment after start-up
  // gives back what loading and compiling the code took).
  let floor: number | undefined
  let since = performance.eventLoopUtilization()
  while (true) {
    yield* Effect.sleep(CHECK_EVERY)
    const rss = process.memoryUsage.rss()
    const quiet = performance.eventLoopUtilization(since).utilization < QUIET_UTILIZATION
    if ((floor === undefined || rss > floor + GROWTH_BYTES) && quiet) {
      // "last-resort": full GCs that also release V8's pooled pages (one ~100 ms pause).
      yield* Effect.promise(() => collect({ type: "major", execution: "async", flavor: "last-resort" }))
      floor = process.memoryUsage.rss()
      yield* Effect.logDebug(`memory given back: RSS ${mb(rss)} → ${mb(floor)}`)
    }
    since = performance.eventLoopUtilization()
  }
})

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`
