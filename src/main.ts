#!/usr/bin/env node
// The `recon` command: dispatches to one command module. `probe` and `meta` load nothing else, so
// the container probe stays fast.
const [command, ...args] = process.argv.slice(2)

const usage = `usage: recon <command>
  recon      recon_service (internal API, port 8017)
  worker     recon_worker: supervised loops, push listener, health probes (port 8019)
  admin      admin_service: dashboard, top-info, websocket (port 8016)
  admin --create-user NAME   add a back-office operator (password prompted, or ADMIN_PASSWORD)
  wallet     wallet_service: approves deposits and credits balances (port 8018)
  deposit create --player NAME --amount N [--owner NAME] | deposit list [--status S]
  all        every service in one process (embedded PostgreSQL when DATABASE_URL is unset)
  all --demo the same on its own database (.data/demo), with demo data and a simulated phone
  migrate    apply the database migrations and exit
  probe      worker health check: reads the heartbeat file, exit 0 ready / 1 not
  meta       metadata doctor for NocoBase: meta audit | repair | refresh | pretty-node
  help [COMMAND]             this text, or a command's (also: recon COMMAND --help)

The commands that use the database (recon, worker, admin, wallet, deposit, all, migrate) use DATABASE_URL, or when it is unset
an embedded PostgreSQL with its data in ./.data/pg (started and stopped with the command).`

const embedded = "DATABASE_URL: the database; unset: an embedded PostgreSQL in ./.data/pg, started and stopped with the command."
/** `recon help COMMAND` / `recon COMMAND --help`: what the command does and the keys it reads (README "Configuration"). */
const commandHelp: Record<string, string> = {
  recon: `usage: recon recon
recon_service: the internal API (POST /internal/recon/*) and GET /health on SVC_RECON_PORT (8017).
Keys: SVC_INTERNAL_SERVICE_TOKEN_ADMIN (or the shared SVC_INTERNAL_SERVICE_TOKEN), SVC_PUSH_PUBLIC_URL, SVC_RECON_LLM_*.
${embedded}`,
  worker: `usage: recon worker
recon_worker: the supervised loops, POST /push/{device_id}, GET /health/live and /health/ready on SVC_PUSH_PORT (8019),
the heartbeat file SVC_WORKER_HEARTBEAT_FILE (/tmp/recon-worker.heartbeat).
Keys: WALLET_SERVICE_URL, ADMIN_SERVICE_URL, SVC_INTERNAL_SERVICE_TOKEN_RECON (or the shared token), SVC_RECON_CHATBOT_*.
${embedded}`,
  admin: `usage: recon admin
       recon admin --create-user NAME    (password prompted, or ADMIN_PASSWORD without a terminal)
admin_service: dashboard, top-info, websocket, sync endpoint on SVC_ADMIN_PORT (8016).
Keys: RECON_SERVICE_URL (required), SVC_INTERNAL_SERVICE_TOKEN_RECON, SVC_INTERNAL_SERVICE_TOKEN_ADMIN, WORKER_HEALTH_URL.
${embedded}`,
  wallet: `usage: recon wallet
wallet_service: POST /internal/wallet/deposit/agree and GET /internal/wallet/balance on SVC_WALLET_PORT (8018).
Keys: SVC_INTERNAL_SERVICE_TOKEN_RECON (or the shared SVC_INTERNAL_SERVICE_TOKEN).
${embedded}`,
  deposit: `usage: recon deposit create --player NAME --amount N [--owner NAME]
       recon deposit list [--status pending|approved|rejected|expired] [--limit N]
Adds a pending deposit (and the player when no player has that name) and prints its id; or lists deposits.
${embedded}`,
  all: `usage: recon all [--demo]
recon_service, recon_worker, admin_service and wallet_service in one process, wired to each other (ports as for each command).
Without tokens configured it makes dev tokens once and keeps them in ./.data/dev-tokens.env (mode 0600).
--demo: its own embedded database in ./.data/demo, demo data, a demo operator and a simulated phone.
${embedded}`,
  migrate: `usage: recon migrate
Applies the pending database migrations and exits (the service commands also migrate at start-up).
${embedded}`,
  probe: `usage: recon probe
Worker health check for containers: reads SVC_WORKER_HEARTBEAT_FILE; exit 0 ready and fresh (<= 15 s), else 1; one line.`
}
const isHelp = (arg: string | undefined) => arg === "--help" || arg === "-h" || arg === "help"

// The services run with a small young generation: V8's default reserves ~60 MB more than a
// service uses, and at these allocation rates a small one is also faster (bench/worker.ts: idle
// RSS 150 → 120 MB, ingest 2,000 → 2,400 SMS/s). Flags must be given at start, so the process
// replaces itself once (same pid) with the flag added, unless one was chosen already.
const services = new Set(["recon", "worker", "admin", "all", "wallet"])
if (
  command !== undefined && services.has(command) && !isHelp(args[0]) && typeof process.execve === "function" &&
  !process.execArgv.some((flag) => flag.startsWith("--max-semi-space-size"))
) {
  process.execve(process.execPath, [process.execPath, "--max-semi-space-size=2", ...process.execArgv, ...process.argv.slice(1)], process.env)
}

if (isHelp(command) || (command !== undefined && Object.hasOwn(commandHelp, command) && isHelp(args[0]))) {
  const topic = isHelp(command) ? args[0] : command
  if (topic === "meta") {
    ;(await import("./meta/cli.ts")).main(["--help"])
  } else {
    process.stdout.write(`${topic !== undefined && Object.hasOwn(commandHelp, topic) ? commandHelp[topic] : usage}\n`)
    process.exit(0)
  }
} else switch (command) {
  case "meta":
    ;(await import("./meta/cli.ts")).main(args)
    break
  case "deposit":
    ;(await import("./deposit/cli.ts")).main(args)
    break
  case "probe":
    ;(await import("./health/probe.ts")).main(args)
    break
  case "admin":
    if (args[0] === "--create-user") {
      ;(await import("./admin/CreateUser.ts")).main(args.slice(1))
      break
    }
    ;(await import("./Services.ts")).main(command, args)
    break
  case "recon":
  case "worker":
  case "wallet":
  case "all":
  case "migrate":
    ;(await import("./Services.ts")).main(command, args)
    break
  default:
    process.stderr.write(`${command === undefined ? "no command given" : `unknown command: ${command}`}\n${usage}\n`)
    process.exit(2)
}
