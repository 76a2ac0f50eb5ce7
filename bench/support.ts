// What every benchmark starts with: a fresh, migrated database on DATABASE_URL (the user needs
// CREATE DATABASE) or on a throw-away embedded server, and a way to run queries on it.
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { type Agent, request as httpRequest } from "node:http"
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pgLayer } from "../src/db/Database.ts"
import { freePort, startEmbeddedPostgres } from "../src/db/EmbeddedPostgres.ts"
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from "../src/commands/NodeFlags.ts"
import { runMigrations } from "../src/db/Migrations.ts"

export interface BenchDatabase {
  /** The migrated benchmark database. */
  readonly url: string
  /** A temporary directory for the benchmark's own files. */
  readonly dir: string
  readonly embedded: boolean
  /** Which server, for the figures' conditions. */
  readonly server: string
  readonly run: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>
  /** `effect` made a function run on one connection kept open until `close` (a poll that opens no connection per call). */
  readonly pool: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => { (): Promise<A>; readonly close: () => Promise<void> }
  /** The server's processes (postmaster and backends; empty on DATABASE_URL), for its CPU time. */
  readonly serverPids: () => ReadonlyArray<number>
  /**
   * Stops the server and starts it again on the same port (undefined on DATABASE_URL); `crash`: an
   * immediate shutdown, as a crash (what was committed but not yet flushed to the WAL is lost).
   */
  readonly restart: ((how?: "clean" | "crash") => Promise<void>) | undefined
  /** Drops the database, stops the embedded server, removes the directory. */
  readonly close: () => Promise<void>
}

const runOn = <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.runPromise(effect.pipe(Effect.provide(Layer.orDie(pgLayer(Redacted.make(url), { maxConnections: 4 })))))

/** The PostgreSQL major version of Debian's server a bench runs on (BENCH_PG=15), else undefined: the embedded one. */
export const debianPostgres = (): string | undefined => {
  const version = process.env.BENCH_PG
  return version === undefined || version === "" || version === "embedded" ? undefined : version
}

/**
 * A durable server of Debian's `postgresql-<version>` package (/usr/lib/postgresql/<version>/bin) in
 * `dir`, run as the user "postgres" when we are root, trust on loopback only, the embedded
 * server's settings (max_connections 300, fsync on): the same shape on another major version.
 */
const startDebianPostgres = async (dir: string, version: string) => {
  const bin = `/usr/lib/postgresql/${version}/bin`
  if (!existsSync(join(bin, "postgres"))) throw new Error(`no PostgreSQL ${version} in ${bin}: apt-get install postgresql-${version}`)
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0
  const ids = asRoot ? { uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" })), gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" })) } : undefined
  mkdirSync(dir, { mode: 0o700 })
  if (ids) chownSync(dir, ids.uid, ids.gid)
  const run = (command: string, args: ReadonlyArray<string>) => {
    const result = spawnSync(join(bin, command), args, { ...(ids ?? {}), encoding: "utf8", env: { ...process.env, LC_MESSAGES: "C" } })
    if (result.status !== 0) throw new Error(`${command} failed: ${(result.stderr || result.stdout).trim()}`)
  }
  run("initdb", ["-D", dir, "-U", "recon", "--auth=trust", "-E", "UTF8", "--locale=C"])
  const port = await freePort()
  // BENCH_STATS=1: pg_stat_statements loaded (where the server's time goes, printed by the benches
  // that read it), and the plans of statements over 30 ms logged. BENCH_STATS=analyze logs them with
  // their actual times: that instruments every statement, and the figures came out 10–70 % higher.
  const stats = process.env.BENCH_STATS
    ? " -c shared_preload_libraries=pg_stat_statements,auto_explain -c pg_stat_statements.track=all" +
      " -c auto_explain.log_min_duration=30 -c auto_explain.log_nested_statements=on" +
      (process.env.BENCH_STATS === "analyze" ? " -c auto_explain.log_analyze=on" : "")
    : ""
  // BENCH_PG_OPTIONS: more server options (e.g. "-c log_min_duration_statement=0"), the log kept as with BENCH_STATS.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300${stats} ${process.env.BENCH_PG_OPTIONS ?? ""}`.trim()
  const start = async () => run("pg_ctl", ["-D", dir, "-l", join(dir, "server.log"), "-w", "-o", options, "start"])
  const stop = async () => run("pg_ctl", ["-D", dir, "-m", "fast", "-w", "stop"])
  const crash = async () => run("pg_ctl", ["-D", dir, "-m", "immediate", "-w", "stop"])
  await start()
  return { url: `postgres://recon@127.0.0.1:${port}/postgres`, start, stop, crash }
}

