// The Node HTTP server every service listens with: its bind address, time-outs for idle and
// stalled connections, a cap on connections, and a stop that closes the doors at the signal
// (no new connection or request, idle connections closed, in-flight answers told
// `Connection: close`) and lets the requests in flight finish. Requests Node's parser refuses are
// answered with the envelope too.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Duration, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { createServer, type IncomingMessage, maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import type { HttpSettings } from "../config/AppConfig.ts"
import { onStopping } from "../health/Stopping.ts"
import { type ErrorStatus, messages } from "../api/Envelope.ts"

/** How long a stop waits for the requests in flight (the process itself gives 10 s). */
export const DRAIN_LIMIT = Duration.seconds(8)

/** A display form of where a server listens, as its log line and the banner say it. */
export const listenUrl = (host: string | undefined, port: number): string =>
  `http://${host === undefined ? "[::]" : host.includes(":") ? `[${host}]` : host}:${port}`

const stoppingBody = JSON.stringify({ status: 503, msg: "unavailable", data: { detail: "the service is stopping", issues: [] } })

/** What Node's parser refused (its error code), as the status and detail of the answer. */
const refusal = (code: string | undefined): readonly [ErrorStatus, string] => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return [431, `the request's headers are over ${maxHeaderSize} bytes`]
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return [413, "the body's chunk extensions are too large"]
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [408, "the request was not complete within its time-out"]
    case "HPE_INVALID_METHOD":
      return [400, "the method is not one HTTP/1.1 knows"]
    case "HPE_INVALID_URL":
      return [400, "the request target has characters HTTP does not allow"]
    default:
      return [400, "the request is not valid HTTP/1.1"]
  }
}

