// Composition of the service commands (recon, worker, admin, wallet, all, migrate): configuration
// (the shared settings of config/ and each service's own Settings), database, migrations, servers and loops.
import { Effect, Layer } from "effect"
import { readDatabaseUrl, readHttpSettings, readLogSettings, readTracingSettings, type TracingSettings } from "../config/AppConfig.ts"
import { all, port } from "../config/Keys.ts"
import { withDevTokens } from "../config/Tokens.ts"
import { CommandFailed } from "../config/CommandFailed.ts"
import { launchUntilFatal, listenProblem, readConfigOrExit, runCommand } from "./Lifecycle.ts"
import { DatabaseLive, DatabaseUrl, DEMO_DATA_DIR, EMBEDDED_DATA_DIR, servicePool } from "../db/Database.ts"
import { runMigrations } from "../db/Migrations.ts"
import { listenUrl } from "../http/NodeServer.ts"
import type { ServiceName } from "../observability/Metrics.ts"
import { tracingLayer } from "../observability/Tracing.ts"

export type Command = "recon" | "worker" | "admin" | "wallet" | "all" | "migrate"

const Migrated = Layer.effectDiscard(runMigrations().pipe(
  Effect.tap((applied) => applied.length > 0 ? Effect.logInfo(`migrations applied: ${applied.join(", ")}`) : Effect.void)
))

/** Where `all` keeps the dev tokens it made (beside the embedded database's data). */
const DEV_TOKEN_FILE = ".data/dev-tokens.env"

/**
 * A service on a pool of its own: its failure to listen is one line naming it and the key of its
 * port; once it has started, "<name> stopped" is logged when it has stopped (the line's finalizer
 * is added before the service's own, so it runs after them).
 */
// Each service with its own pool and its own tracer (its spans carry its own service.name, under `all` too).
const service = <E, R>(name: ServiceName, portKey: string, server: Layer.Layer<never, E, R>, tracing: TracingSettings | undefined) => {
  let started = false
  const stopLine = Layer.effectDiscard(Effect.addFinalizer(() => (started ? Effect.logInfo(`${name} stopped`) : Effect.void)))
  return Layer.effectDiscard(Effect.sync(() => (started = true))).pipe(
    Layer.provide(server),
    Layer.provide([stopLine, servicePool(name), tracingLayer(tracing, name)]),
    Layer.catch((error) => {
      const problem = listenProblem(error, portKey)
      return Layer.effectDiscard(Effect.fail(problem === undefined ? error : new CommandFailed({ message: `${name} ${problem}` })))
    })
  )
}

/**
 * A layer from a module loaded only when the layer is built: a worker container does not carry the
 * code (and the memory) of admin_service's console, and so on.
 */
const loaded = <M, ROut, E, RIn>(load: () => Promise<M>, layer: (module: M) => Layer.Layer<ROut, E, RIn>) =>
  Layer.unwrap(Effect.map(Effect.promise(load), layer))