export const benchDatabase = async (name: string, options: { readonly persistent?: boolean } = {}): Promise<BenchDatabase> => {
  const dir = mkdtempSync(join(tmpdir(), `recon-bench-${name}-`))
  chmodSync(dir, 0o755) // the embedded server runs as the unprivileged user "postgres" when we are root
  const external = process.env.DATABASE_URL
  const debian = debianPostgres()
  const cluster = external ? undefined : debian !== undefined
    ? await startDebianPostgres(join(dir, "data"), debian)
    : await startEmbeddedPostgres({ dir: join(dir, "data"), persistent: options.persistent ?? false })
  const serverUrl = external ?? cluster!.url
  const dbName = `bench_${name}_${Date.now().toString(36)}`
  await runOn(serverUrl, Effect.gen(function*() { yield* (yield* SqlClient.SqlClient).unsafe(`CREATE DATABASE ${dbName}`) }))
  const parsed = new URL(serverUrl)
  parsed.pathname = `/${dbName}`
  const url = parsed.toString()
  // RECON_DIR (another checkout's services): its own migrations, by its `recon migrate`, so an
  // older tree is measured on the schema it shipped with, not on this tree's.
  if (process.env.RECON_DIR) {
    const migrated = spawnSync(process.execPath, [reconEntry(), "migrate"], { env: { PATH: process.env.PATH ?? "", DATABASE_URL: url, LOG_LEVEL: "warn" }, encoding: "utf8" })
    if (migrated.status !== 0) throw new Error(`${reconEntry()} migrate failed: ${migrated.stderr || migrated.stdout}`)
  } else {
    await runOn(url, runMigrations())
  }
  // BENCH_JIT=off: the database's default, whatever the services ask (an older tree's before/after without JIT).
  if (process.env.BENCH_JIT) {
    await runOn(serverUrl, Effect.gen(function*() { yield* (yield* SqlClient.SqlClient).unsafe(`ALTER DATABASE ${dbName} SET jit = ${process.env.BENCH_JIT === "off" ? "off" : "on"}`) }))
  }
  if (process.env.BENCH_STATS && debian !== undefined) {
    await runOn(url, Effect.gen(function*() { yield* (yield* SqlClient.SqlClient).unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements") }))
  }
  return {
    url,
    dir,
    embedded: cluster !== undefined,
    server: external ? "DATABASE_URL" : debian !== undefined ? `Debian's PostgreSQL ${debian} (durable)` : "embedded PostgreSQL 18 (durable)",
    run: (effect) => runOn(url, effect),
    pool: (effect) => {
      const runtime = ManagedRuntime.make(Layer.orDie(pgLayer(Redacted.make(url), { maxConnections: 1 })))
      return Object.assign(() => runtime.runPromise(effect), { close: () => runtime.dispose() })
    },
    serverPids: () => {
      if (cluster === undefined) return []
      const postmaster = Number(readFileSync(join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0])
      return [postmaster, ...childrenOf(postmaster)]
    },
    restart: cluster === undefined ? undefined : async (how = "clean") => {
      await (how === "crash" ? cluster.crash() : cluster.stop())
      await cluster.start()
    },
    close: async () => {
      if ((process.env.BENCH_STATS || process.env.BENCH_PG_OPTIONS) && existsSync(join(dir, "data", "server.log"))) {
        writeFileSync(`/tmp/recon-bench-${name}-server.log`, readFileSync(join(dir, "data", "server.log")))
      }
      await runOn(serverUrl, Effect.gen(function*() { yield* (yield* SqlClient.SqlClient).unsafe(`DROP DATABASE ${dbName} WITH (FORCE)`) })).catch(() => {})
      await cluster?.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** The processes whose parent is `pid` (from /proc). */
export const childrenOf = (pid: number): ReadonlyArray<number> =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).filter((entry) => {
    try {
      return Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]!.split(" ")[1]) === pid
    } catch {
      return false
    }
  }).map(Number)

/** The p-th percentile of ascending values. */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

export const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** The machine's load average, for the figures' conditions. */
export const loadAverage = () => loadavg().map((n) => n.toFixed(1)).join(" ")

/** The RSS of a process in MB (0 when it is gone). */
export const rssOf = (pid: number): number => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

/** The fields of /proc/<pid>/stat after the command's name (11 utime, 12 stime, 13 cutime, 14 cstime), undefined once it is gone. */
const statFields = (pid: number): ReadonlyArray<string> | undefined => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  } catch {
    return undefined
  }
}

/** CPU time of a process so far, in clock ticks (1/100 s). */
export const cpuTicks = (pid: number): number => {
  const fields = statFields(pid)
  return fields === undefined ? 0 : Number(fields[11]) + Number(fields[12])
}

/**
 * The CPU time of a benchmark's server so far, in clock ticks: its processes' own, and that of the
 * backends that have ended (the postmaster's children's). 0 on DATABASE_URL.
 */
export const serverCpuTicks = (db: BenchDatabase): number =>
  db.serverPids().reduce((sum, pid, k) => {
    const fields = statFields(pid)
    return fields === undefined ? sum : sum + Number(fields[11]) + Number(fields[12]) + (k === 0 ? Number(fields[13]) + Number(fields[14]) : 0)
  }, 0)

/** BENCH_PERF=1: an on-CPU profile of the whole machine is recorded while a bench measures (Linux `perf`, `cpu-clock`). */
export const perfWanted = (): boolean => process.env.BENCH_PERF !== undefined && process.env.BENCH_PERF !== "" && process.env.BENCH_PERF !== "0"

/**
 * Where PostgreSQL's CPU goes, by phase: each of these functions' samples with what it calls, as a
 * share of all the server's samples (they nest: plpgsql's statements include their executor start
 * and their planning).
 */
const PG_PHASES: ReadonlyArray<readonly [string, string]> = [
  ["plpgsql_exec_function", "in plpgsql functions"],
  ["standard_ExecutorStart", "executor start (each statement's plan made ready)"],
  ["pg_plan_queries", "planning"],
  ["ExecInsertIndexTuples", "index entries"],
  ["AfterTriggerEndQuery", "AFTER triggers"],
  ["CommitTransactionCommand", "commits"],
  ["XLogFlush", "of which WAL flushes"],
  ["stringToNode", "reading stored expressions (CHECK, trigger WHEN, index predicates)"],
  ["pq_getbyte", "reading from the client"]
]

/**
 * Which part of a Node service a sampled symbol belongs to: the kernel, V8's garbage collector, its
 * compilers, its built-ins and runtime, or JavaScript by file (a bundle chunk without its hash:
 * `Keys` is effect's core, `Database` @effect/sql-pg and the pools; `node:…` Node's own library).
 */
const nodeCpuPart = (kernel: boolean, symbol: string): string => {
  if (kernel) return "kernel"
  const js = /^JS:\S*\s(?:file:\/\/\S*\/(?:dist\/chunks\/|dist\/)?([^/:]+?)(?:-[A-Za-z0-9_]{8})?\.js|(node:[^:]+)):\d+/.exec(symbol)
  if (js) return js[1] ?? (js[2]!.startsWith("node:internal/deps/undici") ? "undici" : "Node's library")
  if (/Scaveng|Mark|Sweep|Heap::|GCTracer|Evacuat|Marking|MemoryAllocator|MemoryChunk/.test(symbol)) return "garbage collection"
  if (/compiler::|maglev|Turbofan|Compile|Parser|Scanner|Bytecode|baseline/i.test(symbol) && !symbol.startsWith("Builtins_")) return "V8 compiling"
  if (symbol.startsWith("Builtins_") || symbol.startsWith("v8::") || symbol.startsWith("JS:")) return "V8 built-ins and runtime"
  return "native (Node, libuv, libc)"
}

/**
 * Starts `perf record` on every CPU (cpu-clock, 999 Hz, call graphs); `stop` ends it and answers
 * the summary lines: PostgreSQL's CPU by phase, and each named process's by part (nodeCpuPart)
 * (Node's JIT frames named when the services run with --perf-basic-prof, which BENCH_PERF adds).
 * Undefined, with why, when `perf` cannot record here.
 */
export const startPerf = (dir: string): { readonly stop: (processes: ReadonlyArray<{ readonly name: string; readonly pid: number }>) => Promise<ReadonlyArray<string>> } | string => {
  const data = join(dir, "perf.data")
  const probe = spawnSync("perf", ["--version"], { encoding: "utf8" })
  if (probe.status !== 0) return `perf not available (${(probe.error?.message ?? probe.stderr).trim()}): apt-get install linux-perf`
  const recorder = spawn("perf", ["record", "-a", "-e", "cpu-clock", "-F", "999", "-g", "-o", data], { stdio: "ignore" })
  const ended = new Promise<void>((done) => recorder.on("exit", () => done()))
  const report = (args: ReadonlyArray<string>) =>
    spawnSync("perf", ["report", "-i", data, "--stdio", "--percentage", "relative", ...args], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 }).stdout
      .split("\n").filter((line) => !line.startsWith("#") && line.includes("%"))
  return {
    stop: async (processes) => {
      recorder.kill("SIGINT")
      await ended
      const lines: Array<string> = []
      // Inclusive shares of PostgreSQL's samples; a symbol may be listed more than once (its DSO mapped twice): summed.
      const inclusive = new Map<string, number>()
      for (const line of report(["--comm", "postgres", "--children", "--sort", "sym", "-g", "none"])) {
        const match = /^\s*([\d.]+)%\s+[\d.]+%\s+\[[.k]\]\s+(\S+)/.exec(line)
        if (match) inclusive.set(match[2]!, (inclusive.get(match[2]!) ?? 0) + Number(match[1]))
      }
      lines.push(`PostgreSQL's CPU by phase (perf, share of its samples): ${PG_PHASES.map(([symbol, what]) => `${what} ${(inclusive.get(symbol) ?? 0).toFixed(1)} %`).join("; ")}`)
      for (const { name, pid } of processes) {
        const shares = new Map<string, number>()
        for (const line of report(["--pid", String(pid), "--no-children", "--sort", "sym", "-g", "none"])) {
          const match = /^\s*([\d.]+)%\s+\[([.k])\]\s+(.*)$/.exec(line)
          if (match === null) continue
          const part = nodeCpuPart(match[2] === "k", match[3]!)
          shares.set(part, (shares.get(part) ?? 0) + Number(match[1]))
        }
        const parts = [...shares].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([part, share]) => `${part} ${share.toFixed(1)} %`)
        lines.push(`${name}'s CPU by part (perf, share of its samples): ${parts.join("; ")}`)
      }
      return lines
    }
  }
}

