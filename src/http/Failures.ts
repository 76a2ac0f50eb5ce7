// The HTTP edge of the stores: a store's SqlError while the database is away answers the 503; any
// other SqlError is a defect (500, nothing leaked). Each service says what its stores' own errors
// answer (`recon/Failures.ts`, `wallet/Failures.ts`, `admin/Failures.ts`) and wraps its handlers with it.
import { Effect } from "effect"
import { SqlError } from "effect/sql"
import { dieUnlessAway } from "../db/Database.ts"
import { ApiFailure, DATABASE_AWAY, type ErrorStatus, fail } from "../api/Envelope.ts"

/** One ApiFailure per status (a route declares one envelope per status). */
export type Failures<S extends ErrorStatus> = S extends ErrorStatus ? ApiFailure<S> : never

/** A handler's store call as the route answers it: the store's errors as `toFailure` says, the SqlError as the 503 (or a defect). */
export const answeredBy = <E extends { readonly _tag: string }, T extends ErrorStatus>(toFailure: (error: E) => ApiFailure<T>) =>
<A, R, S extends ErrorStatus = never>(
  effect: Effect.Effect<A, E | SqlError.SqlError | ApiFailure<S>, R>
): Effect.Effect<A, Failures<S | T | 503>, R> =>
  Effect.catch(dieUnlessAway(effect), (error) => {
    const failure = SqlError.isSqlError(error) ? fail(503, DATABASE_AWAY) : error instanceof ApiFailure ? error : toFailure(error as E)
    // The same value, typed one status at a time as the routes declare their envelopes.
    return Effect.fail(failure as Failures<S | T | 503>)
  })
