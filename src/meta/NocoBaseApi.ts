// A signed-in conversation with a running NocoBase's HTTP API, as `meta refresh` holds it: sign in
// (`auth:signIn`, the token kept for the calls after it), GET and POST an action; every answer JSON
// with number text kept, every failure a NocoBaseError naming the step and the server's message.
import { Duration, Effect, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { callJson, clip, type UpstreamFailure } from "../clients/Upstream.ts"
import { getString, type Json, keepNumberText } from "./Json.ts"

export class NocoBaseError extends Schema.TaggedError<NocoBaseError>()("NocoBaseError", {
  step: Schema.String,
  status: Schema.NullOr(Schema.Number),
  detail: Schema.String
}) {
  override get message() {
    return `${this.step}: ${this.status === null ? "" : `HTTP ${this.status}: `}${this.detail}`
  }
}

export interface NocoBaseApiOptions {
  /** The NocoBase base URL (`http://host:13000`); `/api/...` is appended. */
  readonly baseUrl: string
  readonly account: string
  readonly password: Redacted.Redacted<string>
  /** How long one API call may take. */
  readonly requestTimeout: Duration.Duration
}

export interface NocoBaseApi {
  /** The base URL without its trailing slashes. */
  readonly base: string
  /** Signs in afresh; the token goes with every call after it. */
  readonly signIn: Effect.Effect<void, NocoBaseError>
  readonly get: (action: string, params?: Record<string, string>) => Effect.Effect<Json, NocoBaseError>
  readonly post: (action: string, params?: Record<string, string>) => Effect.Effect<Json, NocoBaseError>
}

/** Any NocoBase answer: JSON, number text kept. */
const AnswerBody = Schema.fromJsonString(Schema.Unknown, { reviver: keepNumberText })

/** NocoBase's error body: `{"errors": [{"message": …}, …]}`. */
const decodeErrors = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({
  errors: Schema.TupleWithRest(Schema.Tuple([Schema.Struct({ message: Schema.String })]), [Schema.Unknown])
})))

const errorMessage = (text: string): string => {
  const errors = decodeErrors(text)
  if (errors._tag === "Some") return errors.value.errors[0].message
  return text === "" ? "(empty body)" : clip(text, 200)
}

export const makeNocoBaseApi = (options: NocoBaseApiOptions) =>
  Effect.gen(function*() {
    const base = options.baseUrl.replace(/\/+$/, "")
    const requestTimeout = options.requestTimeout
    let token = ""

    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
    const failed = (step: string) => (failure: UpstreamFailure) => {
      switch (failure._tag) {
        case "UpstreamTimeout":
          return new NocoBaseError({ step, status: null, detail: `no answer within ${Duration.format(requestTimeout)}` })
        case "UpstreamUnreachable":
          return new NocoBaseError({ step, status: null, detail: `cannot reach ${base} (${failure.kind})` })
        case "UpstreamStatus":
          return new NocoBaseError({ step, status: failure.status, detail: errorMessage(failure.body) })
        case "UpstreamMalformed":
          return new NocoBaseError({ step, status: failure.status, detail: "answer is not JSON" })
      }
    }

    /** One API call; the body parsed as JSON (number text kept); non-2xx is a NocoBaseError with the server's message. */
    const call = (step: string, request: HttpClientRequest.HttpClientRequest): Effect.Effect<Json, NocoBaseError> =>
      callJson(
        client,
        request.pipe(HttpClientRequest.acceptJson, token === "" ? (r) => r : HttpClientRequest.bearerToken(token)),
        { body: AnswerBody, timeout: requestTimeout }
      ).pipe(
        Effect.map(({ body }) => body as Json), // JSON.parse answers Json
        Effect.mapError(failed(step))
      )

    const signIn = Effect.gen(function*() {
      token = ""
      const answer = yield* call(
        "auth:signIn",
        HttpClientRequest.post(`${base}/api/auth:signIn`).pipe(
          HttpClientRequest.setHeader("X-Authenticator", "basic"),
          HttpClientRequest.bodyJsonUnsafe({ account: options.account, password: Redacted.value(options.password) })
        )
      )
      const received = getString(answer, ["data", "token"])
      if (received === undefined) return yield* new NocoBaseError({ step: "auth:signIn", status: 200, detail: "unexpected answer: no data.token" })
      token = received
    })

    const api: NocoBaseApi = {
      base,
      signIn,
      get: (action, params = {}) =>
        call(action, HttpClientRequest.get(`${base}/api/${action}`).pipe(HttpClientRequest.setUrlParams(params))),
      post: (action, params = {}) =>
        call(action, HttpClientRequest.post(`${base}/api/${action}`).pipe(HttpClientRequest.setUrlParams(params)))
    }
    return api
  })