/**
 * A unique Korean name per index (three syllables, then four): bank SMS carry Hangul names, and
 * the templates read them as such.
 */
export const hangulName = (i: number): string => {
  const syllables = "가나다라마바사아자차카타파하고노도로모보소오조초코토포호구누두루무부수우주추"
  const n = syllables.length
  let name = ""
  let rest = i
  for (let k = 0; k < (i < n ** 3 ? 3 : 4); k++) {
    name += syllables[rest % n]
    rest = Math.floor(rest / n)
  }
  return name
}

/** 신한's deposit SMS (its built-in template reads it): a distinct balance keeps copies of one payer apart. */
export const depositText = (name: string, amount: number, balance: number) =>
  `[Web발신]\n신한 11/22 09:41\n입금 ${amount.toLocaleString("en")}원\n${name}\n잔액 ${balance.toLocaleString("en")}`
export const DEPOSIT_SENDER = "15778000"

/**
 * The world of a money-path benchmark: `devices` trusted SmsForwarder phones `<prefix>-i` with
 * `secret`, the bank's sender whitelisted, and one player with one pending deposit of 10,000 per
 * name index (the SMS to come: `depositText(hangulName(i), 10_000, …)`).
 */
export const arrangeDeposits = (db: BenchDatabase, options: {
  readonly prefix: string
  readonly devices: number
  readonly secret: string
  readonly names: ReadonlyArray<number>
}) =>
  db.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (let d = 0; d < options.devices; d++) {
      yield* sql`INSERT INTO recon.shooter_device (device_id, trusted) VALUES (${`${options.prefix}-${d}`}, true)`
      yield* sql`INSERT INTO recon.shooter_push (device_id, format, secret) VALUES (${`${options.prefix}-${d}`}, 'smsforwarder', ${options.secret})`
    }
    yield* sql`INSERT INTO recon.shooter_phone (phone) VALUES (${DEPOSIT_SENDER})`
    const names = options.names.map(hangulName)
    for (let from = 0; from < names.length; from += 10_000) {
      const chunk = JSON.stringify(names.slice(from, from + 10_000))
      yield* sql`WITH p AS (INSERT INTO recon.player (name) SELECT jsonb_array_elements_text(${chunk}::jsonb) RETURNING id, name)
        INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT id, name, 10000 FROM p`
    }
    // Only the tables filled here: statistics saying the others are empty would give every plan
    // cached from now on a sequential scan (until autovacuum analyses them again).
    yield* sql`ANALYZE recon.player, recon.deposit`
  }))

