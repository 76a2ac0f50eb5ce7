// recon_service on loopback for tests: the real routes on a real HTTP server (port 0) over a
// real database, with helpers to call them as a client would.
import { Context, Effect, Exit, Layer, Scope } from "effect"
import type { SqlClient } from "effect/sql"
import { HttpRouter, HttpServer } from "effect/http"
import { type HttpSettings, readHttpSettings } from "../../src/config/AppConfig.ts"
import { type Env, readSync } from "../../src/config/Keys.ts"
import { readReconSettings } from "../../src/recon/Settings.ts"
import { nodeServer } from "../../src/http/NodeServer.ts"
import { reconRoutes } from "../../src/recon/ReconServer.ts"
import { sqlLayer } from "./database.ts"

export const ADMIN_TOKEN = "test-admin-token-0123456789"
export const RECON_TOKEN = "test-recon-token-0123456789"
export const SHARED_TOKEN = "test-shared-token-0123456789"

export interface Running {
  readonly url: string
  readonly close: () => Promise<void>
}

/** A started server (a `start…` of test/support) for the test's scope: closed at its end. */
export const serve = (start: Promise<Running>) => Effect.acquireRelease(Effect.promise(() => start), (s) => Effect.promise(() => s.close()))

/** The servers' settings as `all` reads them (loopback), with `env`'s SVC_HTTP_* keys. */
export const httpSettings = (env: Env = {}): HttpSettings => {
  return readSync(env, readHttpSettings("loopback"))
}

/** Serves `routes` on 127.0.0.1 at a free port until `close`, on the services' own server. */
export const serveLayer = async <A, E, R>(routes: Layer.Layer<A, E, R>, http: HttpSettings = httpSettings()): Promise<Running> => {
  const scope = Scope.makeUnsafe()
  const layer = HttpRouter.serve(routes as Layer.Layer<A, E, never>, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(nodeServer(0, http))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope) as unknown as Effect.Effect<Context.Context<HttpServer.HttpServer>, unknown>)
  const address = Context.get(context, HttpServer.HttpServer).address
  const port = "port" in address ? address.port : 0
  return { url: `http://127.0.0.1:${port}`, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** recon_service on a database URL with the given environment (tokens, LLM settings). */
export const startRecon = (databaseUrl: string, env: Env = { SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN }, sql: Layer.Layer<SqlClient.SqlClient, unknown> = sqlLayer(databaseUrl)) => {
  const settings = readSync(env, readReconSettings)
  return serveLayer(reconRoutes(settings).pipe(Layer.provide(sql), Layer.orDie), httpSettings(env))
}

export interface Answer {
  readonly http: number
  readonly body: any
}

/** POSTs JSON (or raw text) to a route; answers the HTTP status and the parsed body. */
export const post = async (
  base: string,
  path: string,
  body: unknown,
  options: { readonly token?: string | null; readonly contentType?: string; readonly raw?: string } = {}
): Promise<Answer> => {
  const headers: Record<string, string> = { "content-type": options.contentType ?? "application/json" }
  const token = options.token === undefined ? ADMIN_TOKEN : options.token
  if (token !== null) headers["x-internal-service-token"] = token
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers,
    body: options.raw ?? JSON.stringify(body)
  })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON: the test will see the text
  }
  return { http: response.status, body: parsed }
}

export const recon = (base: string) => (path: string, body: unknown = {}, options?: Parameters<typeof post>[3]) =>
  post(base, `/internal/recon${path}`, body, options)
