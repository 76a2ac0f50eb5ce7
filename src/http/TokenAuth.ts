// Server side of CallerAuth: constant-time token check against the tokens the migration stage
// accepts, then the media type and declared size of the body, all before the body is read.
import { Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { createHash, timingSafeEqual } from "node:crypto"
import { type Caller, tokenKeys, type TokenPolicy } from "../config/Tokens.ts"
import { CallerAuth, MAX_BODY_BYTES, TOKEN_HEADER } from "../api/CallerAuth.ts"
import { fail } from "../api/Envelope.ts"

const digest = (token: string) => createHash("sha256").update(token, "utf8").digest()

/** A check of presented tokens against the accepted ones that takes the same time whichever matches. */
export const tokenMatcher = (accepted: ReadonlyArray<Redacted.Redacted<string>>) => {
  const digests = accepted.map((token) => digest(Redacted.value(token)))
  return (presented: string): boolean => {
    const candidate = digest(presented)
    let match = false
    for (const d of digests) match = timingSafeEqual(d, candidate) || match
    return match && presented.length > 0
  }
}

const callerNames: Record<Caller, string> = { admin: "admin_service", recon: "the recon worker" }

/**
 * The 401 of a caller's route: which caller's token the route takes (public: DESIGN section 3
 * says it), never anything about the token presented. Whether it was another caller's valid
 * token stays unsaid: that would confirm a stolen string as a live token to whoever holds it.
 */
export const wrongToken = (caller: Caller) =>
  fail(401, `missing or wrong ${TOKEN_HEADER}: this route takes ${callerNames[caller]}'s token (${tokenKeys[caller]})`)

/** `application/json`, with or without parameters such as a charset. */
export const isJson = (contentType: string | undefined) =>
  contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() === "application/json"

export const declaredTooLarge = (contentLength: string | undefined) =>
  contentLength !== undefined && Number(contentLength) > MAX_BODY_BYTES

export const CallerAuthLive = (policy: TokenPolicy) => {
  const matches = tokenMatcher(policy.accepted)
  return Layer.succeed(CallerAuth, {
    token: (httpEffect, { credential }) =>
      Effect.gen(function*() {
        if (!matches(Redacted.value(credential))) return yield* wrongToken(policy.caller)
        const request = yield* HttpServerRequest.HttpServerRequest
        if (request.method === "POST") {
          if (!isJson(request.headers["content-type"])) {
            return yield* fail(415, "the body must be Content-Type: application/json")
          }
          if (declaredTooLarge(request.headers["content-length"])) {
            return yield* fail(413, `the body is over ${MAX_BODY_BYTES} bytes`)
          }
        }
        return yield* httpEffect
      })
  })
}
