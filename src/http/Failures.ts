// The HTTP edge of the stores: what each of their errors answers (status and detail), and the
// SqlError of the database being away as the 503; any other SqlError is a defect (500, nothing leaked).
import { Effect } from "effect"
import { SqlError } from "effect/sql"
import { dieUnlessAway } from "../db/Database.ts"
import type { ReconStoreError } from "../db/ReconStore.ts"
import type { WalletStoreError } from "../db/WalletStore.ts"
import type { WebhookNotFound } from "../db/WebhookStore.ts"
import { ApiFailure, DATABASE_AWAY, type ErrorStatus, fail } from "./Envelope.ts"

export type StoreError = ReconStoreError | WalletStoreError | WebhookNotFound

/** The envelope of each store error. */
export const toApiFailure = (error: StoreError): ApiFailure<404 | 409> => {
  switch (error._tag) {
    case "SmsNotFound":
      return fail(404, `sms ${error.smsId} not found`)
    case "SmsStatusConflict":
      return fail(409, `sms ${error.smsId} is ${error.status}, not ${error.expected.join(" or ")}`)
    case "SmsMoneyMoved":
      return fail(409, `sms ${error.smsId} is ${error.status}: money has moved or is moving, it cannot be reset`)
    case "DepositNotFound":
      return fail(404, `deposit ${error.depositId} not found`)
    case "DepositNotPending":
      return fail(409, `deposit ${error.depositId} is ${error.status}, not pending`)
    case "AmountMismatch":
      return fail(409, `deposit ${error.depositId} is for ${error.depositAmount}, the SMS for ${error.smsAmount ?? "no amount"}`)
    case "DepositTaken":
      return fail(409, `deposit ${error.depositId} is already being approved with sms ${error.smsId}`)
    case "RegistrationNotFound":
      return fail(404, `registration ${error.id} not found`)
    case "RegistrationExists":
      return fail(409, `device ${error.deviceId} already has a registration`)
    case "TemplateNotFound":
      return fail(404, `template ${error.id} not found`)
    case "TemplateExists":
      return fail(409, `bank ${error.bank} already has a template with this rule`)
    case "PhoneNotFound":
      return fail(404, `phone ${error.id} not found`)
    case "DuplicatePhone":
      return fail(409, `phone ${error.phone} is already whitelisted`)
    case "DeviceNotFound":
      return fail(404, `device ${error.id} not found`)
    case "PlayerNotFound":
      return fail(404, `player ${error.playerId} not found`)
    case "AgreeConflict":
      return fail(409, error.detail)
    case "WebhookNotFound":
      return fail(404, `webhook ${error.id} not found`)
  }
}

/** One ApiFailure per status (a route declares one envelope per status). */
type Failures<S extends ErrorStatus> = S extends ErrorStatus ? ApiFailure<S> : never

/** A handler's store call as the route answers it: its errors as envelopes, the SqlError as the 503 (or a defect). */
export const answered = <A, R, S extends ErrorStatus = never>(
  effect: Effect.Effect<A, StoreError | SqlError.SqlError | ApiFailure<S>, R>
): Effect.Effect<A, Failures<S | 404 | 409 | 503>, R> =>
  Effect.catch(dieUnlessAway(effect), (error) => {
    const failure = SqlError.isSqlError(error) ? fail(503, DATABASE_AWAY) : error instanceof ApiFailure ? error : toApiFailure(error)
    // The same value, typed one status at a time as the routes declare their envelopes.
    return Effect.fail(failure as Failures<S | 404 | 409 | 503>)
  })
