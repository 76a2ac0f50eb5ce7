// A real NocoBase 2.2.15 server (../shared/nocobase/) for the doctor's end-to-end test: installed
// once into a cache directory outside the project (reused after), run on the machine's Node 20
// against its own database on the test PostgreSQL, on a free port, as a child process.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { delimiter, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort } from "../../../src/db/EmbeddedPostgres.ts"
import { eventuallyAsync } from "../../support/time.ts"

const SOURCE = resolve(fileURLToPath(new URL("../../../../shared/nocobase", import.meta.url)))
const FILES = ["package.json", "package-lock.json", "boot.js"] as const

/** Where the server is installed: `$RECON_NOCOBASE_CACHE`, else `~/.cache/recon-nocobase`. */
export const cacheDir = (): string => process.env.RECON_NOCOBASE_CACHE || join(homedir(), ".cache", "recon-nocobase")

const sourceHash = () => {
  const hash = createHash("sha256")
  for (const file of FILES) hash.update(readFileSync(join(SOURCE, file)))
  return hash.digest("hex")
}

/** Installs the server into the cache directory unless the same version is already there (about 1 min, 600 MB). */
export const ensureInstalled = (log: (line: string) => void = () => {}): string => {
  const dir = cacheDir()
  const marker = join(dir, ".recon-installed")
  const wanted = sourceHash()
  if (existsSync(marker) && readFileSync(marker, "utf8") === wanted && existsSync(join(dir, "node_modules", "@nocobase", "server"))) return dir
  log(`installing NocoBase from ${SOURCE} into ${dir}`)
  mkdirSync(dir, { recursive: true })
  for (const file of FILES) {
    const target = join(dir, file)
    if (existsSync(target)) unlinkSync(target) // the shared copies are read-only
    writeFileSync(target, readFileSync(join(SOURCE, file)))
  }
  execFileSync("npm", ["install", "--legacy-peer-deps", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: dir,
    stdio: ["ignore", "ignore", "inherit"],
    timeout: 15 * 60_000
  })
  writeFileSync(marker, wanted)
  return dir
}

