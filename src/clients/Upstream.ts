// What every client of a service we own shares: the caller's token presented through CallerAuth's
// client middleware, and why a call failed in words safe to show (no URL, no token).
import { Cause, Duration, Redacted } from "effect"
import { HttpClientError, HttpClientRequest } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { CallerAuth, TOKEN_HEADER } from "../http/CallerAuth.ts"

/** What CallerAuth's `requiredForClient` asks for: the token header on every request of the client. */
export const presentToken = (token: Redacted.Redacted<string>) =>
  HttpApiMiddleware.layerClient(CallerAuth, ({ next, request }) =>
    next(HttpClientRequest.setHeader(request, TOKEN_HEADER, Redacted.value(token))))

/** An error envelope `{status, msg, data}` as the typed client fails with it. */
export const isEnvelope = (u: unknown): u is { readonly status: number; readonly msg: string; readonly data: { readonly detail: string } | null } =>
  typeof u === "object" && u !== null && "status" in u && "msg" in u && typeof u.status === "number"

/** The error of a failed call: its first failure, else its first defect (never expected, still only "unavailable"). */
export const failureOf = (cause: Cause.Cause<unknown>): unknown => {
  const failure = cause.reasons.find((r) => r._tag === "Fail")
  if (failure?._tag === "Fail") return failure.error
  const defect = cause.reasons.find((r) => r._tag === "Die")
  return defect?._tag === "Die" ? defect.defect : undefined
}

/** Why `service` gave no usable answer. */
export const describeFailure = (service: string, error: unknown, timeout: Duration.Input): string => {
  if (Cause.isTimeoutError(error)) return `${service} did not answer within ${Duration.format(Duration.fromInputUnsafe(timeout))}`
  if (isEnvelope(error)) return `${service} answered ${error.status} ${error.msg}`
  if (HttpClientError.isHttpClientError(error)) {
    const reason = error.reason
    return reason._tag === "TransportError"
      ? `${service} is unreachable`
      : error.response !== undefined
      ? `${service} answered HTTP ${error.response.status}`
      : `${service} gave an unexpected answer`
  }
  return `${service} gave an unexpected answer`
}
