// Commands as real child processes: `node <the run's build>/main.js …` (globalSetup.ts builds it
// once per run, as `npm start` and the image run the commands), `node src/main.ts …` when a file
// is run without the global setup.
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, type Scope } from "effect"
import { inject } from "vitest"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { eventuallyAsync } from "./time.ts"

export interface Spawned {
  readonly child: ChildProcess
  /** stdout and stderr as they arrived, interleaved. */
  readonly output: () => string
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<number | null>
}

export interface SpawnOptions {
  /** Working directory (the embedded database lives in its `.data/`). */
  readonly cwd?: string
  /** Its own process group, as a shell's job: signal the group with `process.kill(-pid, …)` like a terminal does. */
  readonly detached?: boolean
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url))

/** The `recon` command the tests run: the run's build (see globalSetup.ts), else the source. */
export const MAIN = process.env.RECON_TEST_MAIN ?? resolve(ROOT, "src/main.ts")

let spawned = 0

/** The run's compile cache (see globalSetup.ts): how the commands a test starts load faster. */
const compileCache = (): Record<string, string> =>
  process.env.RECON_TEST_COMPILE_CACHE === undefined ? {} : { NODE_COMPILE_CACHE: process.env.RECON_TEST_COMPILE_CACHE }

/**
 * The environment of a command a test runs: PATH (and the run's compile cache), then ports the system chooses and a heartbeat
 * file of its own (in the run's scratch directory, removed with the run), then `env`. A test
 * never binds a fixed port or writes the heartbeat of a running `npm start` (8016–8019,
 * /tmp/recon-worker.heartbeat), not even by leaving a key out.
 */
export const commandEnv = (env: Record<string, string>): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  ...compileCache(),
  SVC_RECON_PORT: "0",
  SVC_PUSH_PORT: "0",
  SVC_ADMIN_PORT: "0",
  SVC_WALLET_PORT: "0",
  SVC_WORKER_HEARTBEAT_FILE: join(inject("scratchDir"), `${process.pid}-${++spawned}.heartbeat`),
  ...env
})

/** Four free ports for `all`, and the environment that sets them. */
export const servicePorts = async () => {
  const [recon, push, admin, wallet] = await Promise.all([freePort(), freePort(), freePort(), freePort()])
  const env = { SVC_RECON_PORT: String(recon), SVC_PUSH_PORT: String(push), SVC_ADMIN_PORT: String(admin), SVC_WALLET_PORT: String(wallet) }
  return { recon, push, admin, wallet, env }
}

/** Runs a script (a path from the project's root) with a clean environment ({@link commandEnv}), collecting stdout and stderr. */
export const spawnScript = (args: ReadonlyArray<string>, env: Record<string, string>, options: SpawnOptions = {}): Spawned => {
  const [script, ...rest] = args
  const child = spawn(process.execPath, [resolve(ROOT, script!), ...rest], {
    env: commandEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
    ...options
  })
  let output = ""
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk) => {
    output += chunk
    stdout += chunk
  })
  child.stderr!.on("data", (chunk) => {
    output += chunk
    stderr += chunk
  })
  // "exit" can come before the last of the output is read: resolved once both streams ended too
  // (at most 2 s later: a process it started may still hold them).
  const drained = (stream: NodeJS.ReadableStream & { readonly readableEnded: boolean }) =>
    new Promise<void>((done) => (stream.readableEnded ? done() : stream.once("end", done).once("close", done)))
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      const bound = setTimeout(() => resolve(code), 2_000)
      void Promise.all([drained(child.stdout!), drained(child.stderr!)]).then(() => {
        clearTimeout(bound)
        resolve(code)
      })
    }))
  return { child, output: () => output, stdout: () => stdout, stderr: () => stderr, exited }
}

export const spawnCommand = (args: ReadonlyArray<string>, env: Record<string, string>, options?: SpawnOptions): Spawned =>
  spawnScript([MAIN, ...args], env, options)

export interface Finished {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `recon …args` ({@link MAIN}) to its end with a clean environment ({@link commandEnv}); killed after 90 s. */
export const runCommandToEnd = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Finished> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: commandEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 90_000
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("exit", (status) => resolve({ status, stdout, stderr }))
  })

/** Polls a URL ({@link eventuallyAsync}, every 50 ms) until it answers 2xx: true, or false after `deadlineMs` (the caller's assertion says what the process printed). */
export const waitForUrl = (url: string, deadlineMs = 15_000): Promise<boolean> =>
  eventuallyAsync(`${url} answering`, () => fetch(url).then((r) => r.ok, () => false), { timeoutMs: deadlineMs, everyMs: 50 }).then(() => true, () => false)

/** `recon probe` against a heartbeat file: its exit code and its one line. */
export const probe = (heartbeatFile: string): { readonly code: number | null; readonly line: string } => {
  const result = spawnSync(process.execPath, [MAIN, "probe"], {
    env: { PATH: process.env.PATH ?? "", ...compileCache(), SVC_WORKER_HEARTBEAT_FILE: heartbeatFile },
    encoding: "utf8"
  })
  return { code: result.status, line: (result.stdout + result.stderr).trim() }
}

/**
 * A `recon worker` process on a free port for the test's scope, its wallet at `walletUrl`, admin
 * nowhere (SIGKILLed at the scope's end if still running); `env` adds or overrides keys.
 */
export const workerProcess = (db: string, walletUrl: string, recon_token: string, env: Record<string, string> = {}): Effect.Effect<Spawned & { readonly base: string }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const port = await freePort()
      const spawned = spawnCommand(["worker"], {
        DATABASE_URL: db,
        SVC_PUSH_PORT: String(port),
        SVC_WORKER_HEARTBEAT_FILE: join(mkdtempSync(join(tmpdir(), "recon-worker-")), "worker.heartbeat"),
        SVC_INTERNAL_SERVICE_TOKEN_RECON: recon_token,
        WALLET_SERVICE_URL: walletUrl,
        ADMIN_SERVICE_URL: "http://127.0.0.1:9",
        ...env
      })
      return { ...spawned, base: `http://127.0.0.1:${port}` }
    }),
    (worker) => Effect.sync(() => worker.child.exitCode === null && worker.child.signalCode === null && worker.child.kill("SIGKILL"))
  )
