// GET / and /console/*: the operator's console, a set of static files in web/console/ (plain ES
// modules and CSS, no build step; type-checked from their JSDoc by `npm run typecheck`). The page
// is Korean first: `?lang=en` serves it with <html lang="en">, and its script picks the words by
// that. Only the console's own files may run or style it; it talks to its own origin only.
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { readdirSync, readFileSync } from "node:fs"
import { extname } from "node:path"
import { fileURLToPath } from "node:url"
import { CommandFailed } from "../config/CommandFailed.ts"
import { queryOf } from "../http/Query.ts"

/** web/console/ from src/admin/ and dist/chunks/ alike (both two levels under the package root; build.ts keeps it so). */
export const CONSOLE_DIR = new URL("../../web/console/", import.meta.url)

/**
 * A file of web/console/ (`""`: the directory's list of names), read at start-up: missing, admin
 * stops with one line naming it and exit 2 (a broken install, as a bad setting is).
 */
export const readConsole = <A>(name: string, read: (url: URL) => A): Effect.Effect<A, CommandFailed> =>
  Effect.try({
    try: () => read(new URL(name, CONSOLE_DIR)),
    catch: (cause) =>
      new CommandFailed({
        message: `the operator console's ${name === "" ? "directory" : "file"} ${fileURLToPath(new URL(name, CONSOLE_DIR))} cannot be read ` +
          `(${(cause as NodeJS.ErrnoException).code ?? String(cause)}): web/console/ ships with recon, next to dist/`,
        exitCode: 2
      })
  })

const readText = (name: string) => readConsole(name, (url) => readFileSync(url, "utf8"))

const contentTypes: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8"
}

const headers = {
  "content-security-policy": [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'"
  ].join("; "),
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // Revalidated each time: an upgraded admin serves the new console at once.
  "cache-control": "no-cache"
}

/** The page in each language: the same file, its <html lang> set. */
const pages = (template: string) => ({
  ko: template,
  en: template.replace(/<html lang="ko">/, '<html lang="en">').replace("<title>recon 운영 콘솔</title>", "<title>recon operator console</title>")
})

export const ConsoleRoute = HttpRouter.addAll(Effect.gen(function*() {
  const page = pages(yield* readText("index.html"))
  const names = (yield* readConsole("", (url) => readdirSync(url))).filter((name) => contentTypes[extname(name)] !== undefined)
  const assets: Array<HttpRouter.Route<never>> = []
  for (const name of names) {
    const text = yield* readText(name)
    assets.push(HttpRouter.route("GET", `/console/${name}`, HttpServerResponse.text(text, { contentType: contentTypes[extname(name)]!, headers })))
  }
  return [
    HttpRouter.route("GET", "/", (request: HttpServerRequest.HttpServerRequest) =>
      Effect.succeed(HttpServerResponse.html(queryOf(request).get("lang") === "en" ? page.en : page.ko).pipe(
        HttpServerResponse.setHeaders(headers)
      ))),
    ...assets
  ]
}))
