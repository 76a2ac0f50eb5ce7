/** A failure the user can act on (an unreachable database, a port in use, …): printed as its one line, exit 1. */
import { Data } from "effect"

export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly message: string }> {}
