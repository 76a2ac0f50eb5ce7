// Input PostgreSQL cannot hold is a 400 at the schema, on every route: the string and time fields
// are found by walking the API definitions (recon's and admin's HttpApi, the forwarders' body
// schemas), not listed by hand. Each request starts from a payload that is valid (checked: the
// server does not answer it 400), with one field replaced by a NUL string, a lone UTF-16
// surrogate or a time out of range, or with a key that is a lone surrogate; nothing is stored.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Schema, SchemaAST } from "effect"
import { SqlClient } from "effect/sql"
import { HttpApi } from "effect/http-api"
import { AdminApi } from "../../src/api/AdminApi.ts"
import { SmsForwarderBody } from "../../src/domain/SmsForwarder.ts"
import { SmsGatewayEnvelope, SmsReceivedPayload } from "../../src/domain/SmsGateway.ts"
import { ReconApi } from "../../src/api/ReconApi.ts"
import { adminEnv, createOperator, login, request, startAdmin } from "../admin/support.ts"
import { createMigratedDatabase, runSql } from "../support/database.ts"
import { post, RECON_TOKEN, type Running, startRecon } from "../support/recon.ts"
import { startWallet } from "../support/wallet.ts"
import { register, smsRows, startPushServer } from "../support/worker.ts"

const NUL = "a\u0000b"
// JSON.stringify writes it as the escape `\ud800`, as a client's JSON would carry it.
const LONE = "a\ud800b"
const LONE_KEY = "\udc00"
const BAD_TIMES = ["-271821-04-20T00:00:00Z", "+200000-01-01T00:00:00Z", "0000-12-31T23:59:59Z"]

interface Field {
  readonly name: string
  readonly kind: "string" | "time"
}

// `annotate` on a checked schema annotates its last check.
const isDate = (ast: SchemaAST.AST) =>
  ast.annotations?.format === "date-time" || (ast.checks ?? []).some((check) => check.annotations?.format === "date-time")

/** The members a field may be (through NullOr and unions). */
const members = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> =>
  SchemaAST.isUnion(ast) ? ast.types.flatMap(members) : [ast]

/** Every string and time field of an object schema, with its path of property names. */
const fieldsOf = (ast: SchemaAST.AST, prefix: ReadonlyArray<string> = []): Array<Field & { readonly path: ReadonlyArray<string> }> => {
  if (!SchemaAST.isObjects(ast)) return []
  return ast.propertySignatures.flatMap((property) => {
    const path = [...prefix, String(property.name)]
    return members(property.type).flatMap((member) =>
      SchemaAST.isString(member) ? [{ name: path.join("."), path, kind: isDate(member) ? "time" as const : "string" as const }] : fieldsOf(member, path))
  })
}

const candidates: ReadonlyArray<unknown> = [1, true, "15889999", "dev-1", "a", "http://example.com/x", "2026-01-01T00:00:00Z"]

/** A value the schema accepts: a literal, or the first candidate that passes its checks. */
const valueFor = (ast: SchemaAST.AST): unknown => {
  for (const member of members(ast)) {
    if (SchemaAST.isLiteral(member)) return member.literal
    if (SchemaAST.isObjects(member)) return requiredOnly(member)
    const accepts = Schema.is(Schema.make<Schema.Top>(member))
    const found = candidates.find((candidate) => accepts(candidate))
    if (found !== undefined) return found
  }
  throw new Error(`no candidate value for ${ast._tag}`)
}

/** The smallest valid payload: the required fields only. */
const requiredOnly = (ast: SchemaAST.Objects): Record<string, unknown> =>
  Object.fromEntries(ast.propertySignatures
    .filter((property) => property.type.context?.isOptional !== true)
    .map((property) => [String(property.name), valueFor(property.type)]))

const withValue = (payload: Record<string, unknown>, path: ReadonlyArray<string>, value: unknown): Record<string, unknown> => {
  const [head, ...rest] = path
  if (rest.length === 0) return { ...payload, [head!]: value }
  return { ...payload, [head!]: withValue((payload[head!] ?? {}) as Record<string, unknown>, rest, value) }
}

interface Case {
  readonly route: string
  readonly field: string
  readonly path: ReadonlyArray<string>
  readonly value: unknown
  readonly base: Record<string, unknown>
}

/** Routes whose handler ties fields together beyond the schema: their base payload needs one more field. */
const baseExtras: Record<string, Record<string, unknown>> = {
  // approve names the chosen deposit (DESIGN section 5).
  "/shooter/sms/resolve": { deposit_id: 1 }
}