/**
 * The recon checkout whose services run: RECON_DIR (another checkout's built dist, e.g. main's, for
 * "before" figures), else this one; its `dist/main.js` when built, else `src/main.ts`.
 */
export const reconEntry = (): string => {
  const root = resolve(process.env.RECON_DIR ?? ".")
  return existsSync(join(root, "dist/main.js")) ? join(root, "dist/main.js") : join(root, "src/main.ts")
}

export interface Service {
  readonly child: ChildProcess
  readonly base: string
  readonly port: number
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>
}

/** `node <entry> <command>` with only `env` (and PATH) in its environment, on `port` (default: a free one); its output goes to ours when `verbose`. */
export const startService = async (command: string, portKey: string, env: Record<string, string>, verbose: boolean | string = false, fixedPort?: number): Promise<Service> => {
  const port = fixedPort ?? await freePort()
  // BENCH_NODE_ARGS: Node flags for the services (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"); given
  // here, with the service flags of main.ts, so the process is not replaced by one without them.
  // BENCH_PERF: Node writes its JIT frames' names where `perf` reads them (/tmp/perf-<pid>.map).
  const nodeArgs = [...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== ""), ...(perfWanted() ? ["--perf-basic-prof"] : [])]
  const flags = nodeArgs.length === 0 ? [] : [...SERVICE_NODE_FLAGS, ...nodeArgs]
  const child = spawn(process.execPath, [...flags, reconEntry(), command], {
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn", ...SERVICE_ENV, ...env, [portKey]: String(port) },
    // `verbose` a path: the output appended to that file.
    stdio: typeof verbose === "string"
      ? ["ignore", openSync(verbose, "a"), openSync(verbose, "a")]
      : ["ignore", verbose ? "inherit" : "ignore", verbose ? "inherit" : "ignore"]
  })
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
  return { child, base: `http://127.0.0.1:${port}`, port, exited }
}

