// `node src/main.ts all --demo` as a real process, in a directory of its own: it starts its own
// embedded database under ./.data/demo, prints the operator's account and password, its simulated
// phones post signed bank SMS through the real webhook, the worker and the wallet approve the
// deposits that match, an ambiguous one waits in manual review and the operator resolves it over
// the API; now and then an SMS no template reads and one from a sender nobody whitelisted wait for
// a person, and a payer who missed their request's name or amount leaves an unmatched SMS with a
// suggestion; with DEMO_WEBHOOK_URL a local receiver gets the signed events; the sign-in is kept
// in a file and said again; SIGINT stops it with exit 0.
import { afterAll, assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { createHmac, timingSafeEqual } from "node:crypto"
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { DEMO_LIMITS } from "../../src/demo/Demo.ts"
import { MAIN } from "../support/process.ts"
import { eventuallyAsync } from "../support/time.ts"

const dir = mkdtempSync(join(tmpdir(), "recon-demo-"))
chmodSync(dir, 0o755) // the embedded server runs as the unprivileged user "postgres" when we are root
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls `read` (the kit's eventually, every 500 ms) until `ok` holds of its answer or `ms` pass;
 * answers the last reading either way, for the test's own assertion to judge and describe.
 */
const within = async <A>(ms: number, read: () => Promise<A>, ok: (a: A) => boolean): Promise<A> => {
  let last: A | undefined
  let readOnce = false
  await eventuallyAsync("a reading", async () => {
    last = await read()
    readOnce = true
    return ok(last)
  }, { timeoutMs: ms, everyMs: 500 }).catch((error: unknown) => {
    if (!readOnce) throw error
  })
  return last as A
}

const postJson = async (url: string, body: unknown, headers: Record<string, string>) => {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
  return { http: response.status, body: await response.json() as any }
}

interface Demo {
  readonly output: () => string
  readonly account: string
  readonly password: string
  readonly adminToken: string
  readonly ports: { readonly recon: number; readonly admin: number }
  /** When the process was spawned (Date.now()): no event it signs is older. */
  readonly startedAt: number
  /** SIGINT, then the exit code (or "still running" after 20 s). */
  readonly interrupt: () => Promise<number | null | string>
  readonly kill: () => Promise<void>
}

/**
 * Starts the demo in `dir` and waits until it prints what to open (the database initialised, the
 * seed done). A port found free may be taken by another test's server before the demo listens on
 * it (the demo first starts its database, seconds): then it is started again on other ports.
 */
const startDemo = async (extraEnv: Record<string, string> = {}, attempts = 3): Promise<Demo> => {
  try {
    return await startDemoOnce(extraEnv)
  } catch (error) {
    if (attempts > 1 && error instanceof PortTaken) return startDemo(extraEnv, attempts - 1)
    throw error
  }
}

class PortTaken extends Error {}

const startDemoOnce = async (extraEnv: Record<string, string>): Promise<Demo> => {
  const [recon, push, admin, wallet] = await Promise.all([freePort(), freePort(), freePort(), freePort()])
  const startedAt = Date.now()
  const child = spawn(process.execPath, [MAIN, "all", "--demo"], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "",
      SVC_RECON_PORT: String(recon),
      SVC_PUSH_PORT: String(push),
      SVC_ADMIN_PORT: String(admin),
      SVC_WALLET_PORT: String(wallet),
      SVC_WORKER_HEARTBEAT_FILE: join(dir, "worker.heartbeat"),
      LOG_LEVEL: "warn",
      // The phone at five times its pace (about one SMS a second by default): the script's steps come sooner, the same steps.
      DEMO_SMS_EVERY_MS: "200",
      // The demo never uses a configured database: it has its own.
      DATABASE_URL: "postgres://nobody:nothing@127.0.0.1:1/not-the-demo",
      ...extraEnv
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL")
      await exited
    }
  }
  const started = await within(90_000, async () => output, (text) => /sign in: account \S+ +password \S+/.test(text) || child.exitCode !== null)
  const [, account, password] = started.match(/sign in: account (\S+) +password (\S+)/) ?? []
  const adminToken = output.match(/SVC_INTERNAL_SERVICE_TOKEN_ADMIN=(\S+)/)?.[1]
  if (account === undefined || password === undefined || adminToken === undefined) {
    await kill()
    if (output.includes("the port is in use")) throw new PortTaken(output)
    throw new Error(`the demo did not start:\n${output}`)
  }
  return {
    output: () => output,
    account,
    password,
    adminToken,
    ports: { recon, admin },
    startedAt,
    interrupt: () => {
      child.kill("SIGINT")
      return Promise.race([exited, sleep(20_000).then(() => "still running")])
    },
    kill
  }
}

const clients = async (demo: Demo) => {
  const reconApi = (path: string, body: unknown) =>
    postJson(`http://127.0.0.1:${demo.ports.recon}/internal/recon${path}`, body, { "x-internal-service-token": demo.adminToken })
  const login = await postJson(`http://127.0.0.1:${demo.ports.admin}/api/auth/login`, { account: demo.account, password: demo.password }, {})
  assert.strictEqual(login.http, 200, JSON.stringify(login.body))
  const operator = { authorization: `Bearer ${login.body.data.token}` }
  const adminApi = (path: string, body: unknown) => postJson(`http://127.0.0.1:${demo.ports.admin}${path}`, body, operator)
  const total = async (status?: string) => (await reconApi("/shooter/sms/list", status === undefined ? {} : { status })).body.data.total as number
  return { reconApi, adminApi, total }
}

interface Delivery {
  readonly eventId: string | undefined
  readonly signature: string | undefined
  readonly raw: Buffer
  /** When the receiver had it all (Date.now()). */
  readonly arrivedAt: number
}

/** A merchant's receiver on loopback: keeps every delivery as it arrived, answers 204. */
const receiver = () =>
  new Promise<{ url: string; deliveries: Array<Delivery>; close: () => void }>((resolve) => {
    const deliveries: Array<Delivery> = []
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        deliveries.push({ eventId: req.headers["x-recon-event-id"] as string | undefined, signature: req.headers["x-recon-signature"] as string | undefined, raw: Buffer.concat(chunks), arrivedAt: Date.now() })
        res.writeHead(204).end()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve({ url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/hooks/recon`, deliveries, close: () => server.close() })
    })
  })

/**
 * The receiver check of docs/WEBHOOKS.md, HMAC-SHA256(secret, t + "." + raw body) in constant time,
 * with its freshness rule made exact: `t` (seconds) no earlier than the demo's start and no later
 * than the delivery's arrival, where docs/WEBHOOKS.md allows a receiver 5 minutes either way.
 */
const verifyRecon = (secret: string, header: string | undefined, rawBody: Buffer, signedWithin: { readonly from: number; readonly to: number }) => {
  const parts = Object.fromEntries(String(header ?? "").split(",").map((p) => p.split("=", 2)))
  const t = Number(parts.t)
  if (!Number.isInteger(t) || t < Math.floor(signedWithin.from / 1000) || t > Math.ceil(signedWithin.to / 1000)) return false
  const expected = createHmac("sha256", secret).update(`${parts.t}.`).update(rawBody).digest()
  const given = Buffer.from(parts.v1 ?? "", "hex")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

describe("npm run demo (all --demo)", () => {
  it("starts on its own database in ./.data/demo, prints the operator, takes the phones' signed SMS, stops on SIGINT", async () => {
    const demo = await startDemo()
    try {
      assert.include(demo.output(), `open http://127.0.0.1:${demo.ports.admin}/`)
      assert.include(demo.output(), "embedded PostgreSQL (.data/demo)")
      assert.isTrue(existsSync(join(dir, ".data/demo/PG_VERSION")), "the demo's cluster is in ./.data/demo")
      const { adminApi, total } = await clients(demo)
      // The phones' SMS come in through the webhook, one of them again from the second phone.
      assert.isAtLeast(await within(15_000, () => total(), (n) => n >= 5), 5, demo.output())
      assert.isAtLeast(await within(15_000, () => total("duplicate"), (n) => n >= 1), 1, demo.output())
      // The sign-in is kept in a file only this user reads, and said again after the start-up logs.
      const kept = join(dir, ".data/demo-signin.txt")
      assert.strictEqual(statSync(kept).mode & 0o777, 0o600)
      assert.include(readFileSync(kept, "utf8"), `account ${demo.account}  password ${demo.password}`)
      await within(15_000, async () => demo.output(), (text) => text.split(`password ${demo.password}`).length > 2)
      assert.isAbove(demo.output().split(`password ${demo.password}`).length, 2)
      // Now and then a layout no template reads, and a sender nobody whitelisted: a person's queues.
      assert.isAtLeast(await within(40_000, () => total("parse_failed"), (n) => n >= 1), 1, demo.output().slice(-3000))
      assert.isAtLeast(await within(20_000, () => total("need_check"), (n) => n >= 1), 1, demo.output().slice(-3000))
      const queues = (await adminApi("/api/review/list", {})).body.data.counts
      assert.isAtMost(queues.manual_review, DEMO_LIMITS.manual_review)
      assert.isAtMost(queues.unmatched, DEMO_LIMITS.unmatched)
      assert.isAtMost(queues.parse_failed, DEMO_LIMITS.parse_failed)
      assert.isAtMost(queues.need_check, DEMO_LIMITS.need_check)
      // The printed operator is signed in; nobody else is.
      assert.strictEqual((await adminApi("/api/review/list", {})).http, 200)
      assert.strictEqual((await postJson(`http://127.0.0.1:${demo.ports.admin}/api/review/list`, {}, {})).http, 401)
      assert.strictEqual(await demo.interrupt(), 0, demo.output().slice(-3000))
    } finally {
      await demo.kill()
    }
  }, 180_000)

  it("approves matching deposits, holds a name collision for the operator, who resolves it over the API; suggests; signs its events", async () => {
    const hook = await receiver()
    const secret = "demo-receiver-secret-0123456789"
    const demo = await startDemo({ DEMO_WEBHOOK_URL: hook.url, DEMO_WEBHOOK_SECRET: secret })
    try {
      assert.include(demo.output(), `signed events (deposit.approved, sms.manual_review, sms.rejected, balance.gap) go to ${hook.url} (signed with DEMO_WEBHOOK_SECRET)`)
      assert.notInclude(demo.output(), secret)
      const { adminApi, reconApi, total } = await clients(demo)
      const approved = await within(60_000, () => total("approved"), (n) => n >= 1)
      assert.isAtLeast(approved, 1, `no SMS approved; statuses seen: ${await statuses(reconApi)}`)
      const review = await within(60_000, () => adminApi("/api/review/list", { status: "manual_review" }),
        (answer) => answer.body.data?.items?.some((item: any) => item.candidates.length > 0))
      const item = review.body.data.items.find((i: any) => i.candidates.length > 0)
      assert.isDefined(item, `no manual review with candidates; statuses seen: ${await statuses(reconApi)}`)

      // The operator approves the first candidate: approving, then the worker takes it through the wallet.
      const decided = await adminApi("/api/review/resolve", { sms_id: item.id, action: "approve", deposit_id: item.candidates[0].deposit_id })
      assert.strictEqual(decided.http, 200, JSON.stringify(decided.body))
      assert.strictEqual(decided.body.data.status, "approving")
      const final = await within(15_000, async () => (await reconApi("/shooter/sms/get", { id: item.id })).body.data,
        (sms) => sms.status === "approved")
      assert.strictEqual(final.status, "approved")
      assert.strictEqual(final.match.decisions[0].operator, demo.account)

      // A payer who missed their request's name or amount: an unmatched SMS with a suggestion.
      const suggested = await within(30_000, () => adminApi("/api/review/list", { status: "unmatched", page_size: 50 }),
        (answer) => answer.body.data?.items?.some((i: any) => i.suggestions.length > 0))
      const near = suggested.body.data.items.find((i: any) => i.suggestions.length > 0)
      assert.isDefined(near, `no unmatched SMS with a suggestion; statuses seen: ${await statuses(reconApi)}\n${demo.output().slice(-3000)}`)
      assert.isAtLeast(near.suggestions[0].reasons.length, 1)

      // The receiver got the events, each signed with the secret and carrying its id.
      const approvedEvent = () => hook.deliveries.find((d) => JSON.parse(d.raw.toString("utf8")).type === "deposit.approved")
      await within(15_000, async () => approvedEvent(), (d) => d !== undefined)
      assert.isAtLeast(hook.deliveries.length, 1, demo.output().slice(-3000))
      for (const delivery of hook.deliveries) {
        const event = JSON.parse(delivery.raw.toString("utf8"))
        const signedWithin = { from: demo.startedAt, to: delivery.arrivedAt }
        assert.isTrue(verifyRecon(secret, delivery.signature, delivery.raw, signedWithin), delivery.signature)
        assert.isFalse(verifyRecon("another-secret-0123456789", delivery.signature, delivery.raw, signedWithin))
        assert.strictEqual(delivery.eventId, String(event.id))
        assert.include(["deposit.approved", "sms.manual_review", "sms.rejected", "balance.gap"], event.type)
      }
      assert.containsAllKeys(JSON.parse(approvedEvent()!.raw.toString("utf8")).data, ["deposit_id", "player_id", "amount", "sms_id", "approved_at"])
      assert.strictEqual(await demo.interrupt(), 0, demo.output().slice(-3000))
    } finally {
      await demo.kill()
      hook.close()
    }
  }, 180_000)

  it("refuses a webhook secret too short, one line, exit 2", async () => {
    const child = spawn(process.execPath, [MAIN, "all", "--demo"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", DEMO_WEBHOOK_URL: "http://127.0.0.1:9/hooks", DEMO_WEBHOOK_SECRET: "short" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stderr.on("data", (chunk) => (output += chunk))
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
    assert.strictEqual(code, 2)
    assert.strictEqual(output, "config: DEMO_WEBHOOK_SECRET: expected 16 to 256 characters (the receiver verifies X-Recon-Signature with it)\n")
  })
})

const statuses = async (reconApi: (path: string, body: unknown) => Promise<{ body: any }>) => {
  const all = await reconApi("/shooter/sms/list", { page_size: 200 })
  const counts: Record<string, number> = {}
  for (const sms of all.body.data.items) counts[sms.status] = (counts[sms.status] ?? 0) + 1
  return JSON.stringify(counts)
}
