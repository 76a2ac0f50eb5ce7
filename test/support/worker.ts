// The worker's push port on loopback for tests, and clients that speak both forwarders' wire formats.
import { Context, Deferred, Effect, Layer } from "effect"
import type { PgClient } from "@effect/sql-pg"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { IngestBatchers } from "../../src/worker/IngestBatchers.ts"
import { IngestStore } from "../../src/loops/IngestStore.ts"
import { formatForwarderContent } from "../../src/domain/SmsText.ts"
import { signSmsGateway } from "../../src/domain/PushSignatures.ts"
import { forwarderClock, smsForwarderFormBody } from "../../src/domain/SmsForwarder.ts"
import { Components } from "../../src/health/Components.ts"
import { HealthRegistry } from "../../src/health/HealthRegistry.ts"
import { nodeServer } from "../../src/http/NodeServer.ts"
import { pushRoutes } from "../../src/worker/PushServer.ts"
import type { AdminClient } from "../../src/clients/AdminClient.ts"
import type { WalletClient } from "../../src/clients/WalletClient.ts"
import { Kicks, type Loop, type LoopServices } from "../../src/loops/Loop.ts"
import { ParseInbox } from "../../src/loops/ParseLoop.ts"
import { Fatal } from "../../src/commands/Lifecycle.ts"
import { type RuntimeOptions, WorkerRuntime, workerCore } from "../../src/worker/Runtime.ts"
import type { Env } from "../../src/config/Keys.ts"
import type { WorkerSettings } from "../../src/loops/Settings.ts"
import { runSql, sqlLayer } from "./database.ts"
import { type Answer, httpSettings, type Running, serveLayer } from "./recon.ts"

/** The IngestStore with its batchers, a component of a health registry of its own (given a SqlClient): no worker around it. */
export const ingestLayer = IngestBatchers.layer.pipe(Layer.provideMerge(IngestStore.layer), Layer.provide(Components.layer()), Layer.provideMerge(HealthRegistry.layer([])))

/** POST /push/{device_id} and the health routes on a database, without any loop running. */
export const startPushServer = (databaseUrl: string, env: Env = {}): Promise<Running> =>
  serveLayer(pushRoutes.pipe(
    Layer.provide([ingestLayer, ParseInbox.layer.pipe(Layer.provide(Kicks.layer))]),
    Layer.provide(sqlLayer(databaseUrl)),
    Layer.orDie
  ), httpSettings(env))

const answer = async (response: Response): Promise<Answer> => {
  const text = await response.text()
  try {
    return { http: response.status, body: JSON.parse(text) }
  } catch {
    return { http: response.status, body: text }
  }
}

export interface ForwarderSms {
  readonly from: string
  readonly sms: string
  /** Milliseconds since the epoch; default now. */
  readonly timestamp?: number
  readonly secret?: string
  /** Sign with this secret instead (a wrong signature). */
  readonly signWith?: string
  readonly json?: boolean
  readonly deviceName?: string
}

/** The tests' phones' clock: two pushes in one millisecond without a timestamp of their own get distinct ones. */
const stamp = forwarderClock()

/** SmsForwarder's default webhook: the SMS wrapped in the app's default content template. */
export const pushForwarder = (base: string, deviceId: string, input: ForwarderSms): Promise<Answer> => {
  const timestamp = input.timestamp ?? stamp(Date.now())
  const content = formatForwarderContent({
    from: input.from,
    text: input.sms,
    simInfo: "SIM1_KT",
    receiveTime: new Date(timestamp + 9 * 3600_000).toISOString().slice(0, 19).replace("T", " "),
    deviceName: input.deviceName ?? "phone"
  })
  const secret = input.signWith ?? input.secret
  const form = smsForwarderFormBody({ from: input.from, content, timestamp, secret })
  const body = input.json ? JSON.stringify(Object.fromEntries(new URLSearchParams(form))) : form
  return fetch(`${base}/push/${encodeURIComponent(deviceId)}`, {
    method: "POST",
    headers: { "content-type": input.json ? "application/json" : "application/x-www-form-urlencoded" },
    body
  }).then(answer)
}

export interface GatewaySms {
  readonly messageId: string
  readonly from: string
  readonly sms: string
  readonly receivedAt?: Date
  readonly event?: string
  readonly secret?: string
  readonly signWith?: string
  /** Unix seconds of X-Timestamp; default now. */
  readonly timestamp?: number
  readonly remoteDeviceId?: string
}

/** SMS Gateway for Android's `sms:received` webhook with its signature headers. */
export const pushGateway = (base: string, deviceId: string, input: GatewaySms): Promise<Answer> => {
  const body = JSON.stringify({
    deviceId: input.remoteDeviceId ?? "gw-device-1",
    event: input.event ?? "sms:received",
    id: `evt-${input.messageId}`,
    payload: {
      messageId: input.messageId,
      message: input.sms,
      phoneNumber: input.from,
      simNumber: 1,
      receivedAt: (input.receivedAt ?? new Date()).toISOString()
    },
    webhookId: "hook-1"
  })
  const headers: Record<string, string> = { "content-type": "application/json" }
  const secret = input.signWith ?? input.secret
  if (secret !== undefined) {
    const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000))
    headers["x-timestamp"] = timestamp
    headers["x-signature"] = signSmsGateway(secret, body, timestamp)
  }
  return fetch(`${base}/push/${encodeURIComponent(deviceId)}`, { method: "POST", headers, body }).then(answer)
}

