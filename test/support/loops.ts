// Running one loop's passes in a test: the services a loop may use, on a test database, with the
// kicks it sends recorded, and its log lines captured.
import { Effect, Layer, Logger, References } from "effect"
import { FetchHttpClient } from "effect/http"
import { HealthRegistry } from "../../src/health/HealthRegistry.ts"
import type { WorkerSettings } from "../../src/loops/Settings.ts"
import { Kicks, type LoopName, loopStores, Worker } from "../../src/loops/Loop.ts"
import { ParseInbox } from "../../src/loops/ParseLoop.ts"
import { sqlLayer } from "./database.ts"

export const loopServices = (url: string, settings: WorkerSettings, kicked: Array<LoopName> = []) =>
  Layer.mergeAll(
    loopStores.pipe(Layer.provideMerge(sqlLayer(url))),
    Worker.layer(settings),
    ParseInbox.layer.pipe(Layer.provideMerge(
      Layer.succeed(Kicks, Kicks.of({ kick: (name) => Effect.sync(() => void kicked.push(name)), register: () => Effect.void }))
    )),
    FetchHttpClient.layer,
    // The hand-over and the wallet calls report their work to it.
    HealthRegistry.layer([])
  )

/** Every log line (debug and up) of the test, rendered as `<level> <message as JSON>`. */
export const captureLogs = (lines: Array<string>) =>
  Layer.mergeAll(
    Logger.layer([Logger.make((options) => lines.push(`${options.logLevel} ${JSON.stringify(options.message)}`))]),
    Layer.succeed(References.MinimumLogLevel, "Debug")
  )