export const main = async (command: Command, args: ReadonlyArray<string>) => {
  // `all --demo`: the same services on the demo's own embedded database, with the simulated phone.
  const demo = command === "all" && args.length === 1 && args[0] === "--demo"
  if (args.length > 0 && !demo) {
    process.stderr.write(`${command}: unexpected arguments: ${args.join(" ")}\n`)
    process.exit(2)
  }
  const runs = (service: "recon" | "worker" | "admin" | "wallet") => command === service || command === "all"
  // Each service's settings reader, loaded (like its server below) only when the command runs it:
  // commands/ reaches a service only through the files it loads lazily (test/architecture).
  const [reconSettings, workerSettings, walletSettings, adminSettings, demoSettings] = await Promise.all([
    runs("recon") ? import("../recon/Settings.ts") : undefined,
    runs("worker") ? import("../worker/Settings.ts") : undefined,
    runs("wallet") ? import("../wallet/Settings.ts") : undefined,
    runs("admin") ? import("../admin/Settings.ts") : undefined,
    demo ? import("../demo/Settings.ts") : undefined
  ])
  const { env, generated, file: tokenFile } = command === "all"
    ? withDevTokens(process.env, DEV_TOKEN_FILE)
    : { env: process.env, generated: {}, file: undefined }
  // `all` wires admin to the recon and worker ports of the same process.
  const local = command === "all" ? all({ reconPort: port("SVC_RECON_PORT", 8017), pushPort: port("SVC_PUSH_PORT", 8019) }) : Effect.undefined
  const settings = readConfigOrExit(env, all({
    log: readLogSettings,
    recon: reconSettings ? reconSettings.readReconSettings : Effect.undefined,
    worker: workerSettings ? workerSettings.readWorkerSettings : Effect.undefined,
    wallet: walletSettings ? walletSettings.readWalletSettings : Effect.undefined,
    admin: adminSettings ? Effect.flatMap(local, adminSettings.readAdminSettings) : Effect.undefined,
    databaseUrl: demo ? Effect.undefined : readDatabaseUrl,
    demo: demoSettings ? demoSettings.readDemoSettings : Effect.undefined,
    // `all` is a developer's machine: loopback; a single service runs in a container: every interface.
    http: readHttpSettings(command === "all" ? "loopback" : "all"),
    tracing: readTracingSettings
  }))

  if (command === "migrate") {
    return runCommand(Effect.gen(function*() {
      const applied = yield* runMigrations()
      console.log(applied.length === 0 ? "migrations: up to date" : `migrations applied: ${applied.join(", ")}`)
    }).pipe(Effect.provide(DatabaseLive(settings.databaseUrl)), Effect.scoped), env)
  }

  const { recon, worker, admin, wallet, http, tracing } = settings
  const at = (port: number) => `${listenUrl(http.host, port)}${http.host === undefined ? " (all interfaces)" : ""}`
  const dataDir = demo ? DEMO_DATA_DIR : EMBEDDED_DATA_DIR
  const announce = Layer.effectDiscard(Effect.gen(function*() {
    const db = yield* DatabaseUrl
    const lines = [
      ...(recon ? [`recon_service    ${at(recon.port)}  (GET /health, POST /internal/recon/*)`] : []),
      ...(worker
        ? [`recon_worker     ${at(worker.port)}  (POST /push/{device_id}, GET /health/live, GET /health/ready; heartbeat ${worker.heartbeatFile})`]
        : []),
      ...(admin ? [`admin_service    ${at(admin.port)}  (GET / the operator console, GET /api/top-info, GET /ws/top-info)`] : []),
      ...(wallet ? [`wallet_service   ${at(wallet.port)}  (GET /health, POST /internal/wallet/deposit/agree and agree_batch, GET /internal/wallet/balance)`] : []),
      ...(http.metrics ? ["metrics          GET /metrics on each port above (SVC_METRICS=off removes it)"] : []),
      // The origin only: a collector's URL may carry credentials.
      ...(tracing ? [`traces           OTLP/HTTP (JSON) to ${new URL(tracing.url).origin}`] : []),
      `database         ${db.embedded ? `embedded PostgreSQL (${dataDir})` : "DATABASE_URL"}`,
      ...Object.entries(generated).map(([key, value]) => `dev token        ${key}=${value}`),
      ...(tokenFile === undefined ? [] : [
        `dev tokens kept in ${DEV_TOKEN_FILE} (mode 0600) and reused at every start; to use your own, set ${Object.keys(generated).join(" and ")}`
      ])
    ]
    console.log(lines.join("\n"))
  }))
  const servers = Layer.mergeAll(
    recon ? service("recon_service", "SVC_RECON_PORT", loaded(() => import("../recon/ReconServer.ts"), (m) => m.ReconServerLive(recon, http)), tracing) : Layer.empty,
    worker ? service("recon_worker", "SVC_PUSH_PORT", loaded(() => import("../worker/Runtime.ts"), (m) => m.WorkerLive(worker, http)), tracing) : Layer.empty,
    admin ? service("admin_service", "SVC_ADMIN_PORT", loaded(() => import("../admin/AdminServer.ts"), (m) => m.AdminServerLive(admin, http)), tracing) : Layer.empty,
    wallet ? service("wallet_service", "SVC_WALLET_PORT", loaded(() => import("../wallet/WalletServer.ts"), (m) => m.WalletServerLive(wallet, http)), tracing) : Layer.empty
  )
  // The banner (and the demo's phone) only once every server listens: a start that fails prints none.
  const app = Layer.mergeAll(
    announce,
    // Loaded only for the demo: the real services never carry it.
    demo && admin && worker
      ? loaded(() => import("../demo/Demo.ts"), ({ DemoLive }) => DemoLive({ admin: admin.port, push: worker.port }, settings.demo ?? { webhook: undefined }))
      : Layer.empty
  ).pipe(
    Layer.provide(servers),
    Layer.provide(Migrated),
    // Each service above has a pool of its own; this one serves the start-up (check, migrations, demo data).
    Layer.provideMerge(DatabaseLive(settings.databaseUrl, dataDir, "recon_startup"))
  )
  // The worker gives up (restart intensity exceeded) through Fatal: the services stop in order, exit 1.
  runCommand(launchUntilFatal(app), env)
}
