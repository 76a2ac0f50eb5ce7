// One PostgreSQL server per test run: DATABASE_URL when set, else an embedded cluster in a
// temporary directory. Each test file then makes its own database on it (see database.ts).
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { startEmbeddedPostgres } from "../../src/db/EmbeddedPostgres.ts"

declare module "vitest" {
  export interface ProvidedContext {
    readonly databaseUrl: string
  }
}

export default async function setup(project: TestProject) {
  const external = process.env.DATABASE_URL
  if (external !== undefined && external !== "") {
    project.provide("databaseUrl", external)
    return
  }
  const dir = mkdtempSync(join(tmpdir(), "recon-test-pg-"))
  chmodSync(dir, 0o755) // the embedded server runs as the unprivileged user "postgres" when we are root
  const cluster = await startEmbeddedPostgres({ dir: join(dir, "data"), persistent: false })
  project.provide("databaseUrl", cluster.url)
  return async () => {
    await cluster.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
