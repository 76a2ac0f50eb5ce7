// The embedded PostgreSQL over a command's life, as real processes in a directory of their own:
// Ctrl-C from a terminal (SIGINT to the whole process group) and SIGTERM stop `all` in order,
// exit 0, and leave no server behind; the dev tokens and the server's password are kept beside
// the data (mode 0600); a fatal error, a forced exit after the grace, an abrupt process.exit and
// a killed process do not leave the server running either.
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { SqlClient } from "effect/sql"
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { runSql } from "../support/database.ts"
import { type Spawned, spawnCommand, spawnScript, waitForUrl } from "../support/process.ts"
import { TOKEN_HEADER } from "../../src/api/CallerAuth.ts"
import { readStopGraceS } from "../../src/commands/Lifecycle.ts"
import { fromEnv, readSync } from "../../src/config/Keys.ts"
import { eventuallyAsync } from "../support/time.ts"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A working directory of its own (its `.data/` holds the embedded cluster). */
const workDir = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `recon-${name}-`))
  chmodSync(dir, 0o755) // the server runs as the user "postgres" when the tests run as root
  dirs.push(dir)
  return dir
}

/** The pids of PostgreSQL processes (server and backends) running on the data directory `dataDir`. */
const serversOn = (dataDir: string): Array<number> =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).flatMap((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
      return argv.includes("-D") && argv[argv.indexOf("-D") + 1] === dataDir ? [Number(pid)] : []
    } catch {
      return []
    }
  })

/** A process's group and session (/proc/PID/stat, fields 5 and 6). */
const groupOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")
  return { group: Number(fields[2]), session: Number(fields[3]) }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** True once `check` holds ({@link eventuallyAsync}, every 50 ms), false after `ms`: the assertion gives the output. */
const waitUntil = (check: () => boolean, ms: number): Promise<boolean> =>
  eventuallyAsync("the check", async () => check(), { timeoutMs: ms, everyMs: 50 }).then(() => true, () => check())

/** The exit code, or "still running" once `ms` have passed. */
const exitWithin = (spawned: Spawned, ms: number) =>
  Promise.race([spawned.exited, sleep(ms).then(() => "still running" as const)])

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8)

const linesOf = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

