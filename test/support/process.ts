// Commands as real child processes (`node src/main.ts …`; Node 24 runs the TypeScript directly).
import { type ChildProcess, spawn, spawnSync } from "node:child_process"

export interface Spawned {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/** Runs a script with a clean environment (PATH plus `env`), collecting stdout and stderr. */
export const spawnScript = (args: ReadonlyArray<string>, env: Record<string, string>): Spawned => {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, output: () => output, exited }
}

export const spawnCommand = (args: ReadonlyArray<string>, env: Record<string, string>): Spawned =>
  spawnScript(["src/main.ts", ...args], env)

export interface Finished {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `node src/main.ts …args` to its end with a clean environment (PATH plus `env`); killed after 90 s. */
export const runCommandToEnd = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Finished> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ["src/main.ts", ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 90_000
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("exit", (status) => resolve({ status, stdout, stderr }))
  })

/** Polls a URL until it answers 2xx; false after `deadlineMs`. */
export const waitForUrl = async (url: string, deadlineMs = 15_000): Promise<boolean> => {
  const until = Date.now() + deadlineMs
  while (Date.now() < until) {
    if (await fetch(url).then((r) => r.ok, () => false)) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return false
}

/** `recon probe` against a heartbeat file: its exit code and its one line. */
export const probe = (heartbeatFile: string): { readonly code: number | null; readonly line: string } => {
  const result = spawnSync(process.execPath, ["src/main.ts", "probe"], {
    env: { PATH: process.env.PATH ?? "", SVC_WORKER_HEARTBEAT_FILE: heartbeatFile },
    encoding: "utf8"
  })
  return { code: result.status, line: (result.stdout + result.stderr).trim() }
}