const majorOf = (node: string): number | undefined => {
  try {
    return Number(execFileSync(node, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8", timeout: 10_000 }).trim())
  } catch {
    return undefined
  }
}

/** The Node 20 that runs NocoBase: `$RECON_NOCOBASE_NODE`, else the first `node` 20 on PATH or in /usr/bin, /usr/local/bin. */
export const nodeForNocoBase = (): string => {
  const explicit = process.env.RECON_NOCOBASE_NODE
  if (explicit) return explicit
  const candidates = [...(process.env.PATH ?? "").split(delimiter), "/usr/bin", "/usr/local/bin", "/bin"].map((dir) => join(dir, "node"))
  for (const candidate of new Set(candidates)) {
    if (existsSync(candidate) && majorOf(candidate) === 20) return candidate
  }
  throw new Error("no Node.js 20 for NocoBase found on PATH or in /usr/bin (set RECON_NOCOBASE_NODE)")
}

export interface RealNocoBase {
  readonly url: string
  readonly account: string
  readonly password: string
  /** Stops the process and starts it again on the same port (as an operator restarting NocoBase). */
  readonly restartProcess: () => Promise<void>
  /** The server's recent output, for failure messages. */
  readonly output: () => string
  readonly stop: () => Promise<void>
}

/**
 * `node boot.js install` then `node boot.js start` against `databaseUrl` (a database of its own:
 * install drops every table of the schema), schema `svc`, on a free port.
 */
export const startRealNocoBase = async (databaseUrl: string, log: (line: string) => void = () => {}): Promise<RealNocoBase> => {
  const dir = ensureInstalled(log)
  const node = nodeForNocoBase()
  const db = new URL(databaseUrl)
  const work = mkdtempSync(join(tmpdir(), "recon-nocobase-")) // storage/ (logs, uploads) of this server
  const port = await freePort()
  const account = "admin@nocobase.test"
  const password = `Pw-${randomBytes(9).toString("base64url")}`
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? work,
    NODE_MODULES_PATH: join(dir, "node_modules"),
    APP_KEY: randomBytes(24).toString("hex"),
    INIT_ROOT_EMAIL: account,
    INIT_ROOT_PASSWORD: password,
    INIT_ROOT_USERNAME: "nocobase",
    NB_DB_HOST: db.hostname,
    NB_DB_PORT: db.port || "5432",
    NB_DB_USER: decodeURIComponent(db.username),
    NB_DB_PASSWORD: decodeURIComponent(db.password),
    NB_DB_NAME: db.pathname.slice(1),
    NB_DB_SCHEMA: "svc",
    NB_PORT: String(port),
    LOGGER_LEVEL: "warn",
    // what NocoBase's CLI sets before it starts an app; the plugin manager's client URLs (pm:listEnabled) need them
    CDN_BASE_URL: "",
    APP_PUBLIC_PATH: "/",
    PLUGIN_STATICS_PATH: "/static/plugins/"
  }
  let recent = ""
  const keep = (chunk: Buffer) => {
    recent = (recent + chunk.toString("utf8")).slice(-20_000)
  }
  const runBoot = (command: "install" | "start"): ChildProcess => {
    const child = spawn(node, [join(dir, "boot.js"), command], { cwd: work, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
    child.stdout!.on("data", keep)
    child.stderr!.on("data", keep)
    return child
  }
  const exitOf = (child: ChildProcess) =>
    new Promise<number | null>((done) => child.exitCode !== null ? done(child.exitCode) : child.once("exit", (code) => done(code)))

  const installer = runBoot("install")
  const installed = await Promise.race([exitOf(installer), new Promise<"timeout">((done) => setTimeout(() => done("timeout"), 180_000))])
  if (installed !== 0) {
    if (installed === "timeout") process.kill(-installer.pid!, "SIGKILL")
    throw new Error(`NocoBase install failed (${installed}):\n${recent.slice(-4_000)}`)
  }

  let server: ChildProcess | undefined
  const url = `http://127.0.0.1:${port}`
  const start = async () => {
    server = runBoot("start")
    const started = server
    await eventuallyAsync(`NocoBase answering on ${url}`, async () => {
      if (started.exitCode !== null) throw new Error(`NocoBase exited (${started.exitCode}):\n${recent.slice(-4_000)}`)
      return fetch(`${url}/api/app:getInfo`).then((r) => r.status < 500, () => false)
    }, { timeoutMs: 120_000, everyMs: 250, detail: () => recent.slice(-4_000) })
  }
  const stopServer = async () => {
    const child = server
    server = undefined
    if (child === undefined || child.exitCode !== null) return
    const exited = exitOf(child)
    process.kill(-child.pid!, "SIGTERM")
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // gone already
      }
    }, 10_000)
    await exited
    clearTimeout(timer)
  }
  await start()
  return {
    url,
    account,
    password,
    restartProcess: async () => {
      await stopServer()
      await start()
    },
    output: () => recent,
    stop: async () => {
      await stopServer()
      rmSync(work, { recursive: true, force: true })
    }
  }
}

/** A signed-in client of NocoBase's HTTP API (what the back office's pages call). */
export const apiClient = async (server: { readonly url: string; readonly account: string; readonly password: string }) => {
  const signIn = async () => {
    const response = await fetch(`${server.url}/api/auth:signIn`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-authenticator": "basic" },
      body: JSON.stringify({ account: server.account, password: server.password })
    })
    const body = await response.json() as { data?: { token?: string } }
    if (!response.ok || typeof body.data?.token !== "string") throw new Error(`auth:signIn answered ${response.status}: ${JSON.stringify(body)}`)
    return body.data.token
  }
  const token = await signIn()
  const request = async (method: "GET" | "POST", action: string, body?: unknown) => {
    const response = await fetch(`${server.url}/api/${action}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    let json: any
    try {
      json = JSON.parse(text)
    } catch {
      json = { text }
    }
    return { status: response.status, body: json }
  }
  return {
    signIn,
    get: (action: string) => request("GET", action),
    post: (action: string, body?: unknown) => request("POST", action, body)
  }
}

export interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `node dist/main.js meta <args>`: the built command line, as an operator runs it; the session printed in the test's output. */
export const meta = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Ran> =>
  new Promise((resolve) => {
    execFile(process.execPath, ["dist/main.js", "meta", ...args], { env: { PATH: process.env.PATH ?? "", ...env }, timeout: 180_000 }, (error, stdout, stderr) => {
      const ran = { code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }
      console.log(`$ recon meta ${args.join(" ")}\n${stdout.slice(0, 4000)}${stderr}(exit ${ran.code})\n`)
      resolve(ran)
    })
  })

/** The node with that x-uid in a served schema tree. */
export const byUid = (tree: any, uid: string): any => {
  if (tree === null || typeof tree !== "object") return undefined
  if (tree["x-uid"] === uid) return tree
  for (const child of Object.values(tree.properties ?? {})) {
    const found = byUid(child, uid)
    if (found !== undefined) return found
  }
  return undefined
}
