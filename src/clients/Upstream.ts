// How a client in this codebase is written:
// - One Context.Service per upstream, in src/clients. For a service we own, derive it from its
//   HttpApi and build it with `ownServiceLayer` (OwnService.ts: the caller's token, the timeout, the
//   typed outcome); for a third-party API, compose the platform's client (`HttpClient.filterStatusOk`,
//   `mapRequest`) and send each request through `callJson` below, which decodes the body with a Schema.
// - The HttpClient comes from the layer graph (`yield* HttpClient.HttpClient`); no client layer
//   provides FetchHttpClient itself, so every test can swap the transport.
// - Secrets stay `Redacted` until the request is built. A failure is turned into the client's own
//   typed error in words safe to log: no URL (it may carry a token), no secret, a clipped body.
// - Retries are the caller's policy (a loop's schedule, the LLM's attempts), not the transport's.
import { type Duration, Effect, Schema } from "effect"
import { type HttpClient, HttpClientError, type HttpClientRequest } from "effect/http"

/** No whole answer (headers and body) within the time limit. */
export class UpstreamTimeout extends Schema.TaggedError<UpstreamTimeout>()("UpstreamTimeout", {}) {}

/**
 * The request got no answer (or its body broke off). Only the kind (`TransportError`, …) is kept:
 * the platform's message names the URL, which may carry a token.
 */
export class UpstreamUnreachable extends Schema.TaggedError<UpstreamUnreachable>()("UpstreamUnreachable", {
  kind: Schema.String
}) {}

/** A non-2xx answer of a client that `filterStatusOk`s; `body` may echo secrets: scrub and clip it. */
export class UpstreamStatus extends Schema.TaggedError<UpstreamStatus>()("UpstreamStatus", {
  status: Schema.Int,
  body: Schema.String
}) {}

/** An answer whose body is not what the schema decodes; `body` as for UpstreamStatus. */
export class UpstreamMalformed extends Schema.TaggedError<UpstreamMalformed>()("UpstreamMalformed", {
  status: Schema.Int,
  body: Schema.String
}) {}

export type UpstreamFailure = UpstreamTimeout | UpstreamUnreachable | UpstreamStatus | UpstreamMalformed

/** A decoded answer and its HTTP status. */
export interface Answer<A> {
  readonly status: number
  readonly body: A
}

/**
 * Sends `request` on `client` and decodes the body's text with `body` (`Schema.fromJsonString(…)`),
 * all within `timeout`. A client that `filterStatusOk`s gets non-2xx answers as UpstreamStatus; one
 * that does not (an API whose error bodies carry the reason) decodes every answer with `body`.
 */
export const callJson = <S extends Schema.Constraint>(
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  options: { readonly body: S; readonly timeout: Duration.Input }
): Effect.Effect<Answer<S["Type"]>, UpstreamFailure, S["DecodingServices"]> => {
  const decode = Schema.decodeUnknownEffect(options.body)
  return client.execute(request).pipe(
    Effect.flatMap((response) =>
      Effect.flatMap(response.text, (text) =>
        decode(text).pipe(
          Effect.map((body) => ({ status: response.status, body })),
          Effect.mapError(() => new UpstreamMalformed({ status: response.status, body: text }))
        ))
    ),
    Effect.catchIf(HttpClientError.isHttpClientError, (error): Effect.Effect<never, UpstreamStatus | UpstreamUnreachable> => {
      const reason = error.reason
      return reason._tag === "StatusCodeError"
        ? Effect.flatMap(
          Effect.orElseSucceed(reason.response.text, () => ""),
          (body) => Effect.fail(new UpstreamStatus({ status: reason.response.status, body }))
        )
        : Effect.fail(new UpstreamUnreachable({ kind: reason._tag }))
    }),
    Effect.timeoutOrElse({ duration: options.timeout, orElse: () => Effect.fail(new UpstreamTimeout()) })
  )
}

/** `text` cut to `max` characters. */
export const clip = (text: string, max: number): string => text.length <= max ? text : `${text.slice(0, max)}…`

/** Replaces every occurrence of `secret` (a key or token an upstream may echo back) with `[redacted]`. */
export const scrubber = (secret: string) => (text: string): string => secret === "" ? text : text.replaceAll(secret, "[redacted]")
