// Composition of the service commands: configuration, database, migrations, servers and loops.
import { Effect, Layer } from "effect"
import { AdminServerLive } from "./admin/AdminServer.ts"
import { readAdminSettings, readDatabaseUrl, readLogSettings, readReconSettings, readWorkerSettings, withDevTokens } from "./config/AppConfig.ts"
import { readConfigOrExit, runCommand } from "./config/Runner.ts"
import { DatabaseLive, DatabaseUrl, DEMO_DATA_DIR, EMBEDDED_DATA_DIR } from "./db/Database.ts"
import { runMigrations } from "./db/Migrations.ts"
import { ReconServerLive } from "./http/ReconServer.ts"
import { launchUntilFatal, WorkerLive } from "./loops/Runtime.ts"

export type Command = "recon" | "worker" | "admin" | "all" | "migrate"

const Migrated = Layer.effectDiscard(runMigrations().pipe(
  Effect.tap((applied) => applied.length > 0 ? Effect.logInfo(`migrations applied: ${applied.join(", ")}`) : Effect.void)
))

export const main = (command: Command, args: ReadonlyArray<string>) => {
  // `all --demo`: the same services on the demo's own embedded database, with the simulated phone.
  const demo = command === "all" && args.length === 1 && args[0] === "--demo"
  if (args.length > 0 && !demo) {
    process.stderr.write(`${command}: unexpected arguments: ${args.join(" ")}\n`)
    process.exit(2)
  }
  const runs = (service: "recon" | "worker" | "admin") => command === service || command === "all"
  const { env, generated } = command === "all" ? withDevTokens(process.env) : { env: process.env, generated: {} }
  const settings = readConfigOrExit(env, (config) => {
    readLogSettings(config)
    const recon = runs("recon") ? readReconSettings(config) : undefined
    const worker = runs("worker") ? readWorkerSettings(config) : undefined
    return {
      databaseUrl: demo ? undefined : readDatabaseUrl(config),
      recon,
      worker,
      // `all` wires admin to the recon and worker ports of the same process.
      admin: runs("admin")
        ? readAdminSettings(config, recon && worker ? { reconPort: recon.port, pushPort: worker.port } : undefined)
        : undefined
    }
  })

  if (command === "migrate") {
    return runCommand(Effect.gen(function*() {
      const applied = yield* runMigrations()
      console.log(applied.length === 0 ? "migrations: up to date" : `migrations applied: ${applied.join(", ")}`)
    }).pipe(Effect.provide(DatabaseLive(settings.databaseUrl)), Effect.scoped), env)
  }

  const { recon, worker, admin } = settings
  const dataDir = demo ? DEMO_DATA_DIR : EMBEDDED_DATA_DIR
  const announce = Layer.effectDiscard(Effect.gen(function*() {
    const db = yield* DatabaseUrl
    const lines = [
      ...(recon ? [`recon_service    http://127.0.0.1:${recon.port}  (GET /health, POST /internal/recon/*)`] : []),
      ...(worker
        ? [`recon_worker     http://127.0.0.1:${worker.port}  (POST /push/{device_id}, GET /health/live, GET /health/ready; heartbeat ${worker.heartbeatFile})`]
        : []),
      ...(admin ? [`admin_service    http://127.0.0.1:${admin.port}  (GET / dashboard, GET /api/top-info, GET /ws/top-info)`] : []),
      `database         ${db.embedded ? `embedded PostgreSQL (${dataDir})` : "DATABASE_URL"}`,
      ...Object.entries(generated).map(([key, value]) => `dev token        ${key}=${value}`)
    ]
    console.log(lines.join("\n"))
  }))
  const app = Layer.mergeAll(
    recon ? ReconServerLive(recon) : Layer.empty,
    worker ? WorkerLive(worker) : Layer.empty,
    admin ? AdminServerLive(admin) : Layer.empty,
    announce,
    // Loaded only for the demo: the real services never carry it.
    demo && admin && worker
      ? Layer.unwrap(Effect.map(Effect.promise(() => import("./demo/Demo.ts")), ({ DemoLive }) => DemoLive({ admin: admin.port, push: worker.port })))
      : Layer.empty
  ).pipe(
    Layer.provide(Migrated),
    Layer.provideMerge(DatabaseLive(settings.databaseUrl, dataDir))
  )
  // The worker gives up (restart intensity exceeded) through Fatal: the services stop in order, exit 1.
  runCommand(launchUntilFatal(app), env)
}
