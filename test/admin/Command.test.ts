// The commands as processes: `admin --create-user NAME` (ADMIN_PASSWORD, exit codes, no password
// printed), then `admin` itself: the new operator signs in, the websocket is live, nothing secret
// reaches the log, and SIGTERM stops it at once (exit 0) even with a websocket open.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join, resolve } from "node:path"
import { onTestFinished } from "vitest"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { createMigratedDatabase, createTestDatabase } from "../support/database.ts"
import { ADMIN_TOKEN, RECON_TOKEN, type Running, startRecon } from "../support/recon.ts"
import { commandEnv, MAIN, runCommandToEnd, spawnCommand, waitForUrl } from "../support/process.ts"
import { login, openSocket, request, sql, sync } from "./support.ts"

const PASSWORD = "s3cret-enough-for-tests"

const createUser = (databaseUrl: string, args: ReadonlyArray<string>, env: Record<string, string> = { ADMIN_PASSWORD: PASSWORD }) =>
  runCommandToEnd(["admin", "--create-user", ...args], { DATABASE_URL: databaseUrl, LOG_LEVEL: "warn", ...env })

let db: string
let recon: Running
beforeAll(async () => {
  // Not migrated: create-user migrates like every command that touches the database.
  db = await createTestDatabase("admin_cmd")
})
afterAll(() => recon?.close())

describe("admin --create-user", () => {
  it("creates the operator (exit 0); the same account again is exit 1 with a clear line", async () => {
    const created = await createUser(db, ["carol"])
    assert.strictEqual(created.status, 0, created.stderr)
    assert.match(created.stdout, /^operator "carol" created \(id \d+\)\n$/)
    const again = await createUser(db, ["carol"])
    assert.strictEqual(again.status, 1)
    assert.strictEqual(again.stderr.trim(), `admin --create-user: account "carol" already exists`)
    for (const run of [created, again]) assert.notInclude(run.stdout + run.stderr, PASSWORD)
  })

  it("bad usage and bad passwords are exit 2, one line, nothing created", async () => {
    const cases: Array<[ReadonlyArray<string>, Record<string, string>, RegExp]> = [
      [[], { ADMIN_PASSWORD: PASSWORD }, /^usage: admin --create-user NAME/],
      [["a", "b"], { ADMIN_PASSWORD: PASSWORD }, /^usage: admin --create-user NAME/],
      [["has space"], { ADMIN_PASSWORD: PASSWORD }, /is not an account name/],
      [["dave"], {}, /^config: ADMIN_PASSWORD: required when stdin is not a terminal/],
      [["dave"], { ADMIN_PASSWORD: "Xy9!tiny" }, /^config: ADMIN_PASSWORD: the password is too short \(at least 10 characters\)$/],
      [["dave"], { ADMIN_PASSWORD: PASSWORD, DATABASE_URL: "mysql://x@y/z" }, /^config: DATABASE_URL: expected a postgres/]
    ]
    const runs = await Promise.all(cases.map(([args, env]) => createUser(db, args, env)))
    for (const [i, [args, , line]] of cases.entries()) {
      const run = runs[i]!
      assert.strictEqual(run.status, 2, `${args.join(" ")}: ${run.stderr}`)
      assert.strictEqual(run.stderr.trim().split("\n").length, 1, run.stderr)
      assert.match(run.stderr.trim(), line)
      assert.notInclude(run.stderr + run.stdout, "Xy9!tiny")
    }
    const [{ n }] = await sql(db, (sql) => sql<{ n: bigint }>`SELECT count(*) AS n FROM admin.operator WHERE account <> 'carol'`)
    assert.strictEqual(Number(n), 0)
  })
})

/** `script` gives the command a terminal, so its prompt path runs as an operator would see it. */
const hasScript = spawnSync("script", ["--version"]).status === 0

