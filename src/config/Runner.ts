// How every command starts and stops: configuration checked first (exit 2, one line per
// problem), logging as LOG_LEVEL/LOG_FORMAT say, SIGTERM/SIGINT as a graceful stop (exit 0,
// in-flight work bounded to 10 s), and exit 1 when the program itself gives up.
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Logger, References } from "effect"
import type { SqlClient } from "effect/sql"
import { DatabaseLive } from "../db/Database.ts"
import { runMigrations } from "../db/Migrations.ts"
import { ConfigProblems, ConfigReader, type Env, type LogSettings, readDatabaseUrl, readLogSettings } from "./AppConfig.ts"

const levels = {
  trace: "Trace", debug: "Debug", info: "Info", warn: "Warn", error: "Error", fatal: "Fatal", none: "None"
} as const

export const loggingLayer = (log: LogSettings) =>
  Layer.mergeAll(
    Logger.layer([log.format === "json" ? Logger.consoleJson : Logger.consolePretty({ colors: false })]),
    Layer.succeed(References.MinimumLogLevel, levels[log.level])
  )

/** Reads the configuration with `read`; on problems prints one line each and exits 2. */
export const readConfigOrExit = <A>(env: Env, read: (config: ConfigReader) => A): A => {
  const config = new ConfigReader(env)
  try {
    const value = read(config)
    config.done()
    return value
  } catch (error) {
    if (error instanceof ConfigProblems) {
      for (const line of error.problems) process.stderr.write(`config: ${line}\n`)
      process.exit(2)
    }
    throw error
  }
}

/** Runs a program to its end; a signal interrupts it and the process exits 0 once it has let go. */
export const runCommand = <E>(program: Effect.Effect<unknown, E>, env: Env = process.env) => {
  const log = readConfigOrExit(env, readLogSettings)
  let stopping = false
  const onSignal = () => {
    if (stopping) return
    stopping = true
    // In-flight work gets 10 s; past that the process goes anyway.
    setTimeout(() => process.exit(0), 10_000).unref()
  }
  process.once("SIGTERM", onSignal)
  process.once("SIGINT", onSignal)
  NodeRuntime.runMain(program.pipe(Effect.provide(loggingLayer(log))), {
    disableErrorReporting: true,
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return onExit(0)
      process.stderr.write(`${Cause.pretty(exit.cause)}\n`)
      onExit(1)
    }
  })
}

/** What a one-shot command on the database reads: DATABASE_URL and logging (exit 2 on a problem). */
export const readDatabaseCommandSettings = (env: Env) =>
  readConfigOrExit(env, (config) => ({ databaseUrl: readDatabaseUrl(config), log: readLogSettings(config) }))

/** Runs a one-shot command's program after the pending migrations, on its database, to its exit. */
export const runOnDatabase = <A, E>(
  settings: ReturnType<typeof readDatabaseCommandSettings>,
  program: Effect.Effect<A, E, SqlClient.SqlClient>
) =>
  Effect.runPromiseExit(runMigrations().pipe(
    Effect.andThen(program),
    Effect.provide(DatabaseLive(settings.databaseUrl)),
    Effect.scoped,
    Effect.provide(loggingLayer(settings.log))
  ))
