// The worker's port (SVC_PUSH_PORT): the push webhook of both forwarders (PUSH_PROTOCOL.md), and
// the liveness and readiness probes (DESIGN section 8).
import { createHash } from "node:crypto"
import { Clock, DateTime, Effect, Layer, Option, Result } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpSettings } from "../config/AppConfig.ts"
import { IngestBatchers } from "./IngestBatchers.ts"
import { type ActiveRegistration, IngestStore } from "../loops/IngestStore.ts"
import { decodePush } from "../domain/PushFormats.ts"
import { toHeartbeatJson } from "../health/Heartbeat.ts"
import { HealthRegistry } from "../health/HealthRegistry.ts"
import { ParseInbox } from "../loops/ParseLoop.ts"
import { serveObserved } from "../http/ObservedServer.ts"
import { MAX_BODY_BYTES } from "../api/CallerAuth.ts"
import { fail, ok } from "../api/Envelope.ts"
import { EnvelopeMiddleware } from "../http/EnvelopeMiddleware.ts"
import { nodeServer } from "../http/NodeServer.ts"
import { DeviceIdPattern } from "../domain/Records.ts"

/**
 * How long an enabled registration found is trusted without asking again: forwarders post in
 * bursts, and this saves a query per SMS. A disabled or deleted registration is refused at most
 * this long after the change; an unknown device is never cached, so a new one works at once.
 */
export const REGISTRATION_CACHE_MILLIS = 1000

/** How often a worker deletes the SmsForwarder signatures past their freshness. */
const SIGNATURE_PRUNE_MILLIS = 60_000

const PushRoute = Layer.unwrap(Effect.gen(function*() {
  const store = yield* IngestStore
  const batchers = yield* IngestBatchers
  const inbox = yield* ParseInbox
  const cache = new Map<string, { readonly registration: ActiveRegistration; readonly until: number }>()
  let lastPrune = 0
  const activeRegistration = (deviceId: string) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const cached = cache.get(deviceId)
      if (cached !== undefined && cached.until > now) return Option.some(cached.registration)
      const found = yield* store.activeRegistration(deviceId)
      if (Option.isSome(found)) cache.set(deviceId, { registration: found.value, until: now + REGISTRATION_CACHE_MILLIS })
      else cache.delete(deviceId)
      return found
    })
  return HttpRouter.add("POST", "/push/:device_id", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { device_id: deviceId = "" } = yield* HttpRouter.params
    // A declared size over the limit is refused before anything is read.
    if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
      return yield* fail(413, `the body is over ${MAX_BODY_BYTES} bytes`)
    }
    // No registration can have another id (the schema of add_device); it would not reach the database.
    if (!DeviceIdPattern.test(deviceId)) return yield* fail(400, "the device id is not one a registration can have")
    const registration = yield* activeRegistration(deviceId)
    if (Option.isNone(registration)) return yield* fail(404, `no enabled registration for device ${deviceId}`)
    const body = new Uint8Array(yield* request.arrayBuffer)
    const decoded = decodePush(request.headers["content-type"] ?? "", body, request.headers, {
      secret: registration.value.secret,
      format: registration.value.format,
      now: yield* DateTime.now
    })
    if (Result.isFailure(decoded)) {
      const rejected = decoded.failure
      // The request's own line (EnvelopeMiddleware) says it was refused, at info; why, at debug.
      yield* Effect.logDebug(`push for ${deviceId} refused: ${rejected.reason}`)
      return yield* fail(rejected.status, rejected.message)
    }
    const push = decoded.success
    if (push._tag === "Ignored") return HttpServerResponse.jsonUnsafe(ok({ ignored: true, event: push.event }))
    if (push.signature !== undefined) {
      const now = yield* Clock.currentTimeMillis
      if (now - lastPrune > SIGNATURE_PRUNE_MILLIS) {
        lastPrune = now
        yield* store.pruneSignatures()
      }
    }
    // Answered only after the commit: a forwarder that sees 200 may forget the SMS.
    const stored = yield* batchers.ingestShared({
      deviceId,
      sender: push.sender,
      senderNormalized: push.senderNormalized,
      text: push.text,
      receivedAt: push.receivedAt,
      remoteId: push.remoteId,
      remoteDeviceId: push.remoteDeviceId,
      signature: push.signature === undefined ? undefined : {
        sign: push.signature.sign,
        digest: createHash("sha256").update(`${push.sender}\u0000${push.text}`).digest("base64"),
        expiresAt: DateTime.makeUnsafe(push.signature.expiresAtMillis)
      }
    })
    if (stored.status === "replay") {
      yield* Effect.logWarning(`push for ${deviceId} refused: a signature already used for another message (a replay)`)
      return yield* fail(401, "`sign` was already used with another message")
    }
    if (stored.status === "received") {
      yield* inbox.hand({ id: stored.smsId, deviceId, sender: push.sender, body: push.text, receivedAt: DateTime.toDateUtc(push.receivedAt) })
    }
    return HttpServerResponse.jsonUnsafe(ok({ sms_id: stored.smsId, duplicate: stored.duplicate }))
  }).pipe(Effect.annotateLogs({ route: "push" })))
}))

const HealthRoutes = Layer.unwrap(Effect.gen(function*() {
  const registry = yield* HealthRegistry
  return Layer.mergeAll(
    // Answering at all is the proof: the process and its event loop are alive.
    HttpRouter.add("GET", "/health/live", Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "ok", pid: process.pid }))),
    HttpRouter.add("GET", "/health/ready", Effect.map(registry.snapshot, (snapshot) =>
      HttpServerResponse.jsonUnsafe(toHeartbeatJson(snapshot), { status: snapshot.ready ? 200 : 503 })))
  )
}))

/** The routes of the worker's port, given the ingest store, parse_loop's inbox and the health registry. */
export const pushRoutes = Layer.mergeAll(PushRoute, HealthRoutes, EnvelopeMiddleware)

export const PushServerLive = (port: number, http: HttpSettings) =>
  // EnvelopeMiddleware logs each request; the webhook's span starts the SMS's trace (probes untraced).
  serveObserved("recon_worker", pushRoutes, http).pipe(
    Layer.provide(nodeServer(port, http))
  )
