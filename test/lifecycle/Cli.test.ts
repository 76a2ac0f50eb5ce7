// What a user reads from the command line: help at the top level and per command, a database
// that cannot be reached or a port another process holds as one line (no password, exit 1, no
// banner), and logs on stderr apart from the commands' own output on stdout, one line per request.
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { onTestFinished } from "vitest"
import type { AddressInfo } from "node:net"
import { commands } from "../../src/commands/Commands.ts"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { createMigratedDatabase, createTestDatabase } from "../support/database.ts"
import { MAIN, servicePorts, spawnCommand, waitForUrl } from "../support/process.ts"
import { ADMIN_TOKEN, RECON_TOKEN } from "../support/recon.ts"
import { eventuallyAsync } from "../support/time.ts"

const run = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const spawned = spawnCommand(args, env)
  const code = await spawned.exited
  return { code, stdout: spawned.stdout(), stderr: spawned.stderr() }
}

describe("help", () => {
  it("is understood at the top level: --help, -h, help (stdout, exit 0)", async () => {
    for (const flag of ["--help", "-h", "help"]) {
      const { code, stdout, stderr } = await run([flag])
      assert.strictEqual(code, 0, stderr)
      assert.match(stdout, /^usage: recon <command>/)
      assert.include(stdout, "embedded PostgreSQL")
      assert.strictEqual(stderr, "")
    }
  })

  it("per command: `help COMMAND`, `COMMAND --help`, `COMMAND -h`", async () => {
    for (const args of [["help", "recon"], ["recon", "--help"], ["all", "-h"], ["worker", "--help"], ["migrate", "--help"], ["admin", "-h"]]) {
      const { code, stdout, stderr } = await run(args)
      const command = args[0] === "help" ? args[1]! : args[0]!
      assert.strictEqual(code, 0, `${args.join(" ")}: ${stderr}`)
      assert.match(stdout, new RegExp(`^usage: recon ${command}`), args.join(" "))
      // every service command says that it falls back to the embedded database
      assert.include(stdout, "DATABASE_URL", args.join(" "))
      assert.include(stdout, "embedded PostgreSQL in ./.data/pg", args.join(" "))
    }
    const meta = await run(["meta", "--help"])
    assert.strictEqual(meta.code, 0)
    assert.include(meta.stdout, "audit")
  })

  it("every command of the table answers `help NAME`, `NAME --help` and `NAME -h` the same way (stdout, exit 0)", async () => {
    const invocations = [
      ...commands.flatMap((c) => [["help", c.name], [c.name, "--help"], [c.name, "-h"]]),
      ["admin", "--create-user", "--help"],
      ["deposit", "create", "--help"],
      ["deposit", "list", "-h"]
    ]
    const runs = await Promise.all(invocations.map((args) => run(args)))
    for (const [i, args] of invocations.entries()) {
      const { code, stdout, stderr } = runs[i]!
      const name = args[0] === "help" ? args[1]! : args[0]!
      assert.strictEqual(code, 0, `${args.join(" ")}: ${stderr}`)
      assert.strictEqual(stderr, "", args.join(" "))
      if (name === "meta") assert.include(stdout, "audit", args.join(" "))
      else assert.match(stdout, new RegExp(`^usage: recon ${name}`), args.join(" "))
      assert.strictEqual(stdout, runs[invocations.findIndex((a) => a[0] === "help" && a[1] === name)]!.stdout, args.join(" "))
    }
  }, 120_000)

  it("meta's subcommand help the same through `meta help SUB`, `meta SUB --help` and `help meta SUB`", async () => {
    const [own, flag, top] = await Promise.all([run(["meta", "help", "audit"]), run(["meta", "audit", "--help"]), run(["help", "meta", "audit"])])
    for (const answer of [own, flag, top]) assert.strictEqual(answer.code, 0, answer.stderr)
    assert.include(flag.stdout, "--collection")
    assert.strictEqual(own.stdout, flag.stdout)
    assert.strictEqual(top.stdout, flag.stdout)
  }, 60_000)

  it("an unknown command is still an error (exit 2, usage on stderr)", async () => {
    const { code, stdout, stderr } = await run(["--frobnicate"])
    assert.strictEqual(code, 2)
    assert.strictEqual(stdout, "")
    assert.match(stderr, /unknown command: --frobnicate\nusage: recon <command>/)
  })
})

