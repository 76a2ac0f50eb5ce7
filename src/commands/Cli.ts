// Runs an effect/cli command with this program's own words: a bad invocation is one line (the
// command's usage, or the problem then the usage) on stderr and exit 2; `--help` is the command's
// help text from the table on stdout. effect/cli parses; what a user reads stays ours.
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Exit, Option } from "effect"
import { CliError, CliOutput, Command } from "effect/cli"

export interface CliWords {
  /** `--help`: printed on stdout, exit 0. */
  readonly help: string
  /** What a bad invocation prints (stderr, exit 2), given effect/cli's parse errors. */
  readonly invalid: (errors: ReadonlyArray<CliError.CliError>) => string
}

/** Runs `command` on `args` (without the program's and command's names) to its end. */
export const runCli = async <Name extends string, Input, E>(
  command: Command.Command<Name, Input, {}, E, NodeServices.NodeServices>,
  args: ReadonlyArray<string>,
  words: CliWords
): Promise<never> => {
  // effect/cli's own help and error pages are not shown: the outcome below decides what is.
  let helpAsked = false
  const silent = CliOutput.layerPresenter({
    present: (event) => Effect.sync(() => void (helpAsked ||= event._tag === "Help" && event.reason === "Requested"))
  })
  const exit = await Effect.runPromiseExit(
    Command.runWith(command, { version: "recon", renderErrors: false })(args).pipe(Effect.provide([NodeServices.layer, silent]))
  )
  const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
  if (helpAsked) {
    process.stdout.write(`${words.help}\n`)
    return process.exit(0)
  }
  if (CliError.isCliError(failure)) {
    const errors = failure._tag === "ShowHelp" ? failure.errors : [failure]
    if (errors.length > 0) {
      process.stderr.write(`${words.invalid(errors)}\n`)
      return process.exit(2)
    }
    process.stdout.write(`${words.help}\n`)
    return process.exit(0)
  }
  if (Exit.isFailure(exit)) {
    process.stderr.write(`${Cause.pretty(exit.cause)}\n`)
    return process.exit(1)
  }
  return process.exit(0)
}
