// wallet_service's store errors as its routes answer them (status and detail).
import { type ApiFailure, fail } from "../api/Envelope.ts"
import { answeredBy } from "../http/Failures.ts"
import type { WalletStoreError } from "./WalletStore.ts"

/** The envelope of each store error. */
export const toApiFailure = (error: WalletStoreError): ApiFailure<404 | 409> => {
  switch (error._tag) {
    case "DepositNotFound":
      return fail(404, `deposit ${error.depositId} not found`)
    case "PlayerNotFound":
      return fail(404, `player ${error.playerId} not found`)
    case "AgreeConflict":
      return fail(409, error.detail)
  }
}

/** A handler's store call as the route answers it: its errors as envelopes, the SqlError as the 503 (or a defect). */
export const answered = answeredBy(toApiFailure)
