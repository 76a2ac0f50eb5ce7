// The HttpApi middleware of internal routes: the caller's X-Internal-Service-Token, checked
// before the body is read; then the body's media type and size, still before reading it.
import { Schema } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { ErrorData, messages } from "./Envelope.ts"

export const TOKEN_HEADER = "X-Internal-Service-Token"
export const MAX_BODY_BYTES = 64 * 1024

const gateError = (status: 401 | 413 | 415) =>
  Schema.Struct({ status: Schema.Literal(status), msg: Schema.Literal(messages[status]), data: ErrorData })

export class CallerAuth extends HttpApiMiddleware.Service<CallerAuth>()("recon/http/CallerAuth", {
  requiredForClient: true,
  security: { token: HttpApiSecurity.apiKey({ key: TOKEN_HEADER, in: "header" }) },
  error: [gateError(401), gateError(413), gateError(415)]
}) {}
