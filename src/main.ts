#!/usr/bin/env node
// The `recon` command: looks the command up in the table (commands/Commands.ts) and runs it. The
// table loads each command lazily, so `probe` and `meta` load nothing else and the container probe
// stays fast.
import { find, usage } from "./commands/Commands.ts"

const [name, ...args] = process.argv.slice(2)
const isHelp = (arg: string | undefined) => arg === "--help" || arg === "-h" || arg === "help"
const command = find(name)

// The services run with a small young generation: V8's default reserves ~60 MB more than a
// service uses, and at these allocation rates a small one is also faster (bench/worker.ts: idle
// RSS 150 → 120 MB, ingest 2,000 → 2,400 SMS/s); and with `gc` exposed, which the worker calls to
// give memory back once a burst is over (health/MemoryTrim.ts). Flags must be given at start, so
// the process replaces itself once (same pid) with the flags added, unless they were chosen already.
if (
  command?.service === true && !isHelp(args[0]) && typeof process.execve === "function" &&
  !process.execArgv.some((flag) => flag.startsWith("--max-semi-space-size"))
) {
  process.execve(process.execPath, [process.execPath, "--max-semi-space-size=2", "--expose-gc", ...process.execArgv, ...process.argv.slice(1)], process.env)
}

if (command !== undefined && command.help === undefined) {
  // A command with help of its own (meta): every argument goes to it, `--help` and `help SUB` included.
  await command.run(args)
} else if (isHelp(name) || (command !== undefined && isHelp(args[0]))) {
  const topic = isHelp(name) ? find(args[0]) : command
  if (topic !== undefined && topic.help === undefined) {
    await topic.run([...args.slice(1), "--help"])
  } else {
    process.stdout.write(`${topic?.help ?? usage}\n`)
    process.exit(0)
  }
} else if (command !== undefined) {
  await command.run(args)
} else {
  process.stderr.write(`${name === undefined ? "no command given" : `unknown command: ${name}`}\n${usage}\n`)
  process.exit(2)
}