/** A complete HTTP/1.1 answer with the envelope, written on the socket itself (no request object exists). */
const refusalAnswer = (code: string | undefined): string => {
  const [status, detail] = refusal(code)
  const body = JSON.stringify({ status, msg: messages[status], data: { detail, issues: [] } })
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Connection: close\r\n\r\n${body}`
}

/**
 * The connection bookkeeping Node leaves out: a connection that never sends a byte is closed
 * after the headers time-out (Node times out only a request that has begun); at the cap the
 * oldest connection with no request in flight (idle or stalled) makes room, so a client with a
 * real request gets in however many sockets others hold; and the stop.
 */
const guard = (server: Server, settings: HttpSettings) => {
  // In arrival order: the first one found idle is the oldest.
  const sockets = new Set<Socket>()
  const inFlight = new Map<ServerResponse, Socket>()
  const busy = new Map<Socket, number>()
  let draining = false
  let settle: (() => void) | undefined
  const settled = new Promise<void>((resolve) => (settle = resolve))
  const checkSettled = () => {
    if (draining && inFlight.size === 0) settle?.()
  }

  server.on("connection", (socket: Socket) => {
    if (draining) return socket.destroy()
    if (sockets.size >= settings.maxConnections) {
      let oldestIdle: Socket | undefined
      for (const held of sockets) {
        if (!busy.has(held)) {
          oldestIdle = held
          break
        }
      }
      if (oldestIdle === undefined) return socket.destroy()
      sockets.delete(oldestIdle)
      oldestIdle.destroy()
    }
    sockets.add(socket)
    // Cleared by the first request; Node's own time-outs take over from there.
    socket.setTimeout(settings.headersTimeoutMs)
    socket.once("close", () => {
      sockets.delete(socket)
      busy.delete(socket)
    })
  })

  // In Node's place (it would answer with an empty body): the envelope, unless an answer of a
  // request on this connection is under way (it would corrupt it), then the connection ends. A
  // connection that never sent a byte is closed without a word, whichever of the socket's idle
  // time-out and Node's request time-out check sees it first (both are due at once on a busy loop).
  server.on("clientError", (error: Error & { readonly code?: string }, socket: Duplex) => {
    const silent = (socket as Socket).bytesRead === 0
    if (!socket.writable || busy.has(socket as Socket) || error.code === "ECONNRESET" || silent) return socket.destroy()
    socket.once("finish", () => socket.destroy())
    socket.end(refusalAnswer(error.code))
  })

  const release = (response: ServerResponse, socket: Socket) => {
    if (!inFlight.delete(response)) return
    const left = (busy.get(socket) ?? 1) - 1
    if (left <= 0) busy.delete(socket)
    else busy.set(socket, left)
    // An answer sent before the stop may have promised keep-alive: the connection ends anyway.
    if (draining && left <= 0) socket.end()
    checkSettled()
  }

  // Requests and upgrades pass here before the application's listeners see them.
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: Array<unknown>) => boolean
  server.emit = ((event: string | symbol, ...args: Array<unknown>): boolean => {
    if (event === "request") {
      const request = args[0] as IncomingMessage
      const response = args[1] as ServerResponse
      const socket = request.socket
      if (draining) {
        response.writeHead(503, { "content-type": "application/json", connection: "close" })
        response.end(stoppingBody)
        return true
      }
      socket.setTimeout(0)
      inFlight.set(response, socket)
      busy.set(socket, (busy.get(socket) ?? 0) + 1)
      response.once("finish", () => release(response, socket))
      response.once("close", () => release(response, socket))
    } else if (event === "upgrade") {
      const socket = args[1] as Duplex
      if (draining) {
        socket.destroy()
        return true
      }
      // A websocket is no HTTP connection any more: its own owner closes it.
      const raw = socket as Socket
      raw.setTimeout(0)
      sockets.delete(raw)
    }
    return emit(event, ...args)
  }) as typeof server.emit

  const drain = () => {
    if (draining) return
    draining = true
    server.close()
    for (const [response] of inFlight) if (!response.headersSent) response.setHeader("connection", "close")
    for (const socket of sockets) if (!busy.has(socket)) socket.destroy()
    checkSettled()
  }

  return { drain, settled }
}

/**
 * The HttpServer layer (with Node's HTTP services) of one service on `port` (0: a free one),
 * bound and limited as `settings` say. It closes its doors at the stop signal, or when its scope
 * closes, whichever comes first, and waits up to {@link DRAIN_LIMIT} for the requests in flight.
 */
export const nodeServer = (
  port: number,
  settings: HttpSettings,
  options: { readonly websocket?: NodeHttpServer.Options["websocket"] } = {}
) =>
  Layer.mergeAll(
    Layer.effect(HttpServer.HttpServer, Effect.gen(function*() {
      const server = createServer({
        headersTimeout: settings.headersTimeoutMs,
        requestTimeout: settings.requestTimeoutMs,
        keepAliveTimeout: settings.keepAliveTimeoutMs,
        keepAliveTimeoutBuffer: Math.min(1000, settings.keepAliveTimeoutMs),
        // How often Node looks for requests over their time-outs.
        connectionsCheckingInterval: Math.max(5, Math.min(1000, Math.floor(settings.headersTimeoutMs / 2)))
      })
      const { drain, settled } = guard(server, settings)
      const inner = yield* NodeHttpServer.make(() => server, {
        port,
        ...(settings.host === undefined ? {} : { host: settings.host }),
        ...(options.websocket === undefined ? {} : { websocket: options.websocket })
      })
      yield* onStopping(drain)
      return HttpServer.make({
        address: inner.address,
        serve: (app, middleware) =>
          Effect.gen(function*() {
            yield* (middleware === undefined ? inner.serve(app) : inner.serve(app, middleware))
            // Runs before the framework's own close, which would interrupt what is still in flight.
            yield* Effect.addFinalizer(() =>
              Effect.sync(drain).pipe(
                Effect.andThen(Effect.promise(() => settled)),
                Effect.timeoutOrElse({ duration: DRAIN_LIMIT, orElse: () => Effect.void })
              )
            )
          })
      })
    })),
    NodeHttpServer.layerHttpServices
  )
