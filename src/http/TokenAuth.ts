// Server side of CallerAuth: constant-time token check against the tokens the migration stage
// accepts, then the media type and declared size of the body, all before the body is read.
import { Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { createHash, timingSafeEqual } from "node:crypto"
import { CallerAuth, MAX_BODY_BYTES } from "./CallerAuth.ts"
import { fail } from "./Envelope.ts"

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

/** `application/json`, with or without parameters such as a charset. */
export const isJson = (contentType: string | undefined) =>
  contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() === "application/json"

export const declaredTooLarge = (contentLength: string | undefined) =>
  contentLength !== undefined && Number(contentLength) > MAX_BODY_BYTES

export const CallerAuthLive = (accepted: ReadonlyArray<Redacted.Redacted<string>>) => {
  const matches = tokenMatcher(accepted)
  return Layer.succeed(CallerAuth, {
    token: (httpEffect, { credential }) =>
      Effect.gen(function*() {
        if (!matches(Redacted.value(credential))) return yield* fail(401, "missing or wrong X-Internal-Service-Token")
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
