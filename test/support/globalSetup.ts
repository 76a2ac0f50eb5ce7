// One PostgreSQL server per test run: DATABASE_URL when set, else an embedded cluster in a
// temporary directory. The migrations are applied once, to a template database; each test file
// then makes its own databases on the server as copies of it (see database.ts). The same
// directory holds the files the run's commands write (their heartbeats), removed with it, and
// the outage cluster the database-down tests stop and start (an embedded one even with
// DATABASE_URL, a server they must not stop; see outage.ts). Node's compile cache of the run's
// processes lives there too.
import { spawnSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"
import { startEmbeddedPostgres } from "../../src/db/EmbeddedPostgres.ts"
import { createMigratedDatabaseOn, dropDatabaseOn } from "./database.ts"
import { serveOutageCluster } from "./outage.ts"

declare module "vitest" {
  export interface ProvidedContext {
    readonly databaseUrl: string
    /** A directory of this run's own, removed when it ends. */
    readonly scratchDir: string
    /** The migrated database on `databaseUrl` that test databases are copies of. */
    readonly templateDatabase: string
    /** The Unix socket through which test files take the outage cluster (see outage.ts). */
    readonly outageSocket: string
  }
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url))
const BUILD_PREFIX = ".test-dist-"

/** A process that is gone (its build directory, left by a run that was killed, can go). */
const gone = (pid: number) => {
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH"
  }
}

/**
 * The commands the tests run as processes are the built ones, as `npm start` and the image run
 * them: the run builds (build.ts, ~2 s) into a directory of its own at the package root (the
 * console's files are found two levels above a chunk), removed with the run, so a `dist/` that
 * `npm start` serves is never touched. A bundled command starts on half the CPU of `node
 * src/main.ts` (360 against 720 ms for a worker, with the compile cache): the suite starts some
 * hundred of them. test/support/process.ts runs RECON_TEST_MAIN.
 */
const buildCommands = () => {
  for (const name of readdirSync(ROOT)) {
    const pid = name.startsWith(BUILD_PREFIX) ? Number(name.slice(BUILD_PREFIX.length)) : NaN
    if (Number.isInteger(pid) && pid !== process.pid && gone(pid)) rmSync(join(ROOT, name), { recursive: true, force: true })
  }
  const out = `${BUILD_PREFIX}${process.pid}`
  const built = spawnSync(process.execPath, ["build.ts", out], { cwd: ROOT, encoding: "utf8" })
  if (built.status !== 0) throw new Error(`the test run's build failed (node build.ts ${out}):\n${built.stdout}${built.stderr}`)
  process.env.RECON_TEST_MAIN = join(ROOT, out, "main.js")
  return () => rmSync(join(ROOT, out), { recursive: true, force: true })
}

export default async function setup(project: TestProject) {
  const removeBuild = buildCommands()
  const dir = mkdtempSync(join(tmpdir(), "recon-test-pg-"))
  chmodSync(dir, 0o755) // the embedded server runs as the unprivileged user "postgres" when we are root
  const scratch = join(dir, "scratch")
  mkdirSync(scratch)
  // The run starts some hundred `node src/main.ts` processes: Node's compile cache (V8 code for
  // each module, by content) spares each after the first the compiling of the same modules
  // (about a third of a start's CPU). Only the commands get it (process.ts), never the test
  // workers: they load each module once, and writing the cache of everything they loaded when
  // they stop cost ~1.7 s of CPU each at the very end of the run. Removed with the run.
  process.env.RECON_TEST_COMPILE_CACHE ??= process.env.NODE_COMPILE_CACHE ?? join(dir, "compile-cache")
  project.provide("scratchDir", scratch)
  const outageSocket = join(dir, "outage.sock")
  const outage = await serveOutageCluster(join(dir, "outage"), outageSocket)
  project.provide("outageSocket", outageSocket)
  const removeRun = async () => {
    await outage.close()
    rmSync(dir, { recursive: true, force: true })
    removeBuild()
  }
  const template = async (server: string) => {
    project.provide("databaseUrl", server)
    const url = await createMigratedDatabaseOn(server, "recon_template")
    project.provide("templateDatabase", new URL(url).pathname.slice(1))
    return url
  }
  const external = process.env.DATABASE_URL
  if (external !== undefined && external !== "") {
    const url = await template(external)
    return async () => {
      await dropDatabaseOn(external, new URL(url).pathname.slice(1))
      await removeRun()
    }
  }
  const cluster = await startEmbeddedPostgres({ dir: join(dir, "data"), persistent: false })
  await template(cluster.url)
  return async () => {
    await cluster.stop()
    await removeRun()
  }
}