describe("the compile cache", () => {
  it("a command keeps Node's compiled code in NODE_COMPILE_CACHE, else in the temporary directory; NODE_DISABLE_COMPILE_CACHE turns it off", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "recon-cache-"))
    onTestFinished(() => rmSync(tmp, { recursive: true, force: true }))
    const probe = (env: Record<string, string>) =>
      spawnSync(process.execPath, [MAIN, "probe"], { env: { PATH: process.env.PATH ?? "", SVC_WORKER_HEARTBEAT_FILE: join(tmp, "none"), ...env }, encoding: "utf8" })
    const cached = (dir: string) => existsSync(dir) && readdirSync(dir, { recursive: true }).length > 0

    // probe has no heartbeat to read: exit 1, and its chunk was loaded after the cache was on.
    assert.strictEqual(probe({ TMPDIR: join(tmp, "off"), NODE_DISABLE_COMPILE_CACHE: "1" }).status, 1)
    assert.isFalse(cached(join(tmp, "off", "node-compile-cache")))
    mkdirSync(join(tmp, "system"))
    assert.strictEqual(probe({ TMPDIR: join(tmp, "system") }).status, 1)
    assert.isTrue(cached(join(tmp, "system", "node-compile-cache")))
    assert.strictEqual(probe({ TMPDIR: join(tmp, "unused"), NODE_COMPILE_CACHE: join(tmp, "chosen") }).status, 1)
    assert.isTrue(cached(join(tmp, "chosen")))
  })
})

describe("an unreachable database", () => {
  it("is one line naming the URL without its password and what failed; exit 1", async () => {
    const port = await freePort() // nothing listens there
    const url = `postgres://someone:hunter2-secret@127.0.0.1:${port}/recon`
    for (const args of [["migrate"], ["recon"]]) {
      const { code, stdout, stderr } = await run(args, { DATABASE_URL: url, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN, SVC_RECON_PORT: String(await freePort()) })
      assert.strictEqual(code, 1, `${args[0]}: ${stderr}`)
      assert.strictEqual(stdout, "")
      assert.strictEqual(stderr, `error: database postgres://someone@127.0.0.1:${port}/recon is unreachable: connect ECONNREFUSED 127.0.0.1:${port}\n`)
      assert.notInclude(stderr, "hunter2")
    }
  })

  it("the one-shot commands say the same line after their name; exit 1", async () => {
    const port = await freePort()
    const url = `postgres://someone:hunter2-secret@127.0.0.1:${port}/recon`
    const line = `database postgres://someone@127.0.0.1:${port}/recon is unreachable: connect ECONNREFUSED 127.0.0.1:${port}`
    const deposit = await run(["deposit", "list"], { DATABASE_URL: url })
    assert.strictEqual(deposit.code, 1, deposit.stderr)
    assert.strictEqual(deposit.stderr, `deposit: ${line}\n`)
    const createUser = await run(["admin", "--create-user", "gina"], { DATABASE_URL: url, ADMIN_PASSWORD: "a-long-enough-password-42" })
    assert.strictEqual(createUser.code, 1, createUser.stderr)
    assert.strictEqual(createUser.stderr, `admin --create-user: failed: ${line}\n`)
  })
})

