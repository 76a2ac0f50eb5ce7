// Stage C of the token migration (DESIGN section 3) on every command that accepts or presents a
// token, as processes: with the shared token still set and the per-caller keys it needs empty,
// each refuses to start (exit 2, one line per problem, no secret printed). The stage key is read
// once: a bad value is one problem however many services read it.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { fromEnv, type Settings } from "../../src/config/Keys.ts"
import { readWalletSettings } from "../../src/wallet/Settings.ts"
import { readWorkerSettings } from "../../src/worker/Settings.ts"
import { runCommandToEnd } from "../support/process.ts"

const SHARED = "old-shared-secret-42"
const ADMIN = "admin-secret-42"
const RECON = "recon-secret-42"

// An unreachable database: a command that got past its configuration would not exit 2.
const run = (command: string, env: Record<string, string>) =>
  runCommandToEnd([command], { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", RECON_SERVICE_URL: "http://127.0.0.1:1", ...env })

const commands = ["recon", "worker", "admin", "wallet", "all"] as const
/** The per-caller keys each command needs in stage C (admin presents its own and accepts recon's). */
const needs: Record<(typeof commands)[number], ReadonlyArray<string>> = {
  recon: ["SVC_INTERNAL_SERVICE_TOKEN_ADMIN"],
  worker: ["SVC_INTERNAL_SERVICE_TOKEN_RECON"],
  admin: ["SVC_INTERNAL_SERVICE_TOKEN_ADMIN", "SVC_INTERNAL_SERVICE_TOKEN_RECON"],
  wallet: ["SVC_INTERNAL_SERVICE_TOKEN_RECON"],
  all: ["SVC_INTERNAL_SERVICE_TOKEN_ADMIN", "SVC_INTERNAL_SERVICE_TOKEN_RECON"]
}
const SHARED_LINE = "config: SVC_INTERNAL_SERVICE_TOKEN: must be empty once SVC_PER_CALLER_TOKEN_REQUIRED=on (stage C accepts only per-caller tokens)"
const BAD_STAGE_LINE = 'config: SVC_PER_CALLER_TOKEN_REQUIRED: expected one of on, off, true, false, 1, 0, got "maybe"'

const lines = (stderr: string) => stderr.trim().split("\n").sort()

/** The problems a reader found for `read` on `env`. */
const readEnv = <A>(env: Record<string, string>, read: Settings<A>) => {
  const result = Effect.runSync(Effect.result(fromEnv(env, read)))
  return { value: Result.getOrUndefined(result) as A, problems: Result.isFailure(result) ? result.failure.problems : [] }
}
const problems = (env: Record<string, string>, read: Settings<unknown>) => [...readEnv(env, read).problems].sort()

describe("stage C on every command", () => {
  it("the shared token still set, the keys it needs empty: exit 2, each problem once, no secret", async () => {
    const runs = await Promise.all(commands.map((c) =>
      run(c, { SVC_PER_CALLER_TOKEN_REQUIRED: "on", SVC_INTERNAL_SERVICE_TOKEN: SHARED, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: " ", SVC_INTERNAL_SERVICE_TOKEN_RECON: "" })))
    for (const [i, r] of runs.entries()) {
      const command = commands[i]!
      assert.strictEqual(r.status, 2, `${command}: ${r.stderr}`)
      assert.deepStrictEqual(lines(r.stderr), [SHARED_LINE, ...needs[command].map((key) => `config: ${key}: required when SVC_PER_CALLER_TOKEN_REQUIRED=on`)].sort(), command)
      assert.notInclude(r.stdout + r.stderr, SHARED)
    }
  }, 180_000)

  it("the shared token still set with every key in place: still exit 2 with that one line (the worker too)", async () => {
    const runs = await Promise.all((["worker", "wallet"] as const).map((c) =>
      run(c, { SVC_PER_CALLER_TOKEN_REQUIRED: "on", SVC_INTERNAL_SERVICE_TOKEN: SHARED, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON })))
    for (const r of runs) {
      assert.strictEqual(r.status, 2, r.stderr)
      assert.deepStrictEqual(lines(r.stderr), [SHARED_LINE])
      for (const secret of [SHARED, ADMIN, RECON]) assert.notInclude(r.stdout + r.stderr, secret)
    }
  }, 180_000)

  it("a stage value that is not on/off: one line from `all`, whose four services all read it", async () => {
    const r = await run("all", { SVC_PER_CALLER_TOKEN_REQUIRED: "maybe", SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON })
    assert.strictEqual(r.status, 2, r.stderr)
    assert.deepStrictEqual(lines(r.stderr), [BAD_STAGE_LINE])
    // A receiver and a caller of the same token agree on the stage: the worker (presents) refuses the bad value too.
    const env = { SVC_PER_CALLER_TOKEN_REQUIRED: "maybe", SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON }
    for (const read of [readWorkerSettings, readWalletSettings]) assert.deepStrictEqual(problems(env, read).map((p) => `config: ${p}`), [BAD_STAGE_LINE])
  }, 180_000)
})

describe("the worker's and the wallet's other keys", () => {
  it("bad service URLs, no token before stage C, a bad wallet port", () => {
    assert.deepStrictEqual(problems({ WALLET_SERVICE_URL: "ftp://wallet", ADMIN_SERVICE_URL: "not a url" }, readWorkerSettings), [
      'ADMIN_SERVICE_URL: expected a http:// or https:// URL, got "not a url"',
      "SVC_INTERNAL_SERVICE_TOKEN_RECON: not set (nor the shared SVC_INTERNAL_SERVICE_TOKEN)",
      'WALLET_SERVICE_URL: expected a http:// or https:// URL, got "ftp://wallet"'
    ])
    assert.deepStrictEqual(problems({ SVC_WALLET_PORT: "80000" }, readWalletSettings), [
      'SVC_WALLET_PORT: expected a port number from 0 to 65535, got "80000"',
      "SVC_INTERNAL_SERVICE_TOKEN_RECON: not set (set it, or the shared SVC_INTERNAL_SERVICE_TOKEN during migration stages A/B)"
    ].sort())
  })

  it("the worker's URLs default to this host at the services' ports; its token stays Redacted", () => {
    const config = readEnv({ SVC_WALLET_PORT: "9018", SVC_INTERNAL_SERVICE_TOKEN: SHARED, ADMIN_SERVICE_URL: "https://admin.internal/" }, readWorkerSettings)
    const settings = config.value
    assert.deepStrictEqual(config.problems, [])
    assert.deepStrictEqual([settings.walletUrl, settings.adminUrl], ["http://127.0.0.1:9018", "https://admin.internal"])
    assert.notInclude(JSON.stringify(settings) + String(settings.callerToken), SHARED)
  })
})
