// Runs effect/cli commands with this program's own words: effect/cli parses the command line;
// what a user reads stays ours (a bad invocation is one line and exit 2, `--help` the command's
// help text from the table on stdout, exit 0).
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Exit, Option } from "effect"
import { CliError, CliOutput, Command } from "effect/cli"

/** How a command line ended: help asked for, not a valid invocation, or the handler ran (with its exit). */
export type CliOutcome =
  | { readonly _tag: "Help" }
  | { readonly _tag: "Invalid"; readonly errors: ReadonlyArray<CliError.CliError> }
  | { readonly _tag: "Ran"; readonly exit: Exit.Exit<void, unknown> }

/** Parses `args` (without the program's and command's names) with `command` and runs its handler; nothing printed. */
export const outcome = <Name extends string, Input, E>(
  command: Command.Command<Name, Input, {}, E, NodeServices.NodeServices>,
  args: ReadonlyArray<string>
): Effect.Effect<CliOutcome> => {
  let helpAsked = false
  // effect/cli's own help and error pages are not shown: the outcome decides what is.
  const silent = CliOutput.layerPresenter({
    present: (event) => Effect.sync(() => void (helpAsked ||= event._tag === "Help" && event.reason === "Requested"))
  })
  return Command.runWith(command, { version: "recon", renderErrors: false })(args).pipe(
    Effect.provide([NodeServices.layer, silent]),
    Effect.exit,
    Effect.map((exit): CliOutcome => {
      if (helpAsked) return { _tag: "Help" }
      const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
      if (CliError.isCliError(failure)) return { _tag: "Invalid", errors: failure._tag === "ShowHelp" ? failure.errors : [failure] }
      return { _tag: "Ran", exit: Exit.asVoid(exit) }
    })
  )
}

export interface CliWords {
  /** `--help`: printed on stdout, exit 0. */
  readonly help: string
  /** What a bad invocation prints (stderr, exit 2), given effect/cli's parse errors. */
  readonly invalid: (errors: ReadonlyArray<CliError.CliError>) => string
}

/** Runs `command` on `args` to the end of the process. */
export const runCli = async <Name extends string, Input, E>(
  command: Command.Command<Name, Input, {}, E, NodeServices.NodeServices>,
  args: ReadonlyArray<string>,
  words: CliWords
): Promise<never> => {
  const result = await Effect.runPromise(outcome(command, args))
  if (result._tag === "Help") {
    process.stdout.write(`${words.help}\n`)
    return process.exit(0)
  }
  if (result._tag === "Invalid") {
    process.stderr.write(`${words.invalid(result.errors)}\n`)
    return process.exit(2)
  }
  if (Exit.isFailure(result.exit)) {
    process.stderr.write(`${Cause.pretty(result.exit.cause)}\n`)
    return process.exit(1)
  }
  return process.exit(0)
}
