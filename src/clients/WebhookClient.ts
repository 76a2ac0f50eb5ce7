// The merchants' webhook receivers: one signed POST per attempt, on the HttpClient of the layer
// graph, within a time limit, redirects not followed (a receiver answers where it was configured),
// at most a few KiB of the answer read and none of it kept: an attempt records only the status,
// so a webhook URL can never be used to read what an internal address answers.
import { Clock, Duration, Effect, Stream } from "effect"
import { FetchHttpClient, HttpClient, HttpClientError, HttpClientRequest } from "effect/http"
import { eventBody, signature, type WebhookEvent } from "../domain/Webhooks.ts"

/** One request's time limit: a slow receiver holds one delivery slot at most this long. */
export const REQUEST_TIMEOUT = Duration.seconds(10)
/** Answer bytes read (then the connection is dropped): enough to reuse a keep-alive connection. */
const ANSWER_BYTES = 4096

/** How an attempt ended: a 2xx, or why not, in words safe to store and show (no URL, no secret). */
export interface SendOutcome {
  readonly delivered: boolean
  readonly httpStatus: number | null
  readonly error: string | null
}

export interface Target {
  readonly url: string
  readonly secret: string
}

/** The transport failure's own code (ECONNREFUSED, ENOTFOUND…), never its message (it names the URL). */
const transportCode = (error: HttpClientError.HttpClientError): string => {
  const cause = error.reason._tag === "TransportError" ? (error.reason.cause as { cause?: { code?: unknown } } | undefined) : undefined
  const code = cause?.cause?.code
  return typeof code === "string" && /^[A-Z_]{2,40}$/.test(code) ? ` (${code})` : ""
}

/** A sender on the layer graph's HttpClient: `send(target, event)` never fails, it says what happened. */
export const makeSender = Effect.gen(function*() {
  const client = yield* HttpClient.HttpClient
  const send = (target: Target, event: WebhookEvent): Effect.Effect<SendOutcome> =>
    Effect.gen(function*() {
      const body = eventBody(event)
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const request = HttpClientRequest.post(target.url).pipe(
        HttpClientRequest.bodyText(body, "application/json"),
        HttpClientRequest.setHeaders({
          "x-recon-event-id": String(event.id),
          "x-recon-signature": signature(target.secret, now, body),
          "user-agent": "recon-webhooks/1"
        })
      )
      const response = yield* client.execute(request)
      let read = 0
      yield* response.stream.pipe(
        Stream.runForEachWhile((chunk) => Effect.succeed((read += chunk.length) < ANSWER_BYTES)),
        Effect.ignore
      )
      const delivered = response.status >= 200 && response.status < 300
      const outcome: SendOutcome = {
        delivered,
        httpStatus: response.status,
        error: delivered ? null : response.status >= 300 && response.status < 400 ? `HTTP ${response.status} (redirects are not followed)` : `HTTP ${response.status}`
      }
      return outcome
    }).pipe(
      Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }),
      Effect.timeoutOrElse({
        duration: REQUEST_TIMEOUT,
        orElse: () => Effect.succeed<SendOutcome>({ delivered: false, httpStatus: null, error: `no answer within ${Duration.format(REQUEST_TIMEOUT)}` })
      }),
      Effect.catch((error) =>
        Effect.succeed<SendOutcome>({
          delivered: false,
          httpStatus: null,
          error: HttpClientError.isHttpClientError(error) ? `unreachable${transportCode(error)}` : "the request failed"
        })
      )
    )
  return { send }
})
