// A worker process whose parse_loop (replaced) dies at every start, to see the supervisor give up: run as
// `node test/support/dyingWorker.ts` with DATABASE_URL and SVC_WORKER_HEARTBEAT_FILE set.
import { Effect, Layer, Redacted, Schedule } from "effect"
import { launchUntilFatal, runCommand } from "../../src/commands/Lifecycle.ts"
import { DatabaseLive } from "../../src/db/Database.ts"
import { loops } from "../../src/loops/index.ts"
import type { Loop } from "../../src/loops/Loop.ts"
import { workerCore } from "../../src/worker/Runtime.ts"
import { workerSettings } from "./worker.ts"

const dying: Loop = {
  name: "parse_loop",
  ttl: "30 seconds",
  every: "1 second",
  start: Effect.die(new Error("injected: this loop dies at every start"))
}

runCommand(launchUntilFatal(
  workerCore(workerSettings(process.env.SVC_WORKER_HEARTBEAT_FILE!), [...loops.filter((loop) => loop.name !== dying.name), dying], { backoff: Schedule.spaced("50 millis") }).pipe(
    Layer.provide(DatabaseLive(process.env.DATABASE_URL ? Redacted.make(process.env.DATABASE_URL) : undefined))
  )
))
