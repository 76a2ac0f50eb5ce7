// Server side of admin's middlewares: the operator's bearer session (checked, then refreshed on
// whatever the route answers: the sliding session), and the JSON gate of the public sign-in POST.
import { Effect, Layer, Redacted } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { MAX_BODY_BYTES } from "../api/CallerAuth.ts"
import { fail } from "../api/Envelope.ts"
import { declaredTooLarge, isJson } from "../http/TokenAuth.ts"
import { CurrentOperator, JsonBody, OperatorAuth } from "../api/AdminApi.ts"
import { SessionTokens, type TokenRejected } from "./SessionTokens.ts"
import { type Session } from "../api/ConsoleRecords.ts"

const rejection = (error: TokenRejected) =>
  fail(401, {
    missing: "missing Authorization: Bearer token",
    invalid: "invalid session token",
    expired: "the session has expired; sign in again"
  }[error.reason])

/** Verifies a presented token: the session, or the 401 envelope error (no hint beyond missing/invalid/expired). */
export const authenticate = (token: string) =>
  Effect.gen(function*() {
    const tokens = yield* SessionTokens
    return yield* Effect.mapError(tokens.verify(token), rejection)
  })

/** Sets `Authorization: Bearer <token>` on the response this request ends with, errors included. */
export const withSessionHeader = (token: string) =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, {
      authorization: `Bearer ${token}`,
      // A token is in the response: no cache may keep it.
      "cache-control": "no-store"
    })))

/** The sliding session: a fresh token for the same operator on this request's response. */
export const refreshSession = (session: Session) =>
  Effect.gen(function*() {
    const tokens = yield* SessionTokens
    yield* withSessionHeader(yield* tokens.issue({ id: session.operatorId, account: session.account }))
  })

export const OperatorAuthLive = Layer.effect(
  OperatorAuth,
  Effect.gen(function*() {
    const tokens = yield* SessionTokens
    return {
      bearer: (httpEffect, { credential }) =>
        Effect.gen(function*() {
          const session = yield* authenticate(Redacted.value(credential))
          yield* refreshSession(session)
          return yield* Effect.provideService(httpEffect, CurrentOperator, session)
        }).pipe(Effect.provideService(SessionTokens, tokens))
    }
  })
)

export const JsonBodyLive = Layer.succeed(JsonBody, (httpEffect) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!isJson(request.headers["content-type"])) return yield* fail(415, "the body must be Content-Type: application/json")
    if (declaredTooLarge(request.headers["content-length"])) return yield* fail(413, `the body is over ${MAX_BODY_BYTES} bytes`)
    return yield* httpEffect
  }))
