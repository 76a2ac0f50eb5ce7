// The bind address: loopback by default for `all` (a developer's machine), every interface for
// the single-service commands (containers), SVC_BIND_HOST to choose; the banner and the log line
// say where the server really listens.
import { assert, describe, it } from "@effect/vitest"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { spawnCommand, waitForUrl } from "../support/process.ts"
import { ADMIN_TOKEN, RECON_TOKEN } from "../support/recon.ts"
import { eventuallyAsync } from "../support/time.ts"

const run = async (command: string, env: Record<string, string>, url: (ports: { recon: number }) => string) => {
  const db = await createMigratedDatabase("bind")
  const ports = { recon: await freePort(), push: await freePort(), admin: await freePort() }
  const spawned = spawnCommand([command], {
    DATABASE_URL: db,
    SVC_RECON_PORT: String(ports.recon),
    SVC_PUSH_PORT: String(ports.push),
    SVC_ADMIN_PORT: String(ports.admin),
    SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
    SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN,
    LOG_FORMAT: "json",
    ...env
  })
  try {
    assert.isTrue(await waitForUrl(`http://127.0.0.1:${ports.recon}/health`, 60_000), spawned.output())
    // The banner is printed once every server listens.
    await eventuallyAsync("the banner", async () => spawned.output().includes("recon_service "), { timeoutMs: 20_000, everyMs: 50, detail: spawned.output })
    const output = spawned.output()
    const banner = output.split("\n").find((line) => line.startsWith("recon_service "))
    const listening = output.split("\n").filter((line) => line.includes("Listening on")).map((line) => JSON.parse(line).message as string)
    return { banner, listening, expected: url(ports) }
  } finally {
    spawned.child.kill("SIGTERM")
    await spawned.exited
  }
}

describe("bind address", () => {
  it("`recon` binds every interface by default, and says so", async () => {
    const { banner, listening, expected } = await run("recon", {}, ({ recon }) => `http://[::]:${recon}`)
    assert.include(banner, `${expected} (all interfaces)`)
    assert.include(listening.join("\n"), `Listening on ${expected}`)
  }, 120_000)

  it("`all` binds loopback by default, and the log says the same address as the banner", async () => {
    const { banner, listening, expected } = await run("all", {}, ({ recon }) => `http://127.0.0.1:${recon}`)
    assert.include(banner, expected)
    assert.notInclude(banner, "all interfaces")
    assert.include(listening.join("\n"), `Listening on ${expected}`)
    assert.isFalse(listening.some((line) => line.includes("[::]")), listening.join("\n"))
  }, 120_000)

  it("SVC_BIND_HOST chooses the address", async () => {
    const { banner, listening, expected } = await run("recon", { SVC_BIND_HOST: "127.0.0.1" }, ({ recon }) => `http://127.0.0.1:${recon}`)
    assert.include(banner, expected)
    assert.include(listening.join("\n"), `Listening on ${expected}`)
  }, 120_000)

  it("refuses an SVC_BIND_HOST that is no address (exit 2, one line)", { timeout: 120_000 }, async () => {
    const spawned = spawnCommand(["recon"], { SVC_BIND_HOST: "not a host", SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN })
    assert.strictEqual(await spawned.exited, 2)
    assert.match(spawned.output(), /^config: SVC_BIND_HOST: expected an IP address/m)
  })
})
