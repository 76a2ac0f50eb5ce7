// What every stand-in for a third-party HTTP API needs: a server on 127.0.0.1 at a free port for
// the test's scope, each request's body read whole, and a log of calls a test can wait on.
import { Effect } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))

/** Serves `handle` (given the request's whole body as text) until the scope closes; answers `http://127.0.0.1:<port>`. */
export const serveLoopback = (handle: (req: IncomingMessage, res: ServerResponse, body: string) => void) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.callback<ReturnType<typeof createServer>>((resume) => {
        const server = createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (chunk: Buffer) => chunks.push(chunk))
          req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")))
        })
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      // A test may leave a request hanging on purpose: cut it rather than wait for it.
      (server) => Effect.sync(() => {
        server.closeAllConnections()
        server.close()
      })
    ),
    (server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  )

/** Calls in arrival order, and `arrived(n)`, which resumes once `n` calls have been recorded. */
export const callLog = <C>() => {
  const calls: Array<C> = []
  const waiters: Array<{ readonly n: number; readonly wake: () => void }> = []
  return {
    calls,
    record: (call: C) => {
      calls.push(call)
      for (const waiter of waiters.filter((w) => calls.length >= w.n)) waiter.wake()
    },
    arrived: (n: number): Effect.Effect<void> =>
      Effect.callback<void>((wake) => {
        if (calls.length >= n) return wake(Effect.void)
        waiters.push({ n, wake: () => wake(Effect.void) })
      })
  }
}
