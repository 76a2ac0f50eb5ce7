// The query string of a request, read from the raw target. Never through `new URL(target, base)`:
// a target such as `//` or `//host` is a scheme-relative URL there (another host, or none: a
// TypeError), so a path any client may send became a 500.
import type { HttpServerRequest } from "effect/http"

/** The parameters after the first `?` of the request target (none when it has no `?`). */
export const queryOf = (request: HttpServerRequest.HttpServerRequest): URLSearchParams => {
  const mark = request.url.indexOf("?")
  return new URLSearchParams(mark === -1 ? "" : request.url.slice(mark + 1))
}