/** A registration (and its device) straight into the tables. */
export const register = (databaseUrl: string, input: {
  readonly deviceId: string
  readonly format: "smsforwarder" | "sms-gateway"
  readonly secret?: string
  readonly enabled?: boolean
  readonly trusted?: boolean
}) =>
  runSql(databaseUrl, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO recon.shooter_device (device_id, trusted) VALUES (${input.deviceId}, ${input.trusted ?? false})
      ON CONFLICT (device_id) DO UPDATE SET trusted = excluded.trusted`
    yield* sql`INSERT INTO recon.shooter_push (device_id, format, secret, enabled)
      VALUES (${input.deviceId}, ${input.format}, ${input.secret ?? null}, ${input.enabled ?? true})`
  }))

export interface SmsRow {
  readonly id: number
  readonly device_id: string
  readonly sender: string
  readonly body: string
  readonly status: string
  readonly duplicate_of: number | null
  readonly remote_id: string | null
}

export const smsRows = (databaseUrl: string, deviceIds?: ReadonlyArray<string>): Promise<ReadonlyArray<SmsRow>> =>
  runSql(databaseUrl, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: bigint; duplicate_of: bigint | null }>`SELECT id, device_id, sender, body, status, duplicate_of, remote_id
      FROM recon.shooter_sms ${deviceIds === undefined ? sql`` : sql`WHERE device_id IN ${sql.in(deviceIds)}`} ORDER BY id`
    return rows.map((row) => ({ ...row, id: Number(row.id), duplicate_of: row.duplicate_of === null ? null : Number(row.duplicate_of) })) as unknown as ReadonlyArray<SmsRow>
  }))

/** GET /health/ready on a push port: the status and the JSON. */
export const getReady = (base: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}/health/ready`)
    return { http: response.status, body: (await response.json()) as any }
  })

/** One line of what a fault test did and what readiness said (in the test's output, for the record). */
export const sayFault = (line: string) => Effect.sync(() => console.log(`[fault] ${line}`))

export const workerSettings = (heartbeatFile: string, overrides: Partial<WorkerSettings> = {}): WorkerSettings => ({
  port: 0,
  heartbeatFile,
  chatbot: { enabled: false, token: undefined, apiUrl: "http://127.0.0.1:9", chatIds: [] },
  walletUrl: "http://127.0.0.1:9",
  adminUrl: "http://127.0.0.1:9",
  callerToken: undefined,
  depositTtlHours: 24,
  ...overrides
})

/**
 * The push port of a worker built by {@link buildWorker}, on its own store, kicks and registry;
 * built in the caller's scope and context, so its readiness is read on the caller's clock (TestClock).
 */
export const servePush = (worker: { readonly store: IngestStore["Service"]; readonly batchers: IngestBatchers["Service"]; readonly inbox: ParseInbox["Service"]; readonly registry: HealthRegistry["Service"] }) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(HttpRouter.serve(pushRoutes, { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provide([Layer.succeed(IngestStore, worker.store), Layer.succeed(IngestBatchers, worker.batchers), Layer.succeed(ParseInbox, worker.inbox), Layer.succeed(HealthRegistry, worker.registry)]),
      Layer.provideMerge(nodeServer(0, httpSettings())),
      Layer.orDie
    ))
    const address = Context.get(context, HttpServer.HttpServer).address
    return `http://127.0.0.1:${"port" in address ? address.port : 0}`
  })

/**
 * The worker's loops, supervisor, health registry and heartbeat on a database, built in the
 * caller's scope; `fatal` completes when the supervisor gives up.
 */
export const buildWorker = (databaseUrl: string, heartbeatFile: string, options: RuntimeOptions & {
  readonly loops?: ReadonlyArray<Loop<LoopServices | WalletClient | AdminClient | IngestStore | ParseInbox>>
  /** Wallet and admin URLs, token: by default nothing answers (port 9) and no token is set. */
  readonly settings?: Partial<WorkerSettings>
  /** The worker's database client; by default a small pool of the test's. */
  readonly sql?: Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, unknown>
} = {}) =>
  Effect.gen(function*() {
    const fatal = yield* Deferred.make<never, unknown>()
    const context = yield* Layer.build(workerCore(workerSettings(heartbeatFile, options.settings), options.loops, options).pipe(
      Layer.provideMerge(Fatal.layerOn(fatal)),
      Layer.provideMerge(options.sql ?? sqlLayer(databaseUrl)),
      Layer.orDie
    ))
    return {
      registry: Context.get(context, HealthRegistry),
      runtime: Context.get(context, WorkerRuntime),
      kicks: Context.get(context, Kicks),
      store: Context.get(context, IngestStore),
      batchers: Context.get(context, IngestBatchers),
      inbox: Context.get(context, ParseInbox),
      sql: Context.get(context, SqlClient.SqlClient),
      fatal
    }
  })
