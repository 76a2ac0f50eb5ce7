// GET /ws/top-info: the operator's token (`token` query parameter, which browsers can send, or
// `Authorization: Bearer`) is checked before the upgrade, so a bad one gets a plain 401 envelope.
// The upgraded socket is then served by TopInfoFeed until the client leaves or is dropped.
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Socket } from "effect/socket"
import type { Socket as NetSocket } from "node:net"
import { fail } from "../http/Envelope.ts"
import type { Connection } from "./ClientHub.ts"
import { authenticate } from "./AdminAuth.ts"
import { SessionTokens } from "./SessionTokens.ts"
import { TopInfoFeed } from "./TopInfoFeed.ts"

export const SOCKET_PATH = "/ws/top-info"

const presentedToken = (request: HttpServerRequest.HttpServerRequest): string => {
  const query = new URL(request.url, "http://admin.invalid").searchParams.get("token")
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
  const tokens = yield* SessionTokens
  return HttpRouter.add("GET", SOCKET_PATH, (request) =>
    Effect.gen(function*() {
      yield* authenticate(presentedToken(request)).pipe(Effect.provideService(SessionTokens, tokens))
      if ((request.headers.upgrade ?? "").toLowerCase() !== "websocket") {
        return yield* fail(400, "expected a websocket upgrade (Upgrade: websocket)")
      }
      yield* serveUpgraded(request, feed.serve)
      return HttpServerResponse.empty()
    }))
}))
