// Composition of the service commands: configuration, database, migrations, servers.
import { Effect, Layer } from "effect"
import { readDatabaseUrl, readLogSettings, readReconSettings, withDevTokens } from "./config/AppConfig.ts"
import { readConfigOrExit, runCommand } from "./config/Runner.ts"
import { DatabaseLive, DatabaseUrl } from "./db/Database.ts"
import { runMigrations } from "./db/Migrations.ts"
import { ReconServerLive } from "./http/ReconServer.ts"

const Migrated = Layer.effectDiscard(runMigrations().pipe(
  Effect.tap((applied) => applied.length > 0 ? Effect.logInfo(`migrations applied: ${applied.join(", ")}`) : Effect.void)
))

export const main = (command: "recon" | "all" | "migrate", args: ReadonlyArray<string>) => {
  if (args.length > 0) {
    process.stderr.write(`${command}: unexpected arguments: ${args.join(" ")}\n`)
    process.exit(2)
  }
  const { env, generated } = command === "all" ? withDevTokens(process.env) : { env: process.env, generated: {} }
  const { databaseUrl, recon } = readConfigOrExit(env, (config) => ({
    log: readLogSettings(config),
    databaseUrl: readDatabaseUrl(config),
    recon: command === "migrate" ? undefined : readReconSettings(config)
  }))

  if (command === "migrate") {
    return runCommand(Effect.gen(function*() {
      const applied = yield* runMigrations()
      console.log(applied.length === 0 ? "migrations: up to date" : `migrations applied: ${applied.join(", ")}`)
    }).pipe(Effect.provide(DatabaseLive(databaseUrl)), Effect.scoped), env)
  }

  if (recon === undefined) return
  const announce = Layer.effectDiscard(Effect.gen(function*() {
    const db = yield* DatabaseUrl
    const lines = [
      `recon_service    http://127.0.0.1:${recon.port}  (GET /health, POST /internal/recon/*)`,
      `database         ${db.embedded ? "embedded PostgreSQL (.data/pg)" : "DATABASE_URL"}`,
      ...Object.entries(generated).map(([key, value]) => `dev token        ${key}=${value}`)
    ]
    console.log(lines.join("\n"))
  }))
  const app = Layer.mergeAll(ReconServerLive(recon), announce).pipe(
    Layer.provide(Migrated),
    Layer.provideMerge(DatabaseLive(databaseUrl))
  )
  runCommand(Layer.launch(app), env)
}
