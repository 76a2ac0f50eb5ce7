// How every command starts and stops: configuration checked first (exit 2, one line per
// problem), logging as LOG_LEVEL/LOG_FORMAT say (on stderr: stdout is the commands' output),
// SIGTERM/SIGINT as a graceful stop (exit 0, in-flight work bounded to SVC_STOP_GRACE_S, 10 s,
// the embedded database stopped last on every path), and exit 1 when the program itself gives up.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Context, Deferred, Effect, Exit, Layer, Logger, Option, References, Result } from "effect"
import { HttpServerError } from "effect/http"
import type { SqlClient } from "effect/sql"
import { DatabaseLive } from "../db/Database.ts"
import { stopOwnedClusters } from "../db/EmbeddedPostgres.ts"
import { runMigrations } from "../db/Migrations.ts"
import { beginStopping } from "../health/Stopping.ts"
import { type LogSettings, readDatabaseUrl, readLogSettings } from "../config/AppConfig.ts"
import { all, type Env, fromEnv, int, type Settings } from "../config/Keys.ts"
import { stderrLogger } from "../config/LogFormat.ts"
import { CommandFailed } from "../config/CommandFailed.ts"

/** The process-wide "stop with exit 1": a part that cannot go on (the worker's supervisor gave up) stops the program. */
export class Fatal extends Context.Service<Fatal, {
  /** The program's layers close in order, then the process exits 1 with `error`. */
  readonly stop: (error: unknown) => Effect.Effect<void>
}>()("recon/commands/Lifecycle/Fatal") {
  /** Fatal as a `deferred` that fails with the error (tests await it). */
  static readonly layerOn = (deferred: Deferred.Deferred<never, unknown>) =>
    Layer.succeed(Fatal, { stop: (error) => Effect.asVoid(Deferred.fail(deferred, error)) })
}

/** Runs an application until it is interrupted, or until Fatal stops it: then its layers close in order and the error is the result (exit 1). */
export const launchUntilFatal = <E>(app: Layer.Layer<never, E, Fatal>) =>
  Effect.gen(function*() {
    const fatal = yield* Deferred.make<never, unknown>()
    return yield* Effect.raceFirst(Layer.launch(Layer.provide(app, Fatal.layerOn(fatal))), Deferred.await(fatal))
  })

const levels = {
  trace: "Trace", debug: "Debug", info: "Info", warn: "Warn", error: "Error", fatal: "Fatal", none: "None"
} as const

export const loggingLayer = (log: LogSettings) =>
  Layer.mergeAll(
    Logger.layer([stderrLogger(log.format, log.level === "debug" || log.level === "trace")]),
    Layer.succeed(Logger.LogToStderr, true),
    Layer.succeed(References.MinimumLogLevel, levels[log.level])
  )

/** Reads `settings` from `env` (through effect Config); on problems prints one line each and exits 2. */
export const readConfigOrExit = <A>(env: Env, settings: Settings<A>): A => {
  const result = Effect.runSync(Effect.result(fromEnv(env, settings)))
  if (Result.isSuccess(result)) return result.success
  for (const line of result.failure.problems) process.stderr.write(`config: ${line}\n`)
  return process.exit(2)
}

/**
 * Why a server could not listen (a port another process holds, …), as a line's end naming the
 * address (and the key that sets its port, when given); undefined for any other error.
 */
export const listenProblem = (error: unknown, portKey?: string): string | undefined => {
  // The server's own error, with Node's listen error as its cause.
  if (error instanceof HttpServerError.ServeError && error.cause instanceof Error && "code" in error.cause) {
    const { code, address, port } = error.cause as Error & { code: unknown; address?: unknown; port?: unknown }
    const at = `cannot listen on ${String(address)}:${String(port)}${portKey === undefined ? "" : ` (${portKey})`}`
    if (code === "EADDRINUSE") return `${at}: the port is in use (is recon already running?)`
    if (code === "EACCES") return `${at}: permission denied`
  }
  return undefined
}

/** A failure the user can act on, as one line (anything else is printed with its cause). */
export const userMessage = (error: unknown): string | undefined =>
  error instanceof CommandFailed ? error.message : listenProblem(error)

/** SVC_STOP_GRACE_S: how long in-flight work has after SIGTERM/SIGINT before the process goes anyway (DESIGN section 2: 10 s). */
export const readStopGraceS: Settings<number> = int("SVC_STOP_GRACE_S", 10, 1, 3600)

/** Runs a program to its end; a signal interrupts it and the process exits 0 once it has let go. */
export const runCommand = <E>(program: Effect.Effect<unknown, E>, env: Env = process.env) => {
  const { log, graceS } = readConfigOrExit(env, all({ log: readLogSettings, graceS: readStopGraceS }))
  const logging = loggingLayer(log)
  const logInfo = (message: string) => Effect.runFork(Effect.logInfo(message).pipe(Effect.provide(logging)))
  let stopping = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    // Readiness false and the doors closed before any other step of the shutdown.
    beginStopping()
    logInfo(`${signal} received: stopping`)
    // In-flight work gets the grace (10 s); past that the process goes anyway, the embedded database stopped first.
    setTimeout(() => {
      logInfo(`still stopping after ${graceS} s: forced exit`)
      void stopOwnedClusters().finally(() => process.exit(0))
    }, graceS * 1000).unref()
  }
  process.once("SIGTERM", onSignal)
  process.once("SIGINT", onSignal)
  NodeRuntime.runMain(program.pipe(Effect.provide(logging)), {
    disableErrorReporting: true,
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return onExit(0)
      const failure = Cause.findErrorOption(exit.cause)
      const line = Option.isSome(failure) ? userMessage(failure.value) : undefined
      process.stderr.write(line !== undefined ? `error: ${line}\n` : `${Cause.pretty(exit.cause)}\n`)
      // Whatever failed, a server this process started does not outlive it.
      const code = Option.isSome(failure) && failure.value instanceof CommandFailed ? failure.value.exitCode ?? 1 : 1
      void stopOwnedClusters().finally(() => onExit(code))
    }
  })
}

/** What a one-shot command on the database reads: DATABASE_URL and logging. */
export const databaseCommandSettings = all({ databaseUrl: readDatabaseUrl, log: readLogSettings })

/** What a one-shot command on the database reads, read now (exit 2 on a problem). */
export const readDatabaseCommandSettings = (env: Env) => readConfigOrExit(env, databaseCommandSettings)

/** Runs a one-shot command's program after the pending migrations, on its database, to its exit. */
export const runOnDatabase = <A, E>(
  settings: Effect.Success<typeof databaseCommandSettings>,
  program: Effect.Effect<A, E, SqlClient.SqlClient>
) =>
  Effect.runPromiseExit(runMigrations().pipe(
    Effect.andThen(program),
    Effect.provide(DatabaseLive(settings.databaseUrl)),
    Effect.scoped,
    Effect.provide(loggingLayer(settings.log))
  ))
