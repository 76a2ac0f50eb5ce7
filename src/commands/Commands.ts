// The table of `recon` commands: each one's usage lines, help, whether it is a long-running
// service, and how it is loaded and run. main.ts, the usage and the help derive from it; loading
// is lazy, so `probe` and `meta` start without the application code.

/** The embedded-database line every command on the database ends its help with. */
const embedded = "DATABASE_URL: the database; unset: an embedded PostgreSQL in ./.data/pg, started and stopped with the command."

export interface CommandEntry {
  readonly name: string
  /** Its lines in `recon help`. */
  readonly usage: ReadonlyArray<string>
  /** `recon help NAME` / `recon NAME --help`: what it does and the keys it reads (docs/CONFIGURATION.md); undefined: its own. */
  readonly help: string | undefined
  /** A long-running service: started with a small young generation (see main.ts). */
  readonly service: boolean
  readonly run: (args: ReadonlyArray<string>) => Promise<unknown>
}

const services = (name: "recon" | "worker" | "admin" | "wallet" | "all" | "migrate") => (args: ReadonlyArray<string>) =>
  import("./ServiceCommands.ts").then((m) => m.main(name, args))

export const commands: ReadonlyArray<CommandEntry> = [
  {
    name: "recon",
    usage: ["recon      recon_service (internal API, port 8017)"],
    help: `usage: recon recon
recon_service: the internal API (POST /internal/recon/*) and GET /health on SVC_RECON_PORT (8017).
Keys: SVC_INTERNAL_SERVICE_TOKEN_ADMIN (or the shared SVC_INTERNAL_SERVICE_TOKEN), SVC_PUSH_PUBLIC_URL, SVC_RECON_LLM_*.
${embedded}`,
    service: true,
    run: services("recon")
  },
  {
    name: "worker",
    usage: ["worker     recon_worker: supervised loops, push listener, health probes (port 8019)"],
    help: `usage: recon worker
recon_worker: the supervised loops, POST /push/{device_id}, GET /health/live and /health/ready on SVC_PUSH_PORT (8019),
the heartbeat file SVC_WORKER_HEARTBEAT_FILE (/tmp/recon-worker.heartbeat).
Keys: WALLET_SERVICE_URL, ADMIN_SERVICE_URL, SVC_INTERNAL_SERVICE_TOKEN_RECON (or the shared token), SVC_RECON_CHATBOT_*.
${embedded}`,
    service: true,
    run: services("worker")
  },
  {
    name: "admin",
    usage: [
      "admin      admin_service: the operator console, top-info, websocket (port 8016)",
      "admin --create-user NAME   add a back-office operator (password prompted, or ADMIN_PASSWORD)"
    ],
    help: `usage: recon admin
       recon admin --create-user NAME    (password prompted, or ADMIN_PASSWORD without a terminal)
admin_service: the operator console, top-info, websocket, sync endpoint on SVC_ADMIN_PORT (8016).
Keys: RECON_SERVICE_URL (required), SVC_INTERNAL_SERVICE_TOKEN_RECON, SVC_INTERNAL_SERVICE_TOKEN_ADMIN, WORKER_HEALTH_URL,
SVC_REVIEW_SECOND_APPROVAL_OVER, SVC_REVIEW_WAIT_ALERT_S, SVC_ALERT_TELEGRAM_CHAT_ID (with SVC_RECON_CHATBOT_TOKEN).
${embedded}`,
    // `admin --create-user` is a one-shot command, not the service.
    service: true,
    run: (args) => args[0] === "--create-user" ? import("../admin/CreateUser.ts").then((m) => m.main(args)) : services("admin")(args)
  },
  {
    name: "wallet",
    usage: ["wallet     wallet_service: approves deposits and credits balances (port 8018)"],
    help: `usage: recon wallet
wallet_service: POST /internal/wallet/deposit/agree and GET /internal/wallet/balance on SVC_WALLET_PORT (8018).
Keys: SVC_INTERNAL_SERVICE_TOKEN_RECON (or the shared SVC_INTERNAL_SERVICE_TOKEN).
${embedded}`,
    service: true,
    run: services("wallet")
  },
  {
    name: "deposit",
    usage: ["deposit create --player NAME --amount N [--owner NAME] | deposit list [--status S]"],
    help: `usage: recon deposit create --player NAME --amount N [--owner NAME]
       recon deposit list [--status pending|approved|rejected|expired] [--limit N]
Adds a pending deposit (and the player when no player has that name) and prints its id; or lists deposits.
${embedded}`,
    service: false,
    run: (args) => import("../wallet/DepositCli.ts").then((m) => m.main(args))
  },
  {
    name: "all",
    usage: [
      "all        every service in one process (embedded PostgreSQL when DATABASE_URL is unset)",
      "all --demo the same on its own database (.data/demo), with demo data and a simulated phone"
    ],
    help: `usage: recon all [--demo]
recon_service, recon_worker, admin_service and wallet_service in one process, wired to each other (ports as for each command).
Without tokens configured it makes dev tokens once and keeps them in ./.data/dev-tokens.env (mode 0600).
--demo: its own embedded database in ./.data/demo, demo data, a demo operator and a simulated phone.
${embedded}`,
    service: true,
    run: services("all")
  },
  {
    name: "migrate",
    usage: ["migrate    apply the database migrations and exit"],
    help: `usage: recon migrate
Applies the pending database migrations and exits (the service commands also migrate at start-up).
${embedded}`,
    service: false,
    run: services("migrate")
  },
  {
    name: "probe",
    usage: ["probe      worker health check: reads the heartbeat file, exit 0 ready / 1 not"],
    help: `usage: recon probe
Worker health check for containers: reads SVC_WORKER_HEARTBEAT_FILE; exit 0 ready and fresh (<= 15 s), else 1; one line.`,
    service: false,
    run: (args) => import("../health/probe.ts").then((m) => m.main(args))
  },
  {
    name: "meta",
    usage: ["meta       metadata doctor for NocoBase: meta audit | repair | refresh | pretty-node"],
    // The doctor prints its own help.
    help: undefined,
    service: false,
    run: (args) => import("../meta/cli.ts").then((m) => m.main(args))
  }
]

export const usage = `usage: recon <command>
${[...commands.flatMap((c) => c.usage), "help [COMMAND]             this text, or a command's (also: recon COMMAND --help)"].map((line) => `  ${line}`).join("\n")}

The commands that use the database (recon, worker, admin, wallet, deposit, all, migrate) use DATABASE_URL, or when it is unset
an embedded PostgreSQL with its data in ./.data/pg (started and stopped with the command).`

export const find = (name: string | undefined): CommandEntry | undefined => commands.find((c) => c.name === name)
