// A command on the embedded database (./.data/pg of its working directory) run through the real
// command runner, to see the server stopped on every way out: `serve` (stops on a signal),
// `hang` (its own clean-up never ends: the forced exit after the grace), `exit` (process.exit
// from deep inside, skipping every clean-up). Prints "ready <postmaster pid>" once up.
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { runCommand } from "../../src/commands/Lifecycle.ts"
import { DatabaseLive } from "../../src/db/Database.ts"

const mode = process.argv[2] ?? "serve"

const app = Layer.effectDiscard(Effect.gen(function*() {
  if (mode === "hang") yield* Effect.addFinalizer(() => Effect.never)
  const pid = readFileSync(".data/pg/postmaster.pid", "utf8").split("\n")[0]
  process.stdout.write(`ready ${pid}\n`)
  if (mode === "exit") setTimeout(() => process.exit(3), 200)
})).pipe(Layer.provide(DatabaseLive(undefined)))

runCommand(Layer.launch(app))
