// The one wrapper of the clients of our own services (WalletClient, AdminClient, ReconClient): the
// typed client derived from the service's HttpApi presents the caller's token (CallerAuth's client
// middleware), every call has a time limit, and a failed call reaches the client's own outcome as
// one error, described in words safe to log. An interruption stays an interruption.
import { Cause, type Context, Duration, Effect, Layer, Redacted } from "effect"
import { HttpClientError, HttpClientRequest } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { CallerAuth, TOKEN_HEADER } from "../api/CallerAuth.ts"

/** What CallerAuth's `requiredForClient` asks for: the token header on every request of the client. */
const presentToken = (token: Redacted.Redacted<string>) =>
  HttpApiMiddleware.layerClient(CallerAuth, ({ next, request }) =>
    next(HttpClientRequest.setHeader(request, TOKEN_HEADER, Redacted.value(token))))

/** An error envelope `{status, msg, data}` as the typed client fails with it. */
export const isEnvelope = (u: unknown): u is { readonly status: number; readonly msg: string; readonly data: { readonly detail: string } | null } =>
  typeof u === "object" && u !== null && "status" in u && "msg" in u && typeof u.status === "number"

/** The error of a failed call: its first failure, else its first defect (never expected, still only "unavailable"). */
const failureOf = (cause: Cause.Cause<unknown>): unknown => {
  const failure = cause.reasons.find((r) => r._tag === "Fail")
  if (failure?._tag === "Fail") return failure.error
  const defect = cause.reasons.find((r) => r._tag === "Die")
  return defect?._tag === "Die" ? defect.defect : undefined
}

/** Why `service` gave no usable answer. */
const describeFailure = (service: string, error: unknown, timeout: Duration.Input): string => {
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

/** What a client's methods are made with. */
export interface OwnService<C> {
  /** The client derived from the service's HttpApi. */
  readonly client: C
  /**
   * `request` within the timeout; when it fails (an error envelope, no answer, a body out of
   * contract, the timeout), `recover` makes the client's outcome of that error.
   */
  readonly call: <A, B, E, R>(request: Effect.Effect<A, unknown, R>, recover: (error: unknown) => Effect.Effect<B, E>) => Effect.Effect<A | B, E, R>
  /** Why a call gave no usable answer: no URL, no token. */
  readonly describe: (error: unknown) => string
  /** `send`; when no caller token is configured, `without(reason)` at once and no request. */
  readonly withToken: <A, E, R>(send: Effect.Effect<A, E, R>, without: (reason: string) => A) => Effect.Effect<A, E, R>
}

/** A client of `service` as a layer: `derive` makes the typed client (at its base URL), `make` the client's methods with it. */
export const ownServiceLayer = <I, S, C, R>(tag: Context.Key<I, S>, options: {
  readonly service: string
  /** The caller's token; undefined: every call is `withToken`'s `without`. */
  readonly token: Redacted.Redacted<string> | undefined
  readonly timeout: Duration.Input
  readonly derive: Effect.Effect<C, never, R>
  readonly make: (own: OwnService<C>) => S
}) => {
  const { service, timeout, token } = options
  const describe = (error: unknown) => describeFailure(service, error, timeout)
  const call = <A, B, E, R>(request: Effect.Effect<A, unknown, R>, recover: (error: unknown) => Effect.Effect<B, E>) =>
    request.pipe(
      Effect.timeout(timeout),
      Effect.catchCause((cause): Effect.Effect<B, E> => Cause.hasInterruptsOnly(cause) ? Effect.interrupt : recover(failureOf(cause)))
    )
  const withToken = <A, E, R>(send: Effect.Effect<A, E, R>, without: (reason: string) => A): Effect.Effect<A, E, R> =>
    token === undefined ? Effect.succeed(without(`no caller token is configured for ${service}`)) : send
  return Layer.effect(tag, Effect.map(options.derive, (client) => options.make({ client, call, describe, withToken }))).pipe(
    Layer.provide(presentToken(token ?? Redacted.make("")))
  )
}
