// recon_service's store errors as its routes answer them (status and detail).
import type { BalanceConflict, BalanceNotFound } from "../db/BalanceStore.ts"
import type { WebhookNotFound } from "../db/WebhookStore.ts"
import { type ApiFailure, fail } from "../api/Envelope.ts"
import { answeredBy } from "../http/Failures.ts"
import type { DeviceStoreError } from "./DeviceStore.ts"
import type { SmsStoreError } from "./SmsStore.ts"
import type { TemplateStoreError } from "./TemplateStore.ts"

/** The envelope of each store error. */
export const toApiFailure = (
  error: SmsStoreError | DeviceStoreError | TemplateStoreError | WebhookNotFound | BalanceNotFound | BalanceConflict
): ApiFailure<404 | 409> => {
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
    case "WebhookNotFound":
      return fail(404, `webhook ${error.id} not found`)
    case "BalanceNotFound":
      return fail(404, `${error.what} not found`)
    case "BalanceConflict":
      return fail(409, error.detail)
  }
}

/** A handler's store call as the route answers it: its errors as envelopes, the SqlError as the 503 (or a defect). */
export const answered = answeredBy(toApiFailure)
