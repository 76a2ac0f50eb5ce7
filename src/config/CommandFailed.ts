/**
 * A failure the user can act on (an unreachable database, a port in use, a file of the package
 * missing, …): printed as its one line, exit `exitCode` (1 unless said: 2 is a broken install or
 * configuration, as a bad setting is).
 */
import { Data } from "effect"

export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly message: string; readonly exitCode?: 1 | 2 }> {}