/** For every POST endpoint with a payload: its base payload and one case per bad value of each field. */
const casesOf = (api: typeof ReconApi | typeof AdminApi): Array<Case> => {
  const cases: Array<Case> = []
  HttpApi.reflect(api as unknown as Parameters<typeof HttpApi.reflect>[0], {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const schema = [...endpoint.payload.values()][0]?.schemas[0]
      if (schema === undefined || !SchemaAST.isObjects(schema.ast)) return
      const extra = Object.entries(baseExtras).find(([path]) => endpoint.path.endsWith(path))?.[1] ?? {}
      const base = { ...requiredOnly(schema.ast), ...extra }
      for (const field of fieldsOf(schema.ast)) {
        for (const value of field.kind === "time" ? [...BAD_TIMES, LONE] : [NUL, LONE]) {
          cases.push({ route: endpoint.path, field: field.name, path: field.path, value, base })
        }
      }
    }
  })
  return cases
}

const assertRefusedAtSchema = (answer: { http: number; body: any }, field: string, label: string) => {
  assert.strictEqual(answer.http, 400, `${label}: ${JSON.stringify(answer.body)}`)
  assert.strictEqual(answer.body.msg, "bad_request", label)
  const named = JSON.stringify(answer.body.data)
  assert.include(named, field.split(".").at(-1)!, `${label}: the answer names the field`)
}

/** A lone surrogate as a key: the answer names it (with U+FFFD where it was ill-formed). */
const assertKeyRefused = (answer: { http: number; body: any }, label: string) => {
  assert.strictEqual(answer.http, 400, `${label}: ${JSON.stringify(answer.body)}`)
  assert.strictEqual(answer.body.msg, "bad_request", label)
  assert.include(answer.body.data.detail, "lone UTF-16 surrogate", label)
  assert.deepStrictEqual(answer.body.data.issues.map((issue: any) => issue.path), [["\ufffd"]], label)
}

/** Rows in every table a request could write. */
const rowCounts = (databaseUrl: string) =>
  runSql(databaseUrl, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<Record<string, string>>`SELECT
      (SELECT count(*) FROM recon.shooter_device) AS devices, (SELECT count(*) FROM recon.shooter_push) AS pushes,
      (SELECT count(*) FROM recon.shooter_phone) AS phones, (SELECT count(*) FROM recon.shooter_sms) AS sms,
      (SELECT count(*) FROM recon.shooter_template_recharge) AS templates, (SELECT count(*) FROM recon.sms_decision) AS decisions,
      (SELECT count(*) FROM wallet.ledger) AS ledger, (SELECT count(*) FROM admin.operator) AS operators`
    return row
  }))

let db: string
beforeAll(async () => {
  db = await createMigratedDatabase("storable")
}, 60_000)

describe("recon_service routes", () => {
  let recon: Running
  beforeAll(async () => {
    recon = await startRecon(db)
  })
  afterAll(() => recon?.close())

  const cases = casesOf(ReconApi)

  it("the walk finds the fields the issue names, and more", () => {
    const names = new Set(cases.map((c) => `${c.route} ${c.field}`))
    for (const expected of ["/shooter/sms/list since", "/shooter/sms/list keyword", "/pushsvc/add_device device_id", "/shooter/phone/add phone", "/shooter/template/recharge/add sample"]) {
      assert.isTrue([...names].some((name) => name.endsWith(expected)), expected)
    }
    assert.isAtLeast(cases.length, 15)
    assert.isTrue(cases.some((c) => c.field === "since" && c.value === BAD_TIMES[0]))
  })

  it("answers 400 for a NUL character or a lone surrogate in every string field, an out-of-range time in every time field, a lone surrogate as a key", async () => {
    const routes = new Set(cases.map((c) => c.route))
    for (const route of routes) {
      const base = cases.find((c) => c.route === route)!.base
      const valid = await post(recon.url, route, base)
      assert.notStrictEqual(valid.http, 400, `${route}: the base payload is valid: ${JSON.stringify(valid.body)}`)
    }
    const before = await rowCounts(db)
    for (const c of cases) {
      assertRefusedAtSchema(await post(recon.url, c.route, withValue(c.base, c.path, c.value)), c.field, `${c.route} ${c.field}=${JSON.stringify(c.value)}`)
    }
    for (const route of routes) {
      assertKeyRefused(await post(recon.url, route, { ...cases.find((c) => c.route === route)!.base, [LONE_KEY]: 1 }), route)
    }
    assert.deepStrictEqual(await rowCounts(db), before)
  })
})

