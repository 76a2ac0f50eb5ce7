// Operator sign-in: the account's scrypt hash checked against the password. An unknown account
// is checked against a dummy hash, so it answers the same 401 after the same time as a wrong
// password: the timing tells nobody which accounts exist. Attempts are limited per account and
// per address before anything is hashed (SignInLimits).
import { Context, Effect, Layer, Schema } from "effect"
import type { SqlError } from "effect/sql"
import { randomBytes } from "node:crypto"
import { AdminStore } from "./AdminStore.ts"
import { hashPassword, verifyPassword } from "../domain/Passwords.ts"
import { type Refusal, SignInLimits } from "./SignInLimits.ts"

/** No operator has this account, or the password is not its password (which of the two is not told). */
export class WrongCredentials extends Schema.TaggedError<WrongCredentials>()("WrongCredentials", {}) {}

export class Operators extends Context.Service<Operators, {
  readonly signIn: (account: string, password: string, address: string) => Effect.Effect<{ readonly id: number; readonly account: string }, WrongCredentials | Refusal | SqlError.SqlError>
}>()("recon/admin/Operators") {
  static readonly layer = Layer.effect(
    Operators,
    Effect.gen(function*() {
      const store = yield* AdminStore
      const limits = yield* SignInLimits
      // Made at start-up with the current parameters, like every new hash.
      const dummyHash = yield* hashPassword(randomBytes(24).toString("base64url"))
      return {
        signIn: Effect.fn("Operators.signIn")(function*(account: string, password: string, address: string) {
          yield* limits.attempt(account, address)
          const { operator, matches } = yield* limits.queued(Effect.gen(function*() {
            const operator = yield* store.findOperator(account)
            return { operator, matches: yield* verifyPassword(password, operator?.password_hash ?? dummyHash) }
          }))
          if (operator === undefined || !matches) {
            yield* Effect.logWarning("sign-in refused").pipe(Effect.annotateLogs({ account }))
            return yield* new WrongCredentials()
          }
          yield* limits.succeeded(account)
          yield* Effect.logInfo("operator signed in").pipe(Effect.annotateLogs({ account: operator.account }))
          return { id: operator.id, account: operator.account }
        })
      }
    })
  )
}
