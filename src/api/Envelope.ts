// The response envelope of DESIGN section 4, {status, msg, data}, and the one error type that
// every route fails with: its HTTP status and message word travel in the error itself.
import { Data, Effect, Schema } from "effect"
import { HttpServerRespondable, HttpServerResponse } from "effect/http"
import { HttpApiSchema } from "effect/http-api"

export const Issue = Schema.Struct({ path: Schema.Array(Schema.Union([Schema.String, Schema.Number])), message: Schema.String })
export type Issue = typeof Issue.Type

export const ErrorData = Schema.NullOr(Schema.Struct({ detail: Schema.String, issues: Schema.Array(Issue) }))
export type ErrorData = typeof ErrorData.Type

/** The message word of each error status (DESIGN section 4). */
export const messages = {
  400: "bad_request",
  401: "unauthorized",
  404: "not_found",
  // Not in DESIGN section 4's list (like 429 and 431): a request not complete within its time-out (NodeServer.ts).
  408: "request_timeout",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "unprocessable",
  // Not in DESIGN section 4's list: a contract addition (sign-in attempts over their limit).
  429: "too_many_requests",
  // Headers over Node's 16 KiB (NodeServer.ts).
  431: "request_header_fields_too_large",
  500: "internal_error",
  502: "bad_gateway",
  503: "unavailable"
} as const
export type ErrorStatus = keyof typeof messages

/** The detail of the 404 for a path no route serves (a client tells it from an unknown id by it). */
export const NO_SUCH_ROUTE = "no such route"

/** The detail of the 503 while the database is away (and of the websockets' `unavailable` messages). */
export const DATABASE_AWAY = "the database is unreachable"

/** A failed request: answered with HTTP `status` and the envelope `{status, msg, data}`. */
export class ApiFailure<S extends ErrorStatus = ErrorStatus> extends Data.TaggedError("ApiFailure")<{
  readonly status: S
  readonly msg: (typeof messages)[S]
  readonly data: ErrorData
}> {
  [HttpServerRespondable.symbol]() {
    return Effect.succeed(envelopeResponse(this.status, { status: this.status, msg: this.msg, data: this.data }))
  }
}

export const fail = <S extends ErrorStatus>(status: S, detail?: string, issues: ReadonlyArray<Issue> = []): ApiFailure<S> =>
  new ApiFailure({
    status,
    msg: messages[status],
    data: detail === undefined ? null : { detail, issues }
  })

export const envelopeResponse = (status: number, body: { status: number; msg: string; data: unknown }) =>
  HttpServerResponse.jsonUnsafe(body, { status })

/** The success envelope around a data schema. */
export const Ok = <S extends Schema.Top>(data: S) =>
  Schema.Struct({ status: Schema.Literal(200), msg: Schema.Literal("success"), data })

export const ok = <A>(data: A) => ({ status: 200 as const, msg: "success" as const, data })

/** The error envelope of one status, for the OpenAPI document and the typed client. */
export const errorEnvelope = <S extends ErrorStatus>(status: S) =>
  Schema.Struct({ status: Schema.Literal(status), msg: Schema.Literal(messages[status]), data: ErrorData }).pipe(
    HttpApiSchema.status(status)
  )

/** Every error envelope an endpoint can answer. */
export const ErrorEnvelopes = ([400, 401, 404, 409, 413, 415, 422, 500, 502, 503] as const).map(errorEnvelope)
