// Global middleware of every service (recon, wallet, admin, the worker's push port): caps request
// bodies at 64 KiB, refuses content codings, reads body text only when it is well-formed Unicode,
// turns whatever the framework answers on its own (unknown route, schema violation, body too
// large, defect) into the envelope, so no response leaks internals or leaves the contract's shape,
// and logs each request in one line.
import { ByteSize, Cause, Effect } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { SchemaIssue } from "effect"
import { SqlError } from "effect/sql"
import { isDatabaseAway } from "../db/Database.ts"
import { decodeUtf8, LONE_SURROGATE, loneSurrogateInJson } from "../domain/PgValues.ts"
import { MAX_BODY_BYTES } from "../api/CallerAuth.ts"
import { ApiFailure, DATABASE_AWAY, envelopeResponse, type ErrorStatus, fail, type Issue, messages, NO_SUCH_ROUTE } from "../api/Envelope.ts"
import { logRequest } from "./RequestLog.ts"

const respond = (status: ErrorStatus, detail?: string, issues: ReadonlyArray<Issue> = []) =>
  envelopeResponse(status, { status, msg: messages[status], data: detail === undefined ? null : { detail, issues } })

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** The envelope for an error the framework or a defect produced, or undefined when it is not ours to answer. */
const fromError = (error: unknown): HttpServerResponse.HttpServerResponse | undefined => {
  if (error instanceof ApiFailure) return respond(error.status, error.data?.detail, error.data?.issues)
  if (HttpApiError.HttpApiSchemaError.is(error)) {
    if (error.kind === "Body" || error.kind === "ResponseHeaders") return undefined
    const issues = formatIssues(error.cause.issue).issues.map((i): Issue => ({
      path: i.path?.map((p) => (typeof p === "object" && p !== null && "key" in p ? String(p.key) : typeof p === "number" ? p : String(p))) ?? [],
      message: i.message
    }))
    return respond(400, issues.length === 1 ? issues[0]!.message : "the request does not match the schema", issues)
  }
  if (HttpServerError.isHttpServerError(error)) {
    const reason = error.reason
    if (reason instanceof HttpServerError.RouteNotFound) return respond(404, NO_SUCH_ROUTE)
    if (reason instanceof HttpServerError.RequestParseError) {
      return reason.reason === "BodyTooLarge" ? respond(413, `the body is over ${MAX_BODY_BYTES} bytes`) : respond(400, "the body could not be read")
    }
  }
  if (SqlError.isSqlError(error) && isDatabaseAway(error)) return respond(503, DATABASE_AWAY)
  return undefined
}

const isEnvelope = (response: HttpServerResponse.HttpServerResponse) =>
  ("contentType" in response.body ? response.body.contentType ?? "" : "").startsWith("application/json")

/** The codings a `Content-Encoding` header names other than `identity` (we never inflate a body). */
const contentCodings = (header: string | undefined): ReadonlyArray<string> =>
  (header ?? "").split(",").map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== "" && coding !== "identity")

/**
 * The request with its body text read strictly (DESIGN section 4 and docs/API.md, "What every port refuses"):
 * bytes that are not UTF-8, or JSON whose strings or keys hold a lone surrogate, are the 400
 * envelope (as a defect: the framework's body read has no error of ours). Everything else is the
 * request's own, inherited as `modify` views share it; `json` reads this `text`.
 */
const wellFormedBody = (request: HttpServerRequest.HttpServerRequest): HttpServerRequest.HttpServerRequest => {
  const text = Effect.flatMap(request.arrayBuffer, (buffer) => {
    const decoded = decodeUtf8(new Uint8Array(buffer))
    if (decoded === undefined) return Effect.die(fail(400, "the body is not valid UTF-8"))
    const path = loneSurrogateInJson(decoded)
    return path === undefined ? Effect.succeed(decoded) : Effect.die(fail(400, LONE_SURROGATE, [{ path, message: LONE_SURROGATE }]))
  })
  return Object.create(request, { text: { value: text } }) as HttpServerRequest.HttpServerRequest
}

/**
 * Whether a route may read the body as text. A GET has none; a form is the push route's, which
 * decodes its bytes itself by the same rule (PushFormats): thousands a second are spared the view.
 */
const mayReadText = (request: HttpServerRequest.HttpServerRequest) =>
  request.method !== "GET" && request.method !== "HEAD" &&
  (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() !== "application/x-www-form-urlencoded"

export const EnvelopeMiddleware = HttpRouter.middleware((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const codings = contentCodings(request.headers["content-encoding"])
    const answered = codings.length > 0
      ? Effect.succeed(HttpServerResponse.setHeader(
        respond(415, `Content-Encoding ${codings.join(", ")} is not accepted: send the body unencoded (identity)`),
        "accept-encoding",
        "identity"
      ))
      : app.pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, mayReadText(request) ? wellFormedBody(request) : request),
        Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES)),
        Effect.catchCause((cause) => {
          if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
          // A SqlError counts only as the failure it is (the stores keep it typed): one found among
          // defects is a bug, the 500 below, never taken for the database away.
          const errors = cause.reasons.map((r) => r._tag === "Fail" ? r.error : r._tag === "Die" && !SqlError.isSqlError(r.defect) ? r.defect : undefined)
          for (const error of errors) {
            const response = fromError(error)
            if (response !== undefined) return Effect.succeed(response)
          }
          return Effect.logError("request failed", cause).pipe(Effect.as(respond(500)))
        }),
        Effect.map((response) =>
          response.status >= 400 && !isEnvelope(response)
            ? respond((response.status in messages ? response.status : 500) as ErrorStatus)
            : response
        )
      )
    return logRequest(request, answered)
  }), { global: true })