describe("a port another process holds", () => {
  it("is one line naming the address, exit 1", async () => {
    const databaseUrl = await createTestDatabase("cli")
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve))
    const port = (holder.address() as AddressInfo).port
    try {
      const { code, stderr } = await run(["recon"], {
        DATABASE_URL: databaseUrl, SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN, SVC_RECON_PORT: String(port), SVC_BIND_HOST: "127.0.0.1"
      })
      assert.strictEqual(code, 1, stderr)
      assert.include(stderr, `error: recon_service cannot listen on 127.0.0.1:${port} (SVC_RECON_PORT): the port is in use (is recon already running?)\n`)
      assert.notInclude(stderr, "ServeError")
      // It never ran: no line says it stopped.
      assert.notInclude(stderr, "recon_service stopped")
    } finally {
      holder.close()
    }
  })

  it("`all` beside a running one: no banner, one line naming the service and its port key, exit 1", async () => {
    const databaseUrl = await createMigratedDatabase("cli")
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve))
    const held = (holder.address() as AddressInfo).port
    try {
      const { code, stdout, stderr } = await run(["all"], {
        DATABASE_URL: databaseUrl,
        SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
        SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN,
        SVC_WALLET_PORT: String(held)
      })
      assert.strictEqual(code, 1, stderr)
      assert.strictEqual(stdout, "", "the banner is printed only once every server listens")
      const errors = stderr.split("\n").filter((line) => line.startsWith("error: "))
      assert.deepStrictEqual(errors, [`error: wallet_service cannot listen on 127.0.0.1:${held} (SVC_WALLET_PORT): the port is in use (is recon already running?)`])
      assert.notInclude(stderr, "wallet_service stopped")
    } finally {
      holder.close()
    }
  }, 120_000)
})

