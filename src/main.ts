#!/usr/bin/env node
// The `recon` command: dispatches to one command module. `probe` and `meta` load nothing else, so
// the container probe stays fast.
const [command, ...args] = process.argv.slice(2)

const usage = `usage: recon <command>
  recon      recon_service (internal API, port 8017)
  all        every service in one process (embedded PostgreSQL when DATABASE_URL is unset)
  migrate    apply the database migrations and exit`

switch (command) {
  case "recon":
  case "all":
  case "migrate":
    ;(await import("./Services.ts")).main(command, args)
    break
  default:
    process.stderr.write(`${command === undefined ? "no command given" : `unknown command: ${command}`}\n${usage}\n`)
    process.exit(2)
}
