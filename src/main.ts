#!/usr/bin/env node
// The `recon` command: looks the command up in the table (commands/Commands.ts) and runs it. The
// table loads each command lazily, so `probe` and `meta` load nothing else and the container probe
// stays fast.
import { enableCompileCache } from "node:module"
import { find, usage } from "./commands/Commands.ts"
import { flagsChosen, SERVICE_ENV, SERVICE_NODE_FLAGS } from "./commands/NodeFlags.ts"

const [name, ...args] = process.argv.slice(2)
const isHelp = (arg: string | undefined) => arg === "--help" || arg === "-h" || arg === "help"
const command = find(name)

// The services run with their Node flags and environment (commands/NodeFlags.ts). Both must be
// given at start, so the process replaces itself once (same pid) with them added, unless the
// flags were chosen already.
if (command?.service === true && !isHelp(args[0]) && typeof process.execve === "function" && !flagsChosen(process.execArgv)) {
  process.execve(process.execPath, [process.execPath, ...SERVICE_NODE_FLAGS, ...process.execArgv, ...process.argv.slice(1)], { ...SERVICE_ENV, ...process.env })
}

// Node's compile cache (V8's code for each module, by content) in NODE_COMPILE_CACHE or the
// system's temporary directory: every start after the first skips compiling the command's
// chunks, ~60 ms of the ~450 ms of CPU a worker's start takes. That matters when a worker is
// restarted on a busy machine, where its port stays closed for as long as its start takes
// (BENCHMARKS.md). Where the directory cannot be written it is silently not used;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off.
enableCompileCache()

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
