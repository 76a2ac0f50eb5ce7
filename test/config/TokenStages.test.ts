// Stage C of the token migration (DESIGN section 3) on every command that accepts or presents a
// token, as processes: with the shared token still set, or a needed per-caller key empty, each
// refuses to start (exit 2, one line per problem, no secret printed); the stage key is read once.
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"

const SHARED = "old-shared-secret-42"
const ADMIN = "admin-secret-42"
const RECON = "recon-secret-42"

const run = (command: string, env: Record<string, string>) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ["src/main.ts", command], {
      // An unreachable database: a command that got past its configuration would not exit 2.
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 30_000
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

const commands = ["recon", "worker", "admin", "wallet", "all"] as const
/** The per-caller keys each command needs in stage C (admin presents its own and accepts recon's). */
const needs: Record<(typeof commands)[number], ReadonlyArray<string>> = {
  recon: ["SVC_INTERNAL_SERVICE_TOKEN_ADMIN"],
  worker: ["SVC_INTERNAL_SERVICE_TOKEN_RECON"],
  admin: ["SVC_INTERNAL_SERVICE_TOKEN_ADMIN", "SVC_INTERNAL_SERVICE_TOKEN_RECON"],
  wallet: ["SVC_INTERNAL_SERVICE_TOKEN_RECON"],
  all: ["SVC_INTERNAL_SERVICE_TOKEN_ADMIN", "SVC_INTERNAL_SERVICE_TOKEN_RECON"]
}
const stageC = { SVC_PER_CALLER_TOKEN_REQUIRED: "on", SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON, RECON_SERVICE_URL: "http://127.0.0.1:1" }

const lines = (stderr: string) => stderr.trim().split("\n")
const noSecret = (r: { stdout: string; stderr: string }) => {
  for (const secret of [SHARED, ADMIN, RECON]) assert.notInclude(r.stdout + r.stderr, secret)
}

describe("stage C on every command", () => {
  it("the shared token still set: exit 2 with that one line", async () => {
    const runs = await Promise.all(commands.map((c) => run(c, { ...stageC, SVC_INTERNAL_SERVICE_TOKEN: SHARED })))
    for (const [i, r] of runs.entries()) {
      assert.strictEqual(r.code, 2, `${commands[i]}: ${r.stderr}`)
      assert.deepStrictEqual(lines(r.stderr), [
        "config: SVC_INTERNAL_SERVICE_TOKEN: must be empty once SVC_PER_CALLER_TOKEN_REQUIRED=on (stage C accepts only per-caller tokens)"
      ], commands[i])
      noSecret(r)
    }
  })

  it("a needed per-caller key empty: exit 2 naming each missing key once", async () => {
    const runs = await Promise.all(commands.map((c) =>
      run(c, { ...stageC, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: " ", SVC_INTERNAL_SERVICE_TOKEN_RECON: "" })))
    for (const [i, r] of runs.entries()) {
      const command = commands[i]!
      assert.strictEqual(r.code, 2, `${command}: ${r.stderr}`)
      assert.deepStrictEqual(lines(r.stderr).sort(), needs[command].map((key) => `config: ${key}: required when SVC_PER_CALLER_TOKEN_REQUIRED=on`).sort(), command)
    }
  })

  it("a stage value that is not on/off is one problem for every command, also where a token is only presented", async () => {
    const runs = await Promise.all(commands.map((c) =>
      run(c, { SVC_PER_CALLER_TOKEN_REQUIRED: "maybe", SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON, RECON_SERVICE_URL: "http://127.0.0.1:1" })))
    for (const [i, r] of runs.entries()) {
      assert.strictEqual(r.code, 2, `${commands[i]}: ${r.stderr}`)
      assert.deepStrictEqual(lines(r.stderr), ['config: SVC_PER_CALLER_TOKEN_REQUIRED: expected one of on, off, true, false, 1, 0, got "maybe"'], commands[i])
      noSecret(r)
    }
  })

  it("the worker's other keys: a bad WALLET_SERVICE_URL or ADMIN_SERVICE_URL, and no token at all before stage C", async () => {
    const r = await run("worker", { WALLET_SERVICE_URL: "ftp://wallet", ADMIN_SERVICE_URL: "not a url" })
    assert.strictEqual(r.code, 2, r.stderr)
    assert.deepStrictEqual(lines(r.stderr).sort(), [
      'config: ADMIN_SERVICE_URL: expected a http:// or https:// URL, got "not a url"',
      "config: SVC_INTERNAL_SERVICE_TOKEN_RECON: not set (nor the shared SVC_INTERNAL_SERVICE_TOKEN)",
      'config: WALLET_SERVICE_URL: expected a http:// or https:// URL, got "ftp://wallet"'
    ])
  })
})
