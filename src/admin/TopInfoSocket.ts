// GET /ws/top-info: the operator's token (`token` query parameter, which browsers can send, or
// `Authorization: Bearer`) is checked before the upgrade, so a bad one gets a plain 401 envelope,
// and so is the handshake (a bad one is the 400 envelope, not the `ws` library's HTML). The upgraded socket is then served by TopInfoFeed until the client leaves or is dropped, and, for
// a client that asks with `?with=activity` (the console), by ActivityFeed beside it.
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Deferred, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Socket } from "effect/socket"
import type { Socket as NetSocket } from "node:net"
import { envelopeResponse, messages } from "../api/Envelope.ts"
import { queryOf } from "../http/Query.ts"
import { ActivityFeed } from "./ActivityFeed.ts"
import type { Connection } from "./ClientHub.ts"
import { authenticate } from "./AdminAuth.ts"
import { SessionTokens } from "./SessionTokens.ts"
import { TopInfoFeed } from "./TopInfoFeed.ts"

export const SOCKET_PATH = "/ws/top-info"

/** The websocket versions the `ws` library speaks (RFC 6455's 13, and draft 8). */
const VERSIONS = ["13", "8"]

// An HTTP token (RFC 9110), as a subprotocol name must be.
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** A `Sec-WebSocket-Protocol` list the library can read: tokens, each once. */
const isProtocolList = (header: string) => {
  const names = header.split(",").map((name) => name.trim())
  return names.every((name) => token.test(name)) && new Set(names).size === names.length
}

const refused = (detail: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.setHeaders(envelopeResponse(400, { status: 400, msg: messages[400], data: { detail, issues: [] } }), headers)

/**
 * What is wrong with a websocket handshake, checked as the `ws` library checks it before it
 * upgrades (it would answer HTML): the 400 envelope with a detail, or undefined when it is sound.
 * Without `Connection: Upgrade` Node does not hand the request over as an upgrade at all.
 */
export const handshakeProblem = (request: HttpServerRequest.HttpServerRequest) => {
  const headers = request.headers
  const connection = (headers.connection ?? "").toLowerCase().split(",").map((option) => option.trim())
  if (!connection.includes("upgrade") || (headers.upgrade ?? "").toLowerCase() !== "websocket") {
    return refused("expected a websocket upgrade (Connection: Upgrade, Upgrade: websocket)")
  }
  if (!/^[+/0-9A-Za-z]{22}==$/.test(headers["sec-websocket-key"] ?? "")) {
    return refused("Sec-WebSocket-Key is missing or not 16 bytes in Base64")
  }
  if (!VERSIONS.includes((headers["sec-websocket-version"] ?? "").trim())) {
    // RFC 6455 section 4.4: the versions the server speaks go with the refusal.
    return refused(`Sec-WebSocket-Version must be ${VERSIONS.join(" or ")}`, { "sec-websocket-version": VERSIONS.join(", ") })
  }
  const protocols = headers["sec-websocket-protocol"]
  if (protocols !== undefined && !isProtocolList(protocols)) {
    return refused("Sec-WebSocket-Protocol is not a list of distinct tokens")
  }
  return undefined
}

const presentedToken = (request: HttpServerRequest.HttpServerRequest): string => {
  const query = queryOf(request).get("token")
  if (query !== null) return query
  const header = request.headers.authorization ?? ""
  return /^bearer\s+/i.test(header) ? header.replace(/^bearer\s+/i, "").trim() : ""
}

/**
 * Upgrades `request` and hands the websocket to `serve` as a hub Connection, with the read that
 * ends when the peer leaves. Whatever the client sends is ignored.
 */
export const serveUpgraded = (
  request: HttpServerRequest.HttpServerRequest,
  serve: (connection: Connection, reading: Effect.Effect<void>) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    // The Node socket under the websocket: the bytes it still holds tell a stalled peer.
    const raw = NodeHttpServerRequest.toIncomingMessage(request).socket as NetSocket
    const socket = yield* request.upgrade
    yield* Effect.scoped(Effect.gen(function*() {
      const reader = yield* socket.reader
      const writer = yield* socket.writer
      yield* serve(
        {
          send: writer.write,
          buffered: () => raw.writableLength,
          drop: () => raw.destroy(),
          goingAway: Effect.ignore(writer.write(new Socket.CloseEvent(1001, "server stopping")))
        },
        Effect.ignore(Effect.forever(reader.pull))
      )
    }))
  }).pipe(Effect.ignore)

export const TopInfoSocketRoute = Layer.unwrap(Effect.gen(function*() {
  const feed = yield* TopInfoFeed
  const activity = yield* ActivityFeed
  const tokens = yield* SessionTokens
  /** Both feeds on one socket: the activity client leaves when the top-info one does (one reader). */
  const serveBoth = (connection: Connection, reading: Effect.Effect<void>) =>
    Effect.gen(function*() {
      const left = yield* Deferred.make<void>()
      yield* Effect.all([
        feed.serve(connection, Effect.ensuring(reading, Deferred.succeed(left, undefined))),
        activity.serve(connection, Deferred.await(left))
      ], { concurrency: 2, discard: true })
    })
  return HttpRouter.add("GET", SOCKET_PATH, (request) =>
    Effect.gen(function*() {
      yield* authenticate(presentedToken(request)).pipe(Effect.provideService(SessionTokens, tokens))
      const problem = handshakeProblem(request)
      if (problem !== undefined) return problem
      yield* serveUpgraded(request, queryOf(request).get("with") === "activity" ? serveBoth : feed.serve)
      return HttpServerResponse.empty()
    }))
}))