describe("admin_service routes", () => {
  let admin: Running
  let operator: string
  beforeAll(async () => {
    admin = await startAdmin(db, adminEnv("http://127.0.0.1:9"))
    await createOperator(db, "nul-checker")
    operator = await login(admin.url, "nul-checker")
  })
  afterAll(() => admin?.close())

  const cases = casesOf(AdminApi)

  it("answers 400 for a NUL character or a lone surrogate in every string field (the login account and the console's fields included), a lone surrogate as a key", async () => {
    assert.isTrue(cases.some((c) => c.route === "/api/auth/login" && c.field === "account"))
    assert.isTrue(cases.some((c) => c.route === "/api/review/resolve" && c.field === "payer_name"))
    // The sync token and an operator's session: every route gets past its auth to the schema.
    const headers = { "x-internal-service-token": RECON_TOKEN, authorization: `Bearer ${operator}` }
    for (const c of cases) {
      const valid = await request(admin.url, c.route, { body: c.base, headers })
      assert.notStrictEqual(valid.http, 400, `${c.route}: the base payload is valid`)
      assertRefusedAtSchema(await request(admin.url, c.route, { body: withValue(c.base, c.path, c.value), headers }), c.field, `${c.route} ${c.field}`)
      assertKeyRefused(await request(admin.url, c.route, { body: { ...c.base, [LONE_KEY]: 1 }, headers }), c.route)
    }
  })
})

describe("wallet_service routes", () => {
  let wallet: Running
  beforeAll(async () => {
    wallet = await startWallet(db)
  })
  afterAll(() => wallet?.close())

  it("answers 400 for a lone surrogate as a key (its fields are numbers)", async () => {
    const answer = await post(wallet.url, "/internal/wallet/deposit/agree", { deposit_id: 1, [LONE_KEY]: 1 }, { token: RECON_TOKEN })
    assertKeyRefused(answer, "deposit/agree")
  })
})

describe("the push port", () => {
  let push: Running
  beforeAll(async () => {
    push = await startPushServer(db)
    await register(db, { deviceId: "nul-fwd", format: "smsforwarder" })
    await register(db, { deviceId: "nul-gw", format: "sms-gateway" })
  })
  afterAll(() => push?.close())

  const send = (deviceId: string, body: unknown) =>
    fetch(`${push.url}/push/${encodeURIComponent(deviceId)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    }).then(async (response) => ({ http: response.status, body: await response.json() as any }))

  const forwarderBase = () => ({ from: "15889999", content: "hello", org_content: "hello", sign: "x", card_slot: "SIM1", timestamp: String(Date.now()) })
  const gatewayBase = (i: number) => ({
    event: "sms:received",
    deviceId: "gw",
    id: `evt-${i}`,
    webhookId: "hook",
    payload: { messageId: `m-${i}-${Date.now()}`, message: `hello ${i}`, phoneNumber: "15889999", sender: "15889999", receivedAt: new Date().toISOString() }
  })

  it("answers 400 (never 500) for a NUL character or a lone surrogate in every string field and an out-of-range time, of both forwarders; nothing is stored", async () => {
    const forwarderFields = fieldsOf(SmsForwarderBody.ast)
    const gatewayFields = [...fieldsOf(SmsGatewayEnvelope.ast), ...fieldsOf(SmsReceivedPayload.ast, ["payload"])]
    assert.isTrue(gatewayFields.some((f) => f.name === "payload.messageId"))
    assert.isTrue(gatewayFields.some((f) => f.name === "payload.receivedAt" && f.kind === "time"))
    assert.strictEqual((await send("nul-fwd", forwarderBase())).http, 200)
    assert.strictEqual((await send("nul-gw", gatewayBase(0))).http, 200)
    const stored = (await smsRows(db, ["nul-fwd", "nul-gw"])).length
    for (const field of forwarderFields) {
      for (const value of field.kind === "time" ? [...BAD_TIMES, LONE] : [NUL, LONE]) {
        const answer = await send("nul-fwd", withValue(forwarderBase(), field.path, value))
        assert.strictEqual(answer.http, 400, `smsforwarder ${field.name}: ${JSON.stringify(answer.body)}`)
      }
    }
    let i = 1
    for (const field of gatewayFields) {
      for (const value of field.kind === "time" ? [...BAD_TIMES, LONE] : [NUL, LONE]) {
        const answer = await send("nul-gw", withValue(gatewayBase(i++), field.path, value))
        assert.strictEqual(answer.http, 400, `sms-gateway ${field.name}=${JSON.stringify(value)}: ${JSON.stringify(answer.body)}`)
      }
    }
    for (const [device, body] of [["nul-fwd", { ...forwarderBase(), [LONE_KEY]: "x" }], ["nul-gw", withValue(gatewayBase(i++), ["payload", LONE_KEY], "x")]] as const) {
      const answer = await send(device, body)
      assert.strictEqual(answer.http, 400, `${device} key: ${JSON.stringify(answer.body)}`)
      assert.include(answer.body.data.detail, "lone UTF-16 surrogate")
    }
    assert.strictEqual((await smsRows(db, ["nul-fwd", "nul-gw"])).length, stored)
  })

  it("answers 400 for a device id no registration can have (a NUL character)", async () => {
    const answer = await send("dev\u0000ice", forwarderBase())
    assert.strictEqual(answer.http, 400)
    assert.strictEqual(answer.body.msg, "bad_request")
  })
})