describe("log destinations", () => {
  it("migrate prints its answer on stdout and its logs on stderr", async () => {
    const databaseUrl = await createTestDatabase("cli")
    const first = await run(["migrate"], { DATABASE_URL: databaseUrl, LOG_LEVEL: "debug" })
    assert.strictEqual(first.code, 0, first.stderr)
    assert.match(first.stdout, /^migrations applied: 0001_recon_tables, [^\n]+\n$/)
    const again = await run(["migrate"], { DATABASE_URL: databaseUrl, LOG_LEVEL: "debug" })
    assert.strictEqual(again.stdout, "migrations: up to date\n")
    assert.notMatch(first.stdout + again.stdout, /\b(DEBUG|INFO|WARN|ERROR)\b/)
  })

  it("a service logs on stderr (its banner on stdout); /health polls only at debug, with fiber ids", async () => {
    const databaseUrl = await createTestDatabase("cli")
    const port = await freePort()
    const recon = spawnCommand(["recon"], { DATABASE_URL: databaseUrl, SVC_RECON_PORT: String(port), SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN, LOG_LEVEL: "debug" })
    try {
      assert.isTrue(await waitForUrl(`http://127.0.0.1:${port}/health`, 60_000), recon.output())
      for (let i = 0; i < 3; i++) await fetch(`http://127.0.0.1:${port}/health`)
      const other = await fetch(`http://127.0.0.1:${port}/internal/recon/stats/top-info`, { method: "POST", body: "{}" })
      assert.strictEqual(other.status, 401)
      // Its line is written after the answer, and after the lines of the requests before it.
      await eventuallyAsync("the last request's log line", async () => recon.stderr().includes("POST /internal/recon/stats/top-info 401"), { detail: recon.output })
      assert.match(recon.stdout(), /^recon_service {4}http:\/\/\[::\]:\d+ \(all interfaces\) /)
      assert.notMatch(recon.stdout(), /\b(DEBUG|INFO|WARN|ERROR)\b/)
      assert.match(recon.stderr(), /migrations applied: /)
      assert.match(recon.stderr(), /INFO \(#\d+\): Listening on/)
      // the health polls: debug lines, never the info line every other request gets
      assert.isAtLeast((recon.stderr().match(/DEBUG \(#\d+\): GET \/health 200 \d+ms\n/g) ?? []).length, 3)
      assert.notMatch(recon.stderr(), /INFO[^\n]*: GET \/health/)
      assert.match(recon.stderr(), /INFO \(#\d+\): POST \/internal\/recon\/stats\/top-info 401 \d+ms\n/)
    } finally {
      recon.child.kill("SIGTERM")
      await recon.exited
    }
  })

  it("at info, each request of every service is one line (method, path, status, duration), without fiber ids; the banner follows the servers", async () => {
    const databaseUrl = await createMigratedDatabase("cli")
    const { recon, push, admin, wallet, env: ports } = await servicePorts()
    const all = spawnCommand(["all"], {
      DATABASE_URL: databaseUrl,
      ...ports,
      SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
      SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN
    })
    const at = (port: number) => `http://127.0.0.1:${port}`
    try {
      assert.isTrue(await waitForUrl(`${at(recon)}/health`, 90_000), all.output())
      await eventuallyAsync("the banner", async () => all.stdout().includes("wallet_service "), { everyMs: 50, detail: all.output })
      // The banner is written once the four servers listen.
      const output = all.output()
      assert.strictEqual((output.slice(0, output.indexOf("recon_service ")).match(/Listening on/g) ?? []).length, 4, output)

      const json = { "content-type": "application/json" }
      const added = await fetch(`${at(recon)}/internal/recon/pushsvc/add_device`, {
        method: "POST",
        headers: { ...json, "x-internal-service-token": ADMIN_TOKEN },
        body: JSON.stringify({ device_id: "log-phone", format: "smsforwarder" })
      })
      assert.strictEqual(added.status, 200)
      const pushed = await fetch(`${at(push)}/push/log-phone`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ from: "15889999", content: "[Web발신]\nKB 입금 1,000 홍길동", timestamp: String(Date.now()) })
      })
      assert.strictEqual(pushed.status, 200)
      assert.strictEqual((await fetch(`${at(wallet)}/internal/wallet/balance?player_id=1&token=secret`)).status, 401)
      assert.strictEqual((await fetch(`${at(admin)}/api/auth/login`, { method: "POST", headers: json, body: "{\"account\":1}" })).status, 400)
      await fetch(`${at(recon)}/health`)
      // A request recon logs, after the health poll: once its line is written, a line for the poll would be too.
      assert.strictEqual((await fetch(`${at(recon)}/no-such-route`)).status, 404)
      await eventuallyAsync("the log line of the request after the health poll", async () => all.stderr().includes(" /no-such-route "), { detail: all.output })

      const lines = all.stderr().split("\n")
      const requestLines = (path: string) => lines.filter((line) => line.includes(` ${path} `))
      for (const [path, line] of [
        ["/internal/recon/pushsvc/add_device", /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: POST \/internal\/recon\/pushsvc\/add_device 200 \d+ms$/],
        ["/push/log-phone", /^\[[\d:.]+\] INFO: POST \/push\/log-phone 200 \d+ms$/],
        // The query (where a websocket's token travels) is never logged.
        ["/internal/wallet/balance", /^\[[\d:.]+\] INFO: GET \/internal\/wallet\/balance 401 \d+ms$/],
        ["/api/auth/login", /^\[[\d:.]+\] INFO: POST \/api\/auth\/login 400 \d+ms$/]
      ] as const) {
        assert.strictEqual(requestLines(path).length, 1, `${path}: ${all.stderr()}`)
        assert.match(requestLines(path)[0]!, line)
      }
      assert.deepStrictEqual(requestLines("/health"), [], "the health polls are not logged at info")
      assert.notInclude(all.stderr(), "secret")
      assert.notMatch(all.stderr(), /\(#\d+\)/, "no fiber ids at info")
      assert.notMatch(all.stderr(), /^\s+http\./m, "no annotation lines under a request's line")
    } finally {
      all.child.kill("SIGTERM")
      await all.exited
    }
  }, 120_000)
})
