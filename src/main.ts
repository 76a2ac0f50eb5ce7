#!/usr/bin/env node
// The `recon` command: dispatches to one command module. `probe` and `meta` load nothing else, so
// the container probe stays fast.
const [command, ...args] = process.argv.slice(2)

const usage = `usage: recon <command>
  recon      recon_service (internal API, port 8017)
  worker     recon_worker: supervised loops, push listener, health probes (port 8019)
  admin      admin_service: dashboard, top-info, websocket (port 8016)
  admin --create-user NAME   add a back-office operator (password prompted, or ADMIN_PASSWORD)
  all        every service in one process (embedded PostgreSQL when DATABASE_URL is unset)
  all --demo the same on its own database (.data/demo), with demo data and a simulated phone
  migrate    apply the database migrations and exit
  probe      worker health check: reads the heartbeat file, exit 0 ready / 1 not
  meta       metadata doctor for NocoBase: meta audit | repair | refresh | pretty-node`

// The services run with a small young generation: V8's default reserves ~60 MB more than a
// service uses, and at these allocation rates a small one is also faster (bench/worker.ts: idle
// RSS 150 → 120 MB, ingest 2,000 → 2,400 SMS/s). Flags must be given at start, so the process
// replaces itself once (same pid) with the flag added, unless one was chosen already.
const services = new Set(["recon", "worker", "admin", "all", "wallet"])
if (
  command !== undefined && services.has(command) && typeof process.execve === "function" &&
  !process.execArgv.some((flag) => flag.startsWith("--max-semi-space-size"))
) {
  process.execve(process.execPath, [process.execPath, "--max-semi-space-size=2", ...process.execArgv, ...process.argv.slice(1)], process.env)
}

switch (command) {
  case "meta":
    ;(await import("./meta/cli.ts")).main(args)
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
  case "all":
  case "migrate":
    ;(await import("./Services.ts")).main(command, args)
    break
  default:
    process.stderr.write(`${command === undefined ? "no command given" : `unknown command: ${command}`}\n${usage}\n`)
    process.exit(2)
}
