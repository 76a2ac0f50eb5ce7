// The real NocoBase 2.2.15 web client, served for Chromium: the prebuilt client of @nocobase/app
// (its npm tarball's dist/client: index.html and the bundles; fetched once into the NocoBase cache,
// without installing @nocobase/app's dependencies), the plugins' client bundles from the server's
// node_modules under /static/plugins/ (as NocoBase's own gateway serves them), and /api proxied to
// the server. NocoBase's gateway does this when started by its CLI; the harness's boot.js serves /api only.
import { execFileSync } from "node:child_process"
import { createReadStream, existsSync, statSync } from "node:fs"
import { createServer, request, type Server } from "node:http"
import { extname, join, normalize, resolve, sep } from "node:path"
import { cacheDir } from "./RealNocoBase.ts"

const APP_VERSION = "2.2.15"

/** dist/client of @nocobase/app, unpacked once into the cache (`npm pack`: 11 MB). */
export const ensureClient = (log: (line: string) => void = () => {}): string => {
  const dir = join(cacheDir(), `app-client-${APP_VERSION}`)
  const client = join(dir, "package", "dist", "client")
  if (existsSync(join(client, "index.html"))) return client
  log(`fetching the prebuilt NocoBase client (@nocobase/app@${APP_VERSION}) into ${dir}`)
  execFileSync("mkdir", ["-p", dir])
  const packed = execFileSync("npm", ["pack", `@nocobase/app@${APP_VERSION}`, "--pack-destination", dir, "--silent"], { encoding: "utf8", timeout: 300_000 }).trim()
  execFileSync("tar", ["xzf", join(dir, packed.split("\n").at(-1)!), "-C", dir, "package/dist/client"], { timeout: 120_000 })
  return client
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
  ".ttf": "font/ttf",
  ".map": "application/json"
}

const inside = (root: string, path: string): string | undefined => {
  const full = resolve(root, "." + normalize("/" + path))
  return full === root || full.startsWith(root + sep) ? full : undefined
}

/** Serves the client on a free loopback port; /api and /ws go to `api` (the NocoBase server's URL). */
export const serveClient = async (client: string, nodeModules: string, api: string): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  const target = new URL(api)
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0]!)
    if (path.startsWith("/api/") || path === "/api" || path.startsWith("/ws")) {
      const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      upstream.on("error", () => {
        res.writeHead(502).end()
      })
      req.pipe(upstream)
      return
    }
    const file = path.startsWith("/static/plugins/") ? inside(nodeModules, path.slice("/static/plugins/".length)) : inside(client, path)
    const found = file !== undefined && existsSync(file) && statSync(file).isFile() ? file : join(client, "index.html")
    res.writeHead(200, { "content-type": TYPES[extname(found)] ?? "application/octet-stream", "cache-control": "no-store" })
    createReadStream(found).pipe(res)
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise<void>((done) => {
      server.closeAllConnections()
      server.close(() => done())
    })
  }
}