/** Polls `url` every `every` ms until it answers 200 (or `ms` passes): true when it did. */
export const waitFor = async (url: string, ms = 60_000, every = 50): Promise<boolean> => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await fetch(url).then((r) => r.ok, () => false)) return true
    await sleep(every)
  }
  return false
}

/**
 * `pgbench -N -c 8 -j 2 -T seconds` (simple-update TPC-B, scale 10) on the benchmark's database and
 * server, the services left idle: its tps, and the command line for the report (NaN when pgbench
 * could not run, with why).
 */
export const pgbenchTps = async (db: BenchDatabase, seconds: number): Promise<{ readonly tps: number; readonly why?: string }> => {
  const pg = new URL(db.url)
  const env = { ...process.env, PGHOST: pg.hostname, PGPORT: pg.port, PGUSER: decodeURIComponent(pg.username), PGPASSWORD: decodeURIComponent(pg.password) }
  const name = pg.pathname.slice(1)
  const init = spawnSync("pgbench", ["-i", "-q", "-s", "10", name], { env, encoding: "utf8" })
  if (init.status !== 0) return { tps: NaN, why: (init.stderr || init.error?.message || "").trim().split("\n").pop() ?? "" }
  const output = await new Promise<string>((done) => {
    const child = spawn("pgbench", ["-N", "-c", "8", "-j", "2", "-T", String(seconds), name], { env })
    let text = ""
    child.stdout.on("data", (chunk) => (text += chunk))
    child.stderr.on("data", (chunk) => (text += chunk))
    child.on("close", () => done(text))
  })
  return { tps: Number(/tps = ([\d.]+)/.exec(output)?.[1] ?? NaN) }
}

/**
 * One try of a phone's form-encoded push to a worker on loopback: the HTTP status, 0 when the
 * connection was refused or reset, -1 when no answer came within `timeoutMs`.
 */
/** The errors of the tries pushTry answered 0, by code (ECONNREFUSED: nothing listening; ECONNRESET: the connection cut). */
export const tryErrors = new Map<string, number>()

export const pushTry = (port: number, path: string, body: Buffer, agent: Agent, timeoutMs: number): Promise<number> =>
  new Promise<number>((resolve) => {
    const request = httpRequest({ host: "127.0.0.1", port, path, method: "POST", agent, headers: {
      "content-type": "application/x-www-form-urlencoded",
      "content-length": body.length
    } }, (response) => {
      response.resume()
      response.on("end", () => resolve(response.statusCode ?? 0))
    })
    request.on("error", (error: NodeJS.ErrnoException) => {
      tryErrors.set(error.code ?? error.message, (tryErrors.get(error.code ?? error.message) ?? 0) + 1)
      resolve(0)
    })
    request.setTimeout(timeoutMs, () => {
      resolve(-1)
      request.destroy()
    })
    request.end(body)
  })
