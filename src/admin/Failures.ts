// Admin's HTTP edge: what each of its own errors answers (a wrong password, a sign-in over its
// limits, recon refusing or away); the database's SqlError as everywhere (src/http/Failures.ts).
import { Schema } from "effect"
import { type ApiFailure, fail } from "../api/Envelope.ts"
import { ReconRefused, ReconUnavailable } from "../clients/ReconClient.ts"
import { answeredBy } from "../http/Failures.ts"
import { WrongCredentials } from "./Operators.ts"
import type { Refusal } from "./SignInLimits.ts"

const AdminError = Schema.Union([WrongCredentials, ReconRefused, ReconUnavailable])
type AdminError = typeof AdminError.Type

/** The envelope of each of admin's own errors: recon's refusal as it gave it, recon unreachable as the upstream failing (502). */
export const toApiFailure = (error: AdminError): ApiFailure<400 | 401 | 404 | 409 | 422 | 502> => {
  switch (error._tag) {
    case "WrongCredentials":
      return fail(401, "wrong account or password")
    case "ReconRefused":
      return fail(error.status, error.detail)
    case "ReconUnavailable":
      return fail(502, error.detail)
  }
}

/** A sign-in refused by its limits: the 429 of the sign-in route (its Retry-After header is the handler's). */
export const signInRefused = ({ reason, retryAfterS }: Refusal): ApiFailure<429> =>
  fail(429, `${reason === "attempts" ? "too many sign-in attempts" : "too many sign-ins at once"}; try again in ${retryAfterS} s`)

/** A handler's effect as its route answers it: every error as its envelope. */
export const answered = answeredBy(toApiFailure)
