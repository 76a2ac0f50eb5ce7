// The token matrix of DESIGN section 3 on every recon route, and the startup refusals.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { ReconApi } from "../../src/api/ReconApi.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { MAIN } from "../support/process.ts"
import { ADMIN_TOKEN, post, RECON_TOKEN, type Running, SHARED_TOKEN, startRecon } from "../support/recon.ts"

const routes = Object.values(ReconApi.groups).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint) => endpoint.path as string)
)

let db: string
beforeAll(async () => {
  db = await createMigratedDatabase("auth")
})

/** For each route: the HTTP status for each presented token (null: no header). */
const statuses = async (server: Running, token: string | null, body: unknown = {}) =>
  Promise.all(routes.map(async (path) => {
    const answer = await post(server.url, path, body, { token })
    return answer.http === 401 ? (assert.deepStrictEqual(answer.body, {
      status: 401,
      msg: "unauthorized",
      // Which caller the route takes, never anything about the token presented.
      data: { detail: "missing or wrong X-Internal-Service-Token: this route takes admin_service's token (SVC_INTERNAL_SERVICE_TOKEN_ADMIN)", issues: [] }
    }), 401) : answer.http
  }))

const allRefused = (codes: ReadonlyArray<number>) => assert.isTrue(codes.every((c) => c === 401), codes.join(","))
const noneRefused = (codes: ReadonlyArray<number>) => assert.isTrue(codes.every((c) => c !== 401), codes.join(","))

describe("token stages", () => {
  it("covers the 30 routes", () => assert.strictEqual(routes.length, 30))

  describe("stage A: shared token, per-caller keys unset", () => {
    let server: Running
    beforeAll(async () => {
      server = await startRecon(db, { SVC_INTERNAL_SERVICE_TOKEN: SHARED_TOKEN, SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN })
    })
    afterAll(() => server.close())
    it("accepts the shared token; refuses none, a wrong one and the other caller's", async () => {
      noneRefused(await statuses(server, SHARED_TOKEN))
      allRefused(await statuses(server, null))
      allRefused(await statuses(server, "wrong"))
      allRefused(await statuses(server, ""))
      allRefused(await statuses(server, RECON_TOKEN))
      allRefused(await statuses(server, `${SHARED_TOKEN}x`))
    })
  })

  describe("stage B: shared and per-caller tokens", () => {
    let server: Running
    beforeAll(async () => {
      server = await startRecon(db, {
        SVC_INTERNAL_SERVICE_TOKEN: SHARED_TOKEN,
        SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
        SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN
      })
    })
    afterAll(() => server.close())
    it("accepts both the admin token and the shared one; refuses the recon worker's", async () => {
      noneRefused(await statuses(server, ADMIN_TOKEN))
      noneRefused(await statuses(server, SHARED_TOKEN))
      allRefused(await statuses(server, RECON_TOKEN))
      allRefused(await statuses(server, null))
    })
  })

  describe("stage C: per-caller tokens only", () => {
    let server: Running
    beforeAll(async () => {
      server = await startRecon(db, {
        SVC_PER_CALLER_TOKEN_REQUIRED: "on",
        SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
        SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN
      })
    })
    afterAll(() => server.close())
    it("accepts only the admin token; the old shared token and the recon token are refused", async () => {
      noneRefused(await statuses(server, ADMIN_TOKEN))
      allRefused(await statuses(server, SHARED_TOKEN))
      allRefused(await statuses(server, RECON_TOKEN))
      allRefused(await statuses(server, null))
    })
    it("checks the token before the body: a bad token never learns whether its body was valid", async () => {
      allRefused(await statuses(server, "wrong", "not even an object"))
      const raw = await post(server.url, "/internal/recon/pushsvc/list", undefined, { token: null, raw: "{broken", contentType: "text/plain" })
      assert.strictEqual(raw.http, 401)
      const big = await post(server.url, "/internal/recon/pushsvc/list", { x: "y".repeat(100_000) }, { token: "wrong" })
      assert.strictEqual(big.http, 401)
    })
  })
})

const runRecon = (env: Record<string, string>) =>
  spawnSync(process.execPath, [MAIN, "recon"], {
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", ...env },
    encoding: "utf8",
    timeout: 20_000
  })

describe("startup refusals (exit 2, one line per problem, no secret printed)", () => {
  it("stage C with the shared token still set", () => {
    const run = runRecon({ SVC_PER_CALLER_TOKEN_REQUIRED: "on", SVC_INTERNAL_SERVICE_TOKEN: "old-shared-secret", SVC_INTERNAL_SERVICE_TOKEN_ADMIN: "a-secret" })
    assert.strictEqual(run.status, 2)
    assert.strictEqual(run.stderr.trim().split("\n").length, 1)
    assert.match(run.stderr, /SVC_INTERNAL_SERVICE_TOKEN: must be empty/)
    assert.notInclude(run.stderr + run.stdout, "old-shared-secret")
  })
  it("stage C with the caller's key empty, and other problems in the same run", () => {
    const run = runRecon({ SVC_PER_CALLER_TOKEN_REQUIRED: "on", SVC_INTERNAL_SERVICE_TOKEN_ADMIN: " ", SVC_RECON_PORT: "99999", LOG_FORMAT: "xml" })
    assert.strictEqual(run.status, 2)
    const lines = run.stderr.trim().split("\n")
    assert.strictEqual(lines.length, 3, run.stderr)
    assert.isTrue(lines.some((l) => l.includes("SVC_INTERNAL_SERVICE_TOKEN_ADMIN: required")))
    assert.isTrue(lines.some((l) => l.includes("SVC_RECON_PORT")))
    assert.isTrue(lines.some((l) => l.includes("LOG_FORMAT")))
  })
  it("no token at all, an invalid stage value, a DATABASE_URL that is not postgres", () => {
    const run = runRecon({ SVC_PER_CALLER_TOKEN_REQUIRED: "maybe", DATABASE_URL: "mysql://u:hunter2@h/db" })
    assert.strictEqual(run.status, 2)
    assert.match(run.stderr, /SVC_PER_CALLER_TOKEN_REQUIRED/)
    assert.match(run.stderr, /SVC_INTERNAL_SERVICE_TOKEN_ADMIN: not set/)
    assert.match(run.stderr, /DATABASE_URL/)
    assert.notInclude(run.stderr, "hunter2")
  })
  it("an unknown command", () => {
    const run = spawnSync(process.execPath, [MAIN, "frobnicate"], { encoding: "utf8" })
    assert.strictEqual(run.status, 2)
    assert.match(run.stderr, /unknown command: frobnicate/)
  })
})