describe("`all` on the embedded database", () => {
  it("stops in order on Ctrl-C (SIGINT to the process group) and SIGTERM, exit 0, no server left; tokens and password kept", async () => {
    const cwd = workDir("all")
    const data = join(cwd, ".data", "pg")
    const [reconPort, pushPort, adminPort, walletPort] = [await freePort(), await freePort(), await freePort(), await freePort()]
    const env = {
      SVC_RECON_PORT: String(reconPort),
      SVC_PUSH_PORT: String(pushPort),
      SVC_ADMIN_PORT: String(adminPort),
      SVC_WALLET_PORT: String(walletPort),
      SVC_WORKER_HEARTBEAT_FILE: join(cwd, "heartbeat")
    }
    let firstToken: string | undefined
    for (const [round, signal] of (["SIGINT", "SIGINT", "SIGINT", "SIGTERM"] as const).entries()) {
      const all = spawnCommand(["all"], env, { cwd, detached: true })
      try {
        assert.isTrue(await waitForUrl(`http://127.0.0.1:${reconPort}/health`, 90_000), all.output())
        // admin_service says that it listens, like the other three (recon, worker, wallet)
        assert.isTrue(await waitUntil(() => (all.stderr().match(/Listening on/g) ?? []).length === 4, 30_000), all.stderr())
        // The banner follows once every service is up.
        assert.isTrue(await waitUntil(() => all.stdout().includes("dev tokens kept in"), 30_000), all.stdout())

        // The dev tokens: made once, kept in .data/dev-tokens.env (0600), the same at every start.
        const tokenFile = join(cwd, ".data", "dev-tokens.env")
        assert.strictEqual(mode(tokenFile), "600")
        const token = /SVC_INTERNAL_SERVICE_TOKEN_ADMIN=(\S+)/.exec(all.stdout())?.[1]
        assert.isDefined(token, all.stdout())
        assert.include(readFileSync(tokenFile, "utf8"), `SVC_INTERNAL_SERVICE_TOKEN_ADMIN=${token}\n`)
        assert.include(all.stdout(), "dev tokens kept in .data/dev-tokens.env (mode 0600)")
        firstToken ??= token
        assert.strictEqual(token, firstToken, `round ${round}: the token changed`)
        const answer = await fetch(`http://127.0.0.1:${reconPort}/internal/recon/stats/top-info`, {
          method: "POST", headers: { "content-type": "application/json", [TOKEN_HEADER]: token! }, body: "{}"
        })
        assert.strictEqual(answer.status, 200)

        // Probes do not flood the log; logs go to stderr, stdout holds only the banner.
        for (let i = 0; i < 5; i++) assert.strictEqual((await fetch(`http://127.0.0.1:${reconPort}/health`)).status, 200)
        // A request recon logs, after the polls: once its line is written, a line for a poll would be too.
        assert.strictEqual((await fetch(`http://127.0.0.1:${reconPort}/no-such-route`)).status, 404)
        await eventuallyAsync("the log line of the request after the polls", async () => all.stderr().includes(" /no-such-route "), { detail: all.output })
        assert.notMatch(all.stderr(), /INFO[^\n]*: GET \/health /, "a /health poll was logged at info")
        assert.match(all.stderr(), /INFO: POST \/internal\/recon\/stats\/top-info 200 \d+ms\n/)
        assert.notMatch(all.stdout(), /\b(INFO|WARN|ERROR)\b/)

        if (round === 0) {
          // The server's password: random, kept beside the data (0600); the old fixed one is refused.
          const passwordFile = join(cwd, ".data", "pg.password")
          assert.strictEqual(mode(passwordFile), "600")
          const password = readFileSync(passwordFile, "utf8").trim()
          assert.isAtLeast(password.length, 24)
          const port = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[3])
          const select = (secret: string) =>
            runSql(`postgres://recon:${encodeURIComponent(secret)}@127.0.0.1:${port}/postgres`, Effect.gen(function*() {
              const sql = yield* SqlClient.SqlClient
              return yield* sql`SELECT 1 AS one`
            }))
          assert.deepStrictEqual(await select(password), [{ one: 1 }])
          const refused = await select("recon").then(() => "accepted", (error) => String(error?.cause?.message ?? error?.message ?? error))
          assert.notStrictEqual(refused, "accepted")
          assert.notInclude(all.output(), password)
        }

        // The server is outside the group (and the session) a terminal signals: only recon stops it.
        const servers = serversOn(data)
        assert.isAbove(servers.length, 0)
        const recon = groupOf(all.child.pid!)
        for (const server of servers) {
          assert.notStrictEqual(groupOf(server).group, recon.group)
          assert.notStrictEqual(groupOf(server).session, recon.session)
        }
        const signalledAt = all.stderr().length
        process.kill(-all.child.pid!, signal) // as a terminal does: the whole foreground process group
        assert.strictEqual(await exitWithin(all, 30_000), 0, all.output())
        // Nothing of the server is left, and it was stopped by recon, last, one line per step.
        assert.deepStrictEqual(serversOn(data), [], `round ${round}: PostgreSQL still running`)
        assert.isFalse(existsSync(join(data, "postmaster.pid")))
        const shutdown = linesOf(all.stderr().slice(signalledAt))
        const steps = [
          `${signal} received: stopping`,
          "database connections closed",
          "embedded PostgreSQL stopped"
        ]
        const at = steps.map((step) => shutdown.findIndex((line) => line.includes(`INFO`) && line.includes(step)))
        assert.isTrue(at.every((index) => index >= 0), shutdown.join("\n"))
        assert.deepStrictEqual([...at].sort((a, b) => a - b), at, shutdown.join("\n"))
        for (const service of ["recon_service stopped", "recon_worker stopped", "admin_service stopped"]) {
          const index = shutdown.findIndex((line) => line.includes(service))
          assert.isTrue(index > at[0]! && index < at[1]!, `${service} not between the signal and the pool:\n${shutdown.join("\n")}`)
        }
        assert.notMatch(all.stderr().slice(signalledAt), /\b(WARN|ERROR|FATAL)\b/)
      } finally {
        if (all.child.exitCode === null) process.kill(-all.child.pid!, "SIGKILL")
      }
    }
  }, 600_000)
})

