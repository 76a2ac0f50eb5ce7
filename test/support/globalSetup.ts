// One PostgreSQL server per test run: DATABASE_URL when set, else an embedded cluster in a
// temporary directory. Each test file then makes its own database on it (see database.ts). The
// same directory holds the files the run's commands write (their heartbeats), removed with it.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { startEmbeddedPostgres } from "../../src/db/EmbeddedPostgres.ts"

declare module "vitest" {
  export interface ProvidedContext {
    readonly databaseUrl: string
    /** A directory of this run's own, removed when it ends. */
    readonly scratchDir: string
  }
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "recon-test-pg-"))
  chmodSync(dir, 0o755) // the embedded server runs as the unprivileged user "postgres" when we are root
  const scratch = join(dir, "scratch")
  mkdirSync(scratch)
  project.provide("scratchDir", scratch)
  const removeDir = () => rmSync(dir, { recursive: true, force: true })
  const external = process.env.DATABASE_URL
  if (external !== undefined && external !== "") {
    project.provide("databaseUrl", external)
    return removeDir
  }
  const cluster = await startEmbeddedPostgres({ dir: join(dir, "data"), persistent: false })
  project.provide("databaseUrl", cluster.url)
  return async () => {
    await cluster.stop()
    removeDir()
  }
}
