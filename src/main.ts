#!/usr/bin/env node
// The `recon` command: dispatches to one command module. `probe` and `meta` load nothing else, so
// the container probe stays fast.
const [command, ...args] = process.argv.slice(2)

const usage = `usage: recon <command>
  recon      recon_service (internal API, port 8017)
  all        every service in one process (embedded PostgreSQL when DATABASE_URL is unset)
  migrate    apply the database migrations and exit
  probe      worker health check: reads the heartbeat file, exit 0 ready / 1 not
  meta       metadata doctor for NocoBase: meta audit | repair | refresh | pretty-node`

switch (command) {
  case "meta":
    ;(await import("./meta/cli.ts")).main(args)
    break
  case "probe":
    ;(await import("./health/probe.ts")).main(args)
    break
  case "recon":
  case "all":
  case "migrate":
    ;(await import("./Services.ts")).main(command, args)
    break
  default:
    process.stderr.write(`${command === undefined ? "no command given" : `unknown command: ${command}`}\n${usage}\n`)
    process.exit(2)
}