describe("admin --create-user on a terminal", () => {
  it.skipIf(!hasScript)("prompts twice with echo off: the password never appears on the terminal", async () => {
    const typed = "typed-at-the-prompt-42"
    const child = spawn("script", ["-qec", `${process.execPath} ${MAIN} admin --create-user frank`, "/dev/null"], {
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: db, LOG_LEVEL: "warn", ADMIN_PASSWORD: "not-used-on-a-terminal" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let screen = ""
    let answered = 0
    child.stdout.on("data", (chunk) => {
      screen += chunk
      // Typed only once the prompt shows: the terminal echoes what is typed before raw mode.
      const prompts = (screen.match(/assword: /g) ?? []).length
      if (prompts > answered) {
        answered = prompts
        child.stdin.write(`${typed}\r`)
      }
    })
    const status = await new Promise<number | null>((resolve) => child.on("exit", resolve))
    assert.strictEqual(status, 0, screen)
    assert.match(screen, /Password: /)
    assert.match(screen, /Repeat password: /)
    assert.match(screen, /operator "frank" created/)
    assert.notInclude(screen, typed)
    const [{ hash }] = await sql(db, (sql) => sql<{ hash: string }>`SELECT password_hash AS hash FROM admin.operator WHERE account = 'frank'`)
    assert.match(hash, /^scrypt\$32768\$8\$1\$/)
  })
})

describe("admin as a process", () => {
  it("serves the operator created by the command; no token or password in its log; SIGTERM exits 0 at once", async () => {
    const migrated = await createMigratedDatabase("admin_cmd_serve")
    recon = await startRecon(migrated)
    assert.strictEqual((await createUser(migrated, ["erin"])).status, 0)
    const port = await freePort()
    const { child, output, exited } = spawnCommand(["admin"], {
      DATABASE_URL: migrated,
      SVC_ADMIN_PORT: String(port),
      RECON_SERVICE_URL: recon.url,
      SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
      SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN,
      LOG_FORMAT: "json",
      LOG_LEVEL: "debug"
    })
    // Whatever fails below, the process does not outlive the test.
    onTestFinished(() => void child.kill("SIGKILL"))
    const base = `http://127.0.0.1:${port}`
    assert.isTrue(await waitForUrl(`${base}/`), output())

    const token = await login(base, "erin", PASSWORD)
    const topInfo = await request(base, "/api/top-info", { token })
    assert.strictEqual(topInfo.http, 200)
    assert.strictEqual(topInfo.body.data.recon.available, true)
    const client = await openSocket(base, token)
    assert.strictEqual((await client.next()).type, "top-info")
    assert.strictEqual((await sync(base, RECON_TOKEN)).body.data.clients, 1)
    assert.strictEqual((await client.next()).type, "top-info")

    // The stop closes the open websocket itself, "going away", rather than wait for it (up to the
    // 10 s bound on a stop, after which it would still exit 0: timing it was a wall-clock assertion).
    child.kill("SIGTERM")
    assert.strictEqual(await client.closed, 1001, "an open websocket closed by the stop")
    assert.strictEqual(await exited, 0, output())
    for (const secret of [PASSWORD, token, bearerOf(topInfo.headers), ADMIN_TOKEN, RECON_TOKEN]) assert.notInclude(output(), secret)
  })
})

describe("admin without its console files", () => {
  it("stops with one line naming the missing file, exit 2", async () => {
    const migrated = await createMigratedDatabase("admin_cmd_noconsole")
    // A copy of the package without web/console/ (src/admin/Console.ts, and a built chunk, find it
    // two levels up): the command the tests run (the run's build, else the source) and package.json.
    const root = mkdtempSync(join(tmpdir(), "recon-noconsole-"))
    onTestFinished(() => rmSync(root, { recursive: true, force: true }))
    const built = MAIN.endsWith(".js")
    const code = built ? basename(dirname(MAIN)) : "src"
    cpSync(built ? dirname(MAIN) : "src", join(root, code), { recursive: true })
    cpSync("package.json", join(root, "package.json"))
    symlinkSync(resolve("node_modules"), join(root, "node_modules"))
    const port = await freePort()
    const child = spawn(process.execPath, [join(root, code, basename(MAIN)), "admin"], {
      env: commandEnv({ DATABASE_URL: migrated, SVC_ADMIN_PORT: String(port), RECON_SERVICE_URL: "http://127.0.0.1:9", SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN, LOG_LEVEL: "warn" }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    onTestFinished(() => void child.kill("SIGKILL"))
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const status = await new Promise<number | null>((done) => child.on("exit", done))
    assert.strictEqual(status, 2, stderr)
    assert.strictEqual(stderr.trim().split("\n").length, 1, stderr)
    assert.match(stderr.trim(), /^error: the operator console's file \S+\/web\/console\/\S+ cannot be read \(ENOENT\): web\/console\/ ships with recon/)
  }, 60_000)
})

const bearerOf = (headers: Headers) => (headers.get("authorization") ?? "").replace(/^Bearer /, "") || "<none>"