describe("the embedded server on other ways out", () => {
  const cwd = workDir("exits")
  const data = join(cwd, ".data", "pg")
  const start = async (script: ReadonlyArray<string>, env: Record<string, string> = {}) => {
    const spawned = spawnScript(script, env, { cwd })
    assert.isTrue(await waitUntil(() => /ready \d+/.test(spawned.stdout()) || spawned.child.exitCode !== null, 90_000), spawned.output())
    return { spawned, postmaster: Number(/ready (\d+)/.exec(spawned.stdout())?.[1]) }
  }

  it("a forced exit after the grace (SVC_STOP_GRACE_S) stops the server before the process goes", async () => {
    // The grace shortened through its key (10 s by default): the same forced exit, sooner.
    const { spawned, postmaster } = await start(["test/support/embeddedCommand.ts", "hang"], { SVC_STOP_GRACE_S: "1" })
    assert.include(serversOn(data), postmaster)
    spawned.child.kill("SIGTERM")
    assert.strictEqual(await exitWithin(spawned, 40_000), 0, spawned.output())
    assert.include(spawned.stderr(), "still stopping after 1 s: forced exit")
    assert.deepStrictEqual(serversOn(data), [])
  }, 120_000)

  it("the grace is 10 s unless SVC_STOP_GRACE_S says otherwise (1 to 3600)", () => {
    assert.strictEqual(readSync({}, readStopGraceS), 10)
    assert.strictEqual(readSync({ SVC_STOP_GRACE_S: "30" }, readStopGraceS), 30)
    const bad = Effect.runSync(Effect.result(fromEnv({ SVC_STOP_GRACE_S: "0" }, readStopGraceS)))
    assert.isTrue(Result.isFailure(bad) && bad.failure.problems.length === 1 && bad.failure.problems[0]!.startsWith("SVC_STOP_GRACE_S: "))
  })

  it("process.exit from anywhere: the server gets its stop request on the way out", async () => {
    const { spawned, postmaster } = await start(["test/support/embeddedCommand.ts", "exit"])
    assert.isAbove(postmaster, 0)
    assert.strictEqual(await exitWithin(spawned, 30_000), 3, spawned.output())
    assert.isTrue(await waitUntil(() => serversOn(data).length === 0, 15_000), "PostgreSQL still running after process.exit")
  }, 120_000)

  it("a killed process leaves its server; the next start stops that one and runs its own, stopped with it", async () => {
    const first = await start(["test/support/embeddedCommand.ts", "serve"])
    first.spawned.child.kill("SIGKILL")
    await first.spawned.exited
    assert.include(serversOn(data), first.postmaster, "SIGKILL cannot stop the server")
    const second = await start(["test/support/embeddedCommand.ts", "serve"])
    assert.notStrictEqual(second.postmaster, first.postmaster)
    assert.notInclude(serversOn(data), first.postmaster)
    second.spawned.child.kill("SIGTERM")
    assert.strictEqual(await exitWithin(second.spawned, 30_000), 0, second.spawned.output())
    assert.deepStrictEqual(serversOn(data), [])
  }, 180_000)

  it("the worker giving up (Fatal): exit 1, the server stopped last", async () => {
    const worker = spawnScript(["test/support/dyingWorker.ts"], { SVC_WORKER_HEARTBEAT_FILE: join(cwd, "heartbeat") }, { cwd })
    assert.strictEqual(await exitWithin(worker, 90_000), 1, worker.output())
    assert.include(worker.stderr(), "embedded PostgreSQL on")
    const lines = linesOf(worker.stderr())
    assert.match(lines.findLast((line) => line.includes("INFO")) ?? "", /embedded PostgreSQL stopped/)
    assert.deepStrictEqual(serversOn(data), [])
  }, 120_000)
})
