// The HttpApi middleware of internal routes: the caller's X-Internal-Service-Token, checked
// before the body is read; then the body's media type and size, still before reading it.
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { errorEnvelope } from "./Envelope.ts"

export const TOKEN_HEADER = "X-Internal-Service-Token"
export const MAX_BODY_BYTES = 64 * 1024

export class CallerAuth extends HttpApiMiddleware.Service<CallerAuth>()("recon/api/CallerAuth", {
  requiredForClient: true,
  security: { token: HttpApiSecurity.apiKey({ key: TOKEN_HEADER, in: "header" }) },
  error: [errorEnvelope(401), errorEnvelope(413), errorEnvelope(415)]
}) {}
