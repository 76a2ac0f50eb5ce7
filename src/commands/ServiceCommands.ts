// Composition of the service commands (recon, worker, admin, wallet, all, migrate): configuration,
// database, migrations, servers and loops.
import { Effect, Layer } from "effect"
import {
  all, port, readAdminSettings, readDatabaseUrl, readHttpSettings, readLogSettings, readReconSettings, readWalletSettings, readWorkerSettings, withDevTokens
} from "../config/AppConfig.ts"
import { launchUntilFatal, readConfigOrExit, runCommand } from "../config/Runner.ts"
import { DatabaseLive, DatabaseUrl, DEMO_DATA_DIR, EMBEDDED_DATA_DIR, servicePool } from "../db/Database.ts"
import { runMigrations } from "../db/Migrations.ts"
import { listenUrl } from "../http/NodeServer.ts"

export type Command = "recon" | "worker" | "admin" | "wallet" | "all" | "migrate"

const Migrated = Layer.effectDiscard(runMigrations().pipe(
  Effect.tap((applied) => applied.length > 0 ? Effect.logInfo(`migrations applied: ${applied.join(", ")}`) : Effect.void)
))

/** Where `all` keeps the dev tokens it made (beside the embedded database's data). */
const DEV_TOKEN_FILE = ".data/dev-tokens.env"

/** Built before the service it is provided to, so its line is written once that service has stopped. */
const stopLine = (line: string) => Layer.effectDiscard(Effect.addFinalizer(() => Effect.logInfo(line)))

/** A layer from a module loaded only when the layer is built. */
const loaded = <M, ROut, E, RIn>(load: () => Promise<M>, layer: (module: M) => Layer.Layer<ROut, E, RIn>) =>
  Layer.unwrap(Effect.map(Effect.promise(load), layer))

/**
 * A service the command runs (its settings read), on its own pool, with its stop line; its module
 * is loaded only then: a worker container does not carry the code (and the memory) of
 * admin_service's dashboard, and so on.
 */
const service = <S, M, ROut, E, RIn>(
  settings: S | undefined,
  pool: "recon_service" | "recon_worker" | "admin_service" | "wallet_service",
  load: () => Promise<M>,
  layer: (module: M, settings: S) => Layer.Layer<ROut, E, RIn>
) =>
  settings === undefined
    ? Layer.empty
    : loaded(load, (module) => layer(module, settings)).pipe(Layer.provide([stopLine(`${pool} stopped`), servicePool(pool)]))

export const main = (command: Command, args: ReadonlyArray<string>) => {
  // `all --demo`: the same services on the demo's own embedded database, with the simulated phone.
  const demo = command === "all" && args.length === 1 && args[0] === "--demo"
  if (args.length > 0 && !demo) {
    process.stderr.write(`${command}: unexpected arguments: ${args.join(" ")}\n`)
    process.exit(2)
  }
  const runs = (service: "recon" | "worker" | "admin" | "wallet") => command === service || command === "all"
  const { env, generated, file: tokenFile } = command === "all"
    ? withDevTokens(process.env, DEV_TOKEN_FILE)
    : { env: process.env, generated: {}, file: undefined }
  // `all` wires admin to the recon and worker ports of the same process.
  const local = command === "all" ? all({ reconPort: port("SVC_RECON_PORT", 8017), pushPort: port("SVC_PUSH_PORT", 8019) }) : Effect.undefined
  const settings = readConfigOrExit(env, all({
    log: readLogSettings,
    recon: runs("recon") ? readReconSettings : Effect.undefined,
    worker: runs("worker") ? readWorkerSettings : Effect.undefined,
    wallet: runs("wallet") ? readWalletSettings : Effect.undefined,
    admin: runs("admin") ? Effect.flatMap(local, readAdminSettings) : Effect.undefined,
    databaseUrl: demo ? Effect.undefined : readDatabaseUrl,
    // `all` is a developer's machine: loopback; a single service runs in a container: every interface.
    http: readHttpSettings(command === "all" ? "loopback" : "all")
  }))

  if (command === "migrate") {
    return runCommand(Effect.gen(function*() {
      const applied = yield* runMigrations()
      console.log(applied.length === 0 ? "migrations: up to date" : `migrations applied: ${applied.join(", ")}`)
    }).pipe(Effect.provide(DatabaseLive(settings.databaseUrl)), Effect.scoped), env)
  }

  const { recon, worker, admin, wallet, http } = settings
  const at = (port: number) => `${listenUrl(http.host, port)}${http.host === undefined ? " (all interfaces)" : ""}`
  const dataDir = demo ? DEMO_DATA_DIR : EMBEDDED_DATA_DIR
  const announce = Layer.effectDiscard(Effect.gen(function*() {
    const db = yield* DatabaseUrl
    const lines = [
      ...(recon ? [`recon_service    ${at(recon.port)}  (GET /health, POST /internal/recon/*)`] : []),
      ...(worker
        ? [`recon_worker     ${at(worker.port)}  (POST /push/{device_id}, GET /health/live, GET /health/ready; heartbeat ${worker.heartbeatFile})`]
        : []),
      ...(admin ? [`admin_service    ${at(admin.port)}  (GET / dashboard, GET /api/top-info, GET /ws/top-info)`] : []),
      ...(wallet ? [`wallet_service   ${at(wallet.port)}  (GET /health, POST /internal/wallet/deposit/agree and agree_batch, GET /internal/wallet/balance)`] : []),
      `database         ${db.embedded ? `embedded PostgreSQL (${dataDir})` : "DATABASE_URL"}`,
      ...Object.entries(generated).map(([key, value]) => `dev token        ${key}=${value}`),
      ...(tokenFile === undefined ? [] : [
        `dev tokens kept in ${DEV_TOKEN_FILE} (mode 0600) and reused at every start; to use your own, set ${Object.keys(generated).join(" and ")}`
      ])
    ]
    console.log(lines.join("\n"))
  }))
  const app = Layer.mergeAll(
    service(recon, "recon_service", () => import("../http/ReconServer.ts"), (m, settings) => m.ReconServerLive(settings, http)),
    service(worker, "recon_worker", () => import("../loops/Runtime.ts"), (m, settings) => m.WorkerLive(settings, http)),
    service(admin, "admin_service", () => import("../admin/AdminServer.ts"), (m, settings) => m.AdminServerLive(settings, http)),
    service(wallet, "wallet_service", () => import("../http/WalletServer.ts"), (m, settings) => m.WalletServerLive(settings, http)),
    announce,
    // Loaded only for the demo: the real services never carry it.
    demo && admin && worker
      ? loaded(() => import("../demo/Demo.ts"), ({ DemoLive }) => DemoLive({ admin: admin.port, push: worker.port }))
      : Layer.empty
  ).pipe(
    Layer.provide(Migrated),
    // Each service above has a pool of its own; this one serves the start-up (check, migrations, demo data).
    Layer.provideMerge(DatabaseLive(settings.databaseUrl, dataDir, "recon_startup"))
  )
  // The worker gives up (restart intensity exceeded) through Fatal: the services stop in order, exit 1.
  runCommand(launchUntilFatal(app), env)
}
