// order_match_loop in the worker's runtime on a real database, against the real wallet_service
// (and admin_service) on loopback: the decisions of DESIGN section 6, what is recorded, the
// NOTIFY of a new deposit, the wallet's answers, and time (backoff, leases) through TestClock.
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber, Layer, Option, Redacted, Schedule, type Scope } from "effect"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AdminClient } from "../../src/clients/AdminClient.ts"
import { WalletClient } from "../../src/clients/WalletClient.ts"
import { OrderMatchLoop, WALLET_CONCURRENCY } from "../../src/loops/OrderMatchLoop.ts"
import { createOperator, login, openSocket, startAdmin } from "../admin/support.ts"
import { createMigratedDatabase, holdLock, holdTableLock, runSql } from "../support/database.ts"
import {
  addDeposit,
  addParsedSms,
  addPlayer,
  addPlayersWithDeposits,
  addParsedSmsBatch,
  credits,
  smsState,
  smsStatuses,
  walletStandIn
} from "../support/match.ts"
import { ADMIN_TOKEN, RECON_TOKEN, recon, startRecon, serve } from "../support/recon.ts"
import { query, startWallet, walletState } from "../support/wallet.ts"
import { loopServices } from "../support/loops.ts"
import { eventually, realWait } from "../support/time.ts"
import { buildWorker, getReady, sayFault, servePush, workerSettings } from "../support/worker.ts"
import { SqlClient } from "effect/sql"

const heartbeatPath = () => join(mkdtempSync(join(tmpdir(), "recon-match-")), "worker.heartbeat")

/** A server for the test's scope. */

/** The worker with only order_match_loop on an existing database (nothing answers where no URL is given). */
const setUpWorker = (db: string, urls: { readonly adminUrl?: string; readonly walletUrl?: string }) =>
  Effect.gen(function*() {
    const worker = yield* buildWorker(db, heartbeatPath(), {
      loops: [OrderMatchLoop],
      backoff: Schedule.spaced("20 millis"),
      settings: { walletUrl: urls.walletUrl ?? "http://127.0.0.1:9", adminUrl: urls.adminUrl ?? "http://127.0.0.1:9", callerToken: Redacted.make(RECON_TOKEN) }
    })
    yield* eventually("ready", worker.registry.ready)
    return worker
  })

/** A fresh database, the real wallet_service on it (or a stand-in in front of it), and the worker. */
const setUp = (prefix: string, options: { readonly walletUrl?: (wallet: string) => Effect.Effect<string, never, Scope.Scope> } = {}) =>
  Effect.gen(function*() {
    const db = yield* Effect.promise(() => createMigratedDatabase(prefix))
    const wallet = yield* serve(startWallet(db))
    const walletUrl = options.walletUrl === undefined ? wallet.url : yield* options.walletUrl(wallet.url)
    return { db, wallet, ...(yield* setUpWorker(db, { walletUrl })) }
  })

const status = (db: string, id: number) => Effect.promise(() => smsState(db, id))
const until = (what: string, check: () => Promise<boolean>, ms = 10_000) => eventually(what, Effect.promise(check), ms)

/** Moves the test clock `ms` forward in steps, letting real I/O (queries, HTTP) run between them. */
const advance = (ms: number, step = 1000) =>
  Effect.gen(function*() {
    for (let done = 0; done < ms; done += step) {
      yield* TestClock.adjust(Math.min(step, ms - done))
      yield* realWait(25)
    }
  })

describe("exactly one candidate", () => {
  it.effect("a parsed SMS is approved through the wallet: balance credited once, ledger row, deposit.sms_id; sms/get shows candidates, decision and answer", () =>
    Effect.gen(function*() {
      const { db, kicks } = yield* setUp("om-one")
      const player = yield* Effect.promise(() => addPlayer(db, "홍길동"))
      const deposit = yield* Effect.promise(() => addDeposit(db, player, "홍길동", "50000"))
      const other = yield* Effect.promise(() => addDeposit(db, player, "홍길동", "70000"))
      const sms = yield* Effect.promise(() => addParsedSms(db, "홍길동", "50000"))
      yield* kicks.kick("order_match_loop")
      yield* until("approved", async () => (await smsState(db, sms)).status === "approved")

      const state = yield* Effect.promise(() => walletState(db, deposit))
      assert.strictEqual(state.status, "approved")
      assert.strictEqual(state.smsId, sms)
      assert.deepStrictEqual(state.ledger, [{ smsId: sms, amount: "50000.00" }])
      assert.strictEqual(Number(state.balance), 50000)
      assert.strictEqual((yield* Effect.promise(() => walletState(db, other))).status, "pending")

      const reconServer = yield* serve(startRecon(db))
      const answer = yield* Effect.promise(() => recon(reconServer.url)("/shooter/sms/get", { id: sms }, { token: ADMIN_TOKEN }))
      assert.strictEqual(answer.http, 200)
      const { data } = answer.body
      assert.strictEqual(data.status, "approved")
      assert.strictEqual(data.deposit_id, deposit)
      // What happened last: the wallet agreed (the match itself decided to approve).
      assert.strictEqual(data.match.decision, "approved")
      assert.strictEqual(data.match.reason, "exactly one pending deposit matches")
      assert.deepStrictEqual(data.match.candidates.map((c: any) => c.deposit_id), [deposit])
      assert.strictEqual(data.match.wallet.answer, "approved")
      assert.strictEqual(data.match.wallet.attempts, 1)
    }), 30_000)

  it.effect("names compare after NFC and white-space removal, in SQL: a decomposed, spaced payer matches the deposit", () =>
    Effect.gen(function*() {
      const { db, kicks } = yield* setUp("om-nfc")
      const player = yield* Effect.promise(() => addPlayer(db, "김 민준"))
      // 김 decomposed into its jamo (NFD), an ideographic space and a no-break space.
      const deposit = yield* Effect.promise(() => addDeposit(db, player, "김민준", "12000"))
      const sms = yield* Effect.promise(() => addParsedSms(db, "\u1100\u1175\u11b7\u3000민\u00a0준 ", "12000"))
      yield* kicks.kick("order_match_loop")
      yield* until("approved", async () => (await smsState(db, sms)).status === "approved")
      assert.strictEqual((yield* status(db, sms)).depositId, deposit)
      const keys = yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ p: string; d: string }>`SELECT p.name_key AS p, d.owner_key AS d FROM recon.player p, recon.deposit d`
      })))
      assert.deepStrictEqual([...keys], [{ p: "김민준", d: "김민준" }])
    }), 30_000)

  it.effect("a deposit created after its SMS is matched at once (NOTIFY), the clock standing still", () =>
    Effect.gen(function*() {
      const { db, kicks } = yield* setUp("om-late")
      const sms = yield* Effect.promise(() => addParsedSms(db, "이순신", "30000"))
      yield* kicks.kick("order_match_loop")
      yield* until("unmatched", async () => (await smsState(db, sms)).status === "unmatched")
      assert.strictEqual((yield* status(db, sms)).match.reason, "no pending deposit with this name and amount")
      const player = yield* Effect.promise(() => addPlayer(db, "이순신"))
      const deposit = yield* Effect.promise(() => addDeposit(db, player, "이순신", "30000"))
      yield* until("approved", async () => (await smsState(db, sms)).status === "approved", 5_000)
      assert.strictEqual((yield* status(db, sms)).depositId, deposit)
    }), 30_000)

  it.effect("the second phone's copy being stored (its transaction open) does not hide the SMS from the pass kicked for it, the clock standing still", () =>
    Effect.gen(function*() {
      const { db, kicks } = yield* setUp("om-copy")
      const player = yield* Effect.promise(() => addPlayer(db, "장보고"))
      const deposit = yield* Effect.promise(() => addDeposit(db, player, "장보고", "25000"))
      // Stored first (no pass looks at it yet), its copy held, then parsed: every pass from here on
      // runs while the copy is being stored.
      const sms = yield* Effect.promise(() => addParsedSms(db, "장보고", "25000", "received"))
      // The copy's row names the SMS (duplicate_of): its foreign key check holds FOR KEY SHARE on
      // the SMS until the copy's ingest commits; a balance placement (balance_entry) does the same.
      const copy = yield* holdLock(db, (q) => q`INSERT INTO recon.shooter_sms (device_id, sender, sender_normalized, body, normalized_body, received_at, status, duplicate_of)
        SELECT device_id, sender, sender_normalized, body, normalized_body, received_at, 'duplicate', id FROM recon.shooter_sms WHERE id = ${sms}`)
      yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        yield* (yield* SqlClient.SqlClient)`UPDATE recon.shooter_sms SET status = 'parsed' WHERE id = ${sms}`
      })))
      yield* kicks.kick("order_match_loop")
      // No tick of the loop comes (TestClock): only the kicked pass can decide it.
      yield* until("approved while the copy is still being stored", async () => (await smsState(db, sms)).status === "approved", 5_000)
      assert.strictEqual((yield* status(db, sms)).depositId, deposit)
      yield* copy.release
    }), 30_000)

  it.effect("an unmatched SMS is retried for 24 h from parsing, not after", () =>
    Effect.gen(function*() {
      const { db, kicks } = yield* setUp("om-24h")
      const fresh = yield* Effect.promise(() => addParsedSms(db, "강감찬", "40000"))
      const old = yield* Effect.promise(() => addParsedSms(db, "을지문덕", "40000"))
      yield* kicks.kick("order_match_loop")
      yield* until("both unmatched", async () => (await smsState(db, fresh)).status === "unmatched" && (await smsState(db, old)).status === "unmatched")
      yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE recon.shooter_sms SET match_started_at = now() - interval '24 hours 1 minute' WHERE id = ${old}`
      })))
      const a = yield* Effect.promise(() => addPlayer(db, "강감찬"))
      const b = yield* Effect.promise(() => addPlayer(db, "을지문덕"))
      yield* Effect.promise(() => addDeposit(db, a, "강감찬", "40000"))
      const late = yield* Effect.promise(() => addDeposit(db, b, "을지문덕", "40000"))
      yield* until("the fresh one approved", async () => (await smsState(db, fresh)).status === "approved", 5_000)
      yield* kicks.kick("order_match_loop")
      yield* realWait(300)
      assert.strictEqual((yield* status(db, old)).status, "unmatched")
      assert.strictEqual((yield* Effect.promise(() => walletState(db, late))).status, "pending")
    }), 30_000)
})

describe("deposit expiry", () => {
  it.effect("a pending deposit older than SVC_DEPOSIT_TTL_H is expired by a pass, once a minute at most, and never matched", () =>
    Effect.gen(function*() {
      const { db, kicks } = yield* setUp("om-expiry")
      const player = yield* Effect.promise(() => addPlayer(db, "권율"))
      const old = yield* Effect.promise(() => addDeposit(db, player, "권율", "55000"))
      const fresh = yield* Effect.promise(() => addDeposit(db, player, "권율", "66000"))
      yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Ages on the test clock (its time starts at 0): one 24 h and a minute old, one just created.
        yield* sql`UPDATE recon.deposit SET created_at = to_timestamp(0) - interval '24 hours 1 minute' WHERE id = ${old}`
        yield* sql`UPDATE recon.deposit SET created_at = to_timestamp(0) WHERE id = ${fresh}`
      })))
      // The first pass looked before the deposits were there; the next look comes a minute later (24 h by default).
      yield* kicks.kick("order_match_loop")
      yield* realWait(300)
      assert.strictEqual((yield* Effect.promise(() => walletState(db, old))).status, "pending")
      yield* advance(60_000, 5_000)
      yield* kicks.kick("order_match_loop")
      yield* until("expired", async () => (await walletState(db, old)).status === "expired")
      assert.strictEqual((yield* Effect.promise(() => walletState(db, fresh))).status, "pending")
      // Its SMS arriving now finds no deposit.
      const sms = yield* Effect.promise(() => addParsedSms(db, "권율", "55000"))
      yield* kicks.kick("order_match_loop")
      yield* until("unmatched", async () => (await smsState(db, sms)).status === "unmatched")
    }), 30_000)
})

describe("ambiguous matches go to a person", () => {
  it.effect("two players share the name: manual_review, task_status=6 on the matching deposit only, and admin's websocket clients get fresh counters at once", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("om-review"))
      const reconServer = yield* serve(startRecon(db))
      const admin = yield* serve(startAdmin(db, {
        RECON_SERVICE_URL: reconServer.url,
        SVC_INTERNAL_SERVICE_TOKEN_ADMIN: ADMIN_TOKEN,
        SVC_INTERNAL_SERVICE_TOKEN_RECON: RECON_TOKEN
      }))
      yield* Effect.promise(() => createOperator(db, "alice"))
      const first = yield* Effect.promise(() => addPlayer(db, "홍길동"))
      const second = yield* Effect.promise(() => addPlayer(db, "홍 길동"))
      const matching = yield* Effect.promise(() => addDeposit(db, first, "홍길동", "50000"))
      const otherAmount = yield* Effect.promise(() => addDeposit(db, second, "홍길동", "60000"))
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => openSocket(admin.url, await login(admin.url, "alice"))),
        (c) => Effect.sync(() => c.close())
      )
      const initial = yield* Effect.promise(() => client.next())
      assert.strictEqual(initial.data.manual_review_cnt, 0)

      // The worker reaches admin_service through a pass-through stand-in that counts its sync calls.
      const syncs = yield* walletStandIn(admin.url)
      const { kicks } = yield* setUpWorker(db, { adminUrl: syncs.url })
      const sms = yield* Effect.promise(() => addParsedSms(db, "홍길동", "50000"))
      yield* kicks.kick("order_match_loop")
      yield* until("manual_review", async () => (await smsState(db, sms)).status === "manual_review")
      yield* syncs.arrived(1)
      // The sync's push (not admin's 10 s tick, which may also come by) carries the new counter.
      let pushed = yield* Effect.promise(() => client.next(5_000))
      while (pushed.data.manual_review_cnt !== 1) pushed = yield* Effect.promise(() => client.next(5_000))
      assert.strictEqual(pushed.data.manual_review_cnt, 1)

      const state = yield* status(db, sms)
      assert.isNull(state.depositId)
      assert.strictEqual(state.match.decision, "manual_review")
      assert.strictEqual(state.match.reason, "2 players share the name")
      assert.deepStrictEqual(state.match.players, [first, second])
      const flags = yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ id: bigint; task_status: number | null; status: string }>`SELECT id, task_status, status FROM recon.deposit ORDER BY id`
      })))
      assert.deepStrictEqual(flags.map((d) => [Number(d.id), d.task_status, d.status]), [[matching, 6, "pending"], [otherAmount, null, "pending"]])
      assert.deepStrictEqual(yield* Effect.promise(() => credits(db)).pipe(Effect.map((c) => c.ledgerRows)), 0)
    }), 30_000)

  it.effect("two pending deposits match one player's SMS: both flagged, nothing credited; admin down: the review stands and the sync is retried", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("om-two"))
      const wallet = yield* serve(startWallet(db))
      const admin = yield* walletStandIn("http://127.0.0.1:9", () => "down")
      const { kicks } = yield* setUpWorker(db, { adminUrl: admin.url, walletUrl: wallet.url })
      const player = yield* Effect.promise(() => addPlayer(db, "유관순"))
      const a = yield* Effect.promise(() => addDeposit(db, player, "유관순", "10000"))
      const b = yield* Effect.promise(() => addDeposit(db, player, "유관순", "10000"))
      const sms = yield* Effect.promise(() => addParsedSms(db, "유관순", "10000"))
      yield* kicks.kick("order_match_loop")
      yield* until("manual_review", async () => (await smsState(db, sms)).status === "manual_review")
      assert.strictEqual((yield* status(db, sms)).match.reason, "2 pending deposits match the name and amount")
      yield* admin.arrived(1)
      // Retried with backoff (500 ms, 1 s, …) while admin_service stays down; the review is untouched.
      yield* advance(4_000, 250)
      assert.isAtLeast(admin.calls.length, 3)
      assert.strictEqual((yield* status(db, sms)).status, "manual_review")
      for (const id of [a, b]) {
        const flag = yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ task_status: number }>`SELECT task_status FROM recon.deposit WHERE id = ${id}`
        })))
        assert.strictEqual(flag[0]!.task_status, 6)
      }
      assert.strictEqual((yield* Effect.promise(() => credits(db))).ledgerRows, 0)
    }), 30_000)
})

describe("the wallet's answers", () => {
  it.effect("a deposit an SMS is being approved against is no candidate for another SMS of the same name and amount", () =>
    Effect.gen(function*() {
      const { db, kicks } = yield* setUp("om-held")
      const player = yield* Effect.promise(() => addPlayer(db, "을지문덕"))
      const deposit = yield* Effect.promise(() => addDeposit(db, player, "을지문덕", "30000"))
      // Approving against the deposit, its wallet call not due for an hour (another worker holds it).
      const holding = yield* Effect.promise(() => addParsedSms(db, "을지문덕", "30000", "manual_review"))
      yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE recon.shooter_sms SET status = 'approving', deposit_id = ${deposit}, match_next_at = now() + interval '1 hour' WHERE id = ${holding}`
      })))
      const second = yield* Effect.promise(() => addParsedSms(db, "을지문덕", "30000"))
      yield* kicks.kick("order_match_loop")
      yield* until("the second decided", async () => (await smsState(db, second)).status !== "parsed")
      const decided = yield* status(db, second)
      assert.strictEqual(decided.status, "unmatched")
      assert.deepStrictEqual(decided.match.candidates, [])
      assert.strictEqual((yield* status(db, holding)).status, "approving")
      const c = yield* Effect.promise(() => credits(db))
      assert.strictEqual(c.ledgerRows, 0)
    }), 30_000)

  it.effect("an approving SMS left by a person (sms/resolve) is sent; 409 and 404 become manual_review with the reason", () =>
    Effect.gen(function*() {
      const { db, kicks } = yield* setUp("om-answers")
      const player = yield* Effect.promise(() => addPlayer(db, "장보고"))
      const resolved = yield* Effect.promise(() => addDeposit(db, player, "다른이름", "20000"))
      const taken = yield* Effect.promise(() => addDeposit(db, player, "장보고", "20000"))
      const first = yield* Effect.promise(() => addParsedSms(db, "장보고", "20000"))
      yield* kicks.kick("order_match_loop")
      yield* until("first approved", async () => (await smsState(db, first)).status === "approved")
      // As sms/resolve leaves them: approving with an operator's deposit.
      const byPerson = yield* Effect.promise(() => addParsedSms(db, "장보고", "20000", "manual_review"))
      const conflicting = yield* Effect.promise(() => addParsedSms(db, "장보고", "20000", "manual_review"))
      const unknown = yield* Effect.promise(() => addParsedSms(db, "장보고", "20000", "manual_review"))
      yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE recon.shooter_sms SET status = 'approving', deposit_id = ${resolved} WHERE id = ${byPerson}`
        yield* sql`UPDATE recon.shooter_sms SET status = 'approving', deposit_id = ${taken} WHERE id = ${conflicting}`
        yield* sql`UPDATE recon.shooter_sms SET status = 'approving', deposit_id = 999999 WHERE id = ${unknown}`
      })))
      yield* kicks.kick("order_match_loop")
      yield* until("all answered", async () =>
        (await smsState(db, byPerson)).status === "approved" &&
        (await smsState(db, conflicting)).status === "manual_review" &&
        (await smsState(db, unknown)).status === "manual_review")
      assert.strictEqual((yield* Effect.promise(() => walletState(db, resolved))).smsId, byPerson)
      assert.strictEqual((yield* status(db, byPerson)).match.decision, "approved")
      const conflict = (yield* status(db, conflicting)).match
      assert.strictEqual(conflict.decision, "manual_review")
      assert.strictEqual(conflict.wallet.answer, "conflict")
      assert.match(conflict.reason, /409/)
      const notFound = (yield* status(db, unknown)).match
      assert.strictEqual(notFound.wallet.answer, "not_found")
      assert.match(notFound.reason, /404.*999999/)
      const c = yield* Effect.promise(() => credits(db))
      assert.deepStrictEqual([c.ledgerRows, c.creditedTwice, c.wrongSms], [2, 0, 0])
    }), 30_000)

  it.effect("a wallet failing 30 % of calls with 5xx and holding 20 % past the timeout: after it recovers, every match is credited exactly once", () =>
    Effect.gen(function*() {
      let standIn: Effect.Success<ReturnType<typeof walletStandIn>> | undefined
      const { db, kicks, registry } = yield* setUp("om-flaky", {
        walletUrl: (url) =>
          Effect.map(walletStandIn(url, (n) => (["fail-before", "hold", "fail-after", "forward", "forward", "fail-before", "hold", "forward", "fail-after", "forward"] as const)[n % 10]!), (s) => {
            standIn = s
            return s.url
          })
      })
      const deposits = yield* Effect.promise(() => addPlayersWithDeposits(db, "flaky", 200))
      yield* Effect.promise(() => addParsedSmsBatch(db, "flaky", 200))
      yield* kicks.kick("order_match_loop")
      // Several passes: timeouts (5 s), backoffs (1 s, 2 s …), leases (8 s) all on the test clock.
      yield* advance(60_000, 500)
      assert.isTrue(yield* registry.ready, "the worker stays ready through the wallet's failures")
      const during = yield* Effect.promise(() => smsStatuses(db))
      assert.isAbove(during.approved ?? 0, 0)
      // Recovered: everything goes through.
      standIn!.setFate(() => "forward")
      standIn!.releaseHeld()
      yield* eventually("all approved", Effect.gen(function*() {
        yield* advance(5_000, 500)
        return (yield* Effect.promise(() => smsStatuses(db))).approved === 200
      }), 60_000)
      const c = yield* Effect.promise(() => credits(db))
      assert.deepStrictEqual(
        [c.ledgerRows, c.depositsCredited, c.creditedTwice, c.approvedDeposits, c.wrongSms, c.ledgerTotal, c.balanceTotal],
        [200, 200, 0, 200, 0, "2000000.00", "2000000.00"]
      )
      assert.strictEqual(deposits.length, 200)
      const fates = new Set(standIn!.calls.map((call) => call.fate))
      assert.deepStrictEqual([...fates].sort(), ["fail-after", "fail-before", "forward", "hold"])
      // The ones the wallet decided but the worker never heard about were sent again and recorded as replays.
      const replays = yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.shooter_sms WHERE match_detail->'wallet'->>'answer' = 'replayed'`
      })))
      assert.isAbove(Number(replays[0]!.n), 0)
    }), 120_000)

  it.effect("wallet down for longer than every TTL: the worker stays ready, the SMS wait approving, and all are approved once it is back", () =>
    Effect.gen(function*() {
      let standIn: Effect.Success<ReturnType<typeof walletStandIn>> | undefined
      const { db, kicks, registry } = yield* setUp("om-down", {
        walletUrl: (url) => Effect.map(walletStandIn(url, () => "down"), (s) => {
          standIn = s
          return s.url
        })
      })
      yield* Effect.promise(() => addPlayersWithDeposits(db, "down", 50))
      yield* Effect.promise(() => addParsedSmsBatch(db, "down", 50))
      yield* kicks.kick("order_match_loop")
      yield* until("all approving", async () => (await smsStatuses(db)).approving === 50)
      // 3 minutes: twice the loop's TTL.
      for (let t = 0; t < 180; t += 10) {
        yield* advance(10_000, 1000)
        assert.isTrue(yield* registry.ready, `ready at ${t + 10} s`)
      }
      const snapshot = yield* registry.snapshot
      assert.strictEqual(snapshot.loops.find((l) => l.name === "order_match_loop")!.restarts, 0)
      assert.strictEqual((yield* Effect.promise(() => smsStatuses(db))).approving, 50)
      assert.isAbove(standIn!.calls.length, 50 * 3)
      assert.strictEqual((yield* Effect.promise(() => credits(db))).ledgerRows, 0)
      // The backoff per SMS is capped at 60 s (±20 %): none waits longer than that for its next call.
      const now = yield* Clock.currentTimeMillis
      const nextCalls = yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ at: Date }>`SELECT match_next_at AS at FROM recon.shooter_sms WHERE status = 'approving'`
      })))
      assert.isTrue(nextCalls.every((row) => row.at.getTime() - now <= 72_000), "backoff within its cap")
      standIn!.setFate(() => "forward")
      yield* eventually("all approved", Effect.gen(function*() {
        yield* advance(5_000, 1000)
        return (yield* Effect.promise(() => smsStatuses(db))).approved === 50
      }), 60_000)
      const c = yield* Effect.promise(() => credits(db))
      assert.deepStrictEqual([c.ledgerRows, c.creditedTwice, c.wrongSms], [50, 0, 0])
    }), 120_000)

  it.effect("the loop's fiber interrupted while the wallet call is in flight: restarted, sent again, one credit, the answer `replayed` recorded", () =>
    Effect.gen(function*() {
      let standIn: Effect.Success<ReturnType<typeof walletStandIn>> | undefined
      const { db, kicks, runtime, registry } = yield* setUp("om-interrupt", {
        walletUrl: (url) => Effect.map(walletStandIn(url, (n) => n === 0 ? "hold" : "forward"), (s) => {
          standIn = s
          return s.url
        })
      })
      const player = yield* Effect.promise(() => addPlayer(db, "세종"))
      const deposit = yield* Effect.promise(() => addDeposit(db, player, "세종", "15000"))
      const sms = yield* Effect.promise(() => addParsedSms(db, "세종", "15000"))
      let forwarded = false
      standIn!.setOnForwarded(() => {
        forwarded = true
      })
      yield* kicks.kick("order_match_loop")
      // The wallet has credited; its answer is held: the worker is between approving and approved.
      yield* eventually("wallet credited", Effect.sync(() => forwarded))
      assert.strictEqual((yield* status(db, sms)).status, "approving")
      assert.strictEqual((yield* Effect.promise(() => walletState(db, deposit))).ledger.length, 1)
      const fiber = Option.getOrThrow(yield* runtime.supervisor.fiber("order_match_loop"))
      yield* Fiber.interrupt(fiber)
      assert.isFalse(yield* registry.ready)
      yield* advance(1_000, 100)
      yield* until("approved", async () => (await smsState(db, sms)).status === "approved")
      const state = yield* status(db, sms)
      assert.strictEqual(state.match.wallet.answer, "replayed")
      assert.strictEqual(state.match.decision, "approved")
      assert.strictEqual(state.match.wallet.attempts, 1)
      assert.strictEqual(standIn!.calls.length, 2)
      const wallet = yield* Effect.promise(() => walletState(db, deposit))
      assert.deepStrictEqual([wallet.ledger.length, Number(wallet.balance)], [1, 15000])
      yield* eventually("ready again", registry.ready)
    }), 30_000)
})

describe("wallet calls run beside the passes", () => {
  it.effect("the database away while wallet answers are recorded (the statement stuck, then its connection terminated): /health/ready 503 naming wallet_calls once stale, the answer recorded once the database is back, one credit", () =>
    Effect.gen(function*() {
      let standIn: Effect.Success<ReturnType<typeof walletStandIn>> | undefined
      const worker = yield* setUp("om-record-away", {
        walletUrl: (url) => Effect.map(walletStandIn(url, (n) => n === 0 ? "hold" : "forward"), (s) => {
          standIn = s
          return s.url
        })
      })
      const { db, kicks, registry } = worker
      const push = yield* servePush(worker)
      const player = yield* Effect.promise(() => addPlayer(db, "정약용"))
      const deposit = yield* Effect.promise(() => addDeposit(db, player, "정약용", "25000"))
      const sms = yield* Effect.promise(() => addParsedSms(db, "정약용", "25000"))
      let forwarded = false
      standIn!.setOnForwarded(() => {
        forwarded = true
      })
      yield* kicks.kick("order_match_loop")
      yield* eventually("wallet credited", Effect.sync(() => forwarded))
      // The database stops answering the worker: its recording statement waits (the SMS's row
      // locked by another session) and then loses its connection.
      const lock = yield* holdLock(db, (q) => q`SELECT id FROM recon.shooter_sms WHERE id = ${sms} FOR UPDATE`)
      // Released on any failure too, so the worker's teardown never waits on it.
      yield* Effect.addFinalizer(() => lock.release)
      standIn!.releaseHeld()
      const recording = () => query(db, (q) => q<{ pid: number }>`SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE recon.shooter_sms AS s SET%'`)
      yield* until("the recording waits on the database", async () => (await recording()).length > 0)
      const cut = yield* Effect.promise(async () => {
        const pids = (await recording()).map(({ pid }) => pid)
        for (const pid of pids) await query(db, (q) => q`SELECT pg_terminate_backend(${pid})`)
        return new Set(pids)
      })
      // Tried again (the database away) and waiting again, on another connection (a terminated
      // backend may still be listed while it exits), with readiness true while it is recent.
      yield* advance(1_000, 250)
      yield* until("the recording waits again", async () => (await recording()).some(({ pid }) => !cut.has(pid)))
      assert.strictEqual((yield* getReady(push)).http, 200)
      // Past wallet_calls' rule with the answer still not recorded: not ready, naming it.
      yield* advance(30_000)
      yield* eventually("not ready", Effect.map(registry.ready, (ready) => !ready))
      const down = yield* getReady(push)
      assert.strictEqual(down.http, 503)
      assert.strictEqual(down.body.ready, false)
      assert.deepInclude(down.body.components.wallet_calls, { state: "stale", waiting: true, stale_after_s: 30 })
      assert.strictEqual((yield* status(db, sms)).status, "approving")
      yield* sayFault(`wallet answers: ${down.http} ${JSON.stringify({ wallet_calls: down.body.components.wallet_calls, order_match_loop: down.body.loops.order_match_loop.state })}`)

      // The database back: recorded, ready again, credited once.
      yield* lock.release
      yield* Effect.gen(function*() {
        yield* advance(1_000, 250)
        return (yield* status(db, sms)).status === "approved" && (yield* registry.ready)
      }).pipe(Effect.repeat({ until: (done) => done, times: 40 }))
      assert.strictEqual((yield* status(db, sms)).status, "approved")
      const back = yield* getReady(push)
      assert.strictEqual(back.http, 200)
      assert.deepInclude(back.body.components.wallet_calls, { state: "running", waiting: false })
      yield* sayFault(`wallet answers, back: ${back.http} ${JSON.stringify({ wallet_calls: back.body.components.wallet_calls })}`)
      const wallet = yield* Effect.promise(() => walletState(db, deposit))
      assert.deepStrictEqual([wallet.status, wallet.ledger.length, Number(wallet.balance)], ["approved", 1, 25000])
    }), 60_000)

  it.effect("a held wallet call delays only its own SMS: the others are approved and recorded while it is held", () =>
    Effect.gen(function*() {
      let standIn: Effect.Success<ReturnType<typeof walletStandIn>> | undefined
      // The clock stands still: the held call never reaches the client's timeout.
      const { db, kicks } = yield* setUp("om-held", {
        walletUrl: (url) => Effect.map(walletStandIn(url, (n) => n === 0 ? "hold" : "forward"), (s) => {
          standIn = s
          return s.url
        })
      })
      yield* Effect.promise(() => addPlayersWithDeposits(db, "held", 30))
      yield* Effect.promise(() => addParsedSmsBatch(db, "held", 30))
      yield* kicks.kick("order_match_loop")
      const heldSms = () => standIn!.calls.filter((call) => call.fate === "hold").map((call) => call.smsId)
      yield* until("all but the held call's SMS approved", async () =>
        heldSms().length > 0 && (await smsStatuses(db)).approved === 30 - heldSms().length)
      // The first call carried its share of the 30 (spread over the free calls), no more.
      assert.isAtMost(heldSms().length, 30 / WALLET_CONCURRENCY + 1)
      assert.strictEqual(standIn!.held(), 1)
      for (const id of heldSms()) assert.strictEqual((yield* status(db, id)).status, "approving")
      // The wallet has credited all 30, the held ones included; their answer is still on the way.
      assert.strictEqual((yield* Effect.promise(() => credits(db))).ledgerRows, 30)

      standIn!.releaseHeld()
      yield* until("the held ones approved", async () => (await smsStatuses(db)).approved === 30)
      for (const id of heldSms()) {
        const state = yield* status(db, id)
        assert.deepStrictEqual([state.match.wallet.answer, state.match.wallet.attempts], ["approved", 1])
      }
      assert.strictEqual(standIn!.calls.length, 30)
    }), 30_000)

  it.effect("approving SMS due again are sent while new SMS keep the wallet calls busy: retries get their share of the calls", () =>
    Effect.gen(function*() {
      let standIn: Effect.Success<ReturnType<typeof walletStandIn>> | undefined
      const { db, kicks } = yield* setUp("om-fair", {
        walletUrl: (url) => Effect.map(walletStandIn(url), (s) => {
          standIn = s
          return s.url
        })
      })
      // 20 SMS sent once already (the wallet was unavailable), their backoff over; 1,000 new ones
      // waiting. One transaction: no pass sees the one without the other.
      const retryDeposits = yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO recon.player (name) SELECT k || '-' || g FROM generate_series(1, 1000) AS g, unnest(ARRAY['retry', 'new']) AS k
            WHERE k = 'new' OR g <= 20`
          yield* sql`INSERT INTO recon.deposit (player_id, from_bank_owner, amount) SELECT id, name, 10000 FROM recon.player`
          yield* sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount)
            SELECT 'phone-1', '15881688', name, name, now(), 'parsed', 'KB', name, 10000 FROM recon.player`
          yield* sql`UPDATE recon.shooter_sms AS s SET status = 'approving', deposit_id = d.id
            FROM recon.deposit AS d WHERE d.from_bank_owner = s.payer_name AND s.payer_name LIKE 'retry-%'`
          yield* sql`UPDATE recon.shooter_sms SET match_attempts = 1 WHERE payer_name LIKE 'retry-%'`
          const rows = yield* sql<{ id: bigint }>`SELECT id FROM recon.deposit WHERE from_bank_owner LIKE 'retry-%'`
          return rows.map((row) => Number(row.id))
        }))
      })))
      yield* kicks.kick("order_match_loop")
      yield* until("all approved", async () => (await smsStatuses(db)).approved === 1020, 60_000)

      const retryCalls = standIn!.calls.flatMap((call, i) => retryDeposits.includes(call.depositId) ? [i] : [])
      assert.strictEqual(retryCalls.length, 20)
      // All among the first pass's calls, not after the 1,000 new SMS.
      assert.isBelow(Math.max(...retryCalls), 128, `retries at call ${retryCalls.join(", ")}`)
      const c = yield* Effect.promise(() => credits(db))
      assert.deepStrictEqual([c.ledgerRows, c.creditedTwice, c.wrongSms], [1020, 0, 0])
    }), 90_000)
})

describe("a stuck wallet call", () => {
  it.effect("a call running far past its own timeout (a broken client) ends the loop's fiber, for the supervisor to restart it with readiness false, and its lease is given back", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("om-stuck"))
      const player = yield* Effect.promise(() => addPlayer(db, "이황"))
      const deposit = yield* Effect.promise(() => addDeposit(db, player, "이황", "33000"))
      const sms = yield* Effect.promise(() => addParsedSms(db, "이황", "33000"))
      let calls = 0
      // A client that never answers and never times out: what a broken one would do.
      const stuck = Layer.succeed(WalletClient, WalletClient.of({
        agree: () => Effect.never,
        agreeBatch: () => Effect.andThen(Effect.sync(() => void calls++), Effect.never)
      }))
      const services = Layer.mergeAll(
        loopServices(db, workerSettings("/tmp/recon-om-stuck.heartbeat")),
        stuck,
        AdminClient.layer({ baseUrl: "http://127.0.0.1:9", token: undefined }).pipe(Layer.provide(FetchHttpClient.layer))
      )
      const loop = yield* Effect.forkChild(Effect.scoped(Effect.gen(function*() {
        const pass = yield* OrderMatchLoop.start
        yield* pass
        return yield* Effect.never
      })).pipe(Effect.provide(services)))
      yield* eventually("the call made", Effect.sync(() => calls === 1))
      // The client's own timeout (5 s) and the grace (10 s) pass: still running.
      yield* advance(14_000)
      assert.isUndefined(loop.pollUnsafe())
      yield* advance(3_000)
      const exit = yield* Fiber.await(loop)
      assert.isTrue(Exit.hasInterrupts(exit))
      // Left as it was, due again at once for the restarted loop (or another worker).
      const state = yield* status(db, sms)
      assert.deepStrictEqual([state.status, state.depositId], ["approving", deposit])
      const [lease] = yield* Effect.promise(() => runSql(db, Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ next_at: Date | null }>`SELECT match_next_at AS next_at FROM recon.shooter_sms WHERE id = ${sms}`
      })))
      assert.isNull(lease!.next_at)
    }), 30_000)
})

describe("a hung pass", () => {
  it.effect("a pass stalled on the database past the 90 s TTL is interrupted, the loop restarted, readiness false until it succeeds again", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("om-hung"))
      // Every loop of the worker: readiness is the worker's, not one loop's.
      const { registry, runtime, kicks } = yield* buildWorker(db, heartbeatPath(), {
        backoff: Schedule.spaced("20 millis"),
        settings: { callerToken: Redacted.make(RECON_TOKEN) }
      })
      yield* eventually("ready", registry.ready)
      const loop = Effect.map(registry.snapshot, (s) => s.loops.find((l) => l.name === "order_match_loop")!)
      const before = Option.getOrThrow(yield* runtime.supervisor.fiber("order_match_loop"))

      // Another session holds recon.deposit exclusively until released: the pass's query waits.
      const lock = yield* holdTableLock(db, "recon.deposit")
      const sms = yield* Effect.promise(() => addParsedSms(db, "정약용", "25000"))
      yield* kicks.kick("order_match_loop")
      yield* realWait(200)
      assert.strictEqual((yield* status(db, sms)).status, "parsed")

      // Time passes; every other loop keeps passing, this pass stays stuck until the TTL.
      yield* advance(89_000)
      assert.isTrue(Option.isSome(yield* runtime.supervisor.fiber("order_match_loop")))
      assert.strictEqual((yield* loop).restarts, 0)
      yield* advance(2_000)
      // The interrupted query ends when PostgreSQL has cancelled it (real I/O), and only then does the
      // supervisor's backoff start on the test clock: keep the clock moving in small steps meanwhile.
      yield* eventually("the hung loop restarted", TestClock.adjust("20 millis").pipe(Effect.andThen(Effect.map(loop, (l) => l.restarts === 1))))
      assert.isFalse(yield* registry.ready)
      const after = Option.getOrThrow(yield* runtime.supervisor.fiber("order_match_loop"))
      assert.notStrictEqual(after, before)
      assert.isTrue((yield* registry.snapshot).loops.filter((l) => l.name !== "order_match_loop").every((l) => l.fresh))

      // The database answers again: the restarted loop's pass succeeds and readiness returns.
      yield* lock.release
      yield* eventually("ready again", registry.ready)
      assert.strictEqual((yield* loop).state, "running")
      yield* until("the SMS decided", async () => (await smsState(db, sms)).status === "unmatched")
    }), 60_000)
})

describe("the admin_service syncer", () => {
  it.live("dying ends the loop's fiber, for the supervisor to restart it with readiness false meanwhile, rather than syncs stopping unseen", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("om-syncer"))
      const player = yield* Effect.promise(() => addPlayer(db, "허준"))
      yield* Effect.promise(() => addDeposit(db, player, "허준", "10000"))
      yield* Effect.promise(() => addDeposit(db, player, "허준", "10000"))
      const sms = yield* Effect.promise(() => addParsedSms(db, "허준", "10000"))
      const syncs: Array<string> = []
      // A defect inside the syncer's call: the syncer fiber dies with it.
      const dyingAdmin = Layer.succeed(AdminClient, AdminClient.of({ sync: Effect.suspend(() => {
        syncs.push("sync")
        return Effect.die(new Error("admin client broke"))
      }) }))
      const services = Layer.mergeAll(
        loopServices(db, workerSettings("/tmp/recon-om-syncer.heartbeat")),
        dyingAdmin,
        WalletClient.layer({ baseUrl: "http://127.0.0.1:9", token: undefined }).pipe(Layer.provide(FetchHttpClient.layer))
      )
      const loop = yield* Effect.forkChild(Effect.scoped(Effect.gen(function*() {
        const pass = yield* OrderMatchLoop.start
        // The review asks for a sync; the loop then waits for its next pass, as an actor does.
        yield* pass
        return yield* Effect.never
      })).pipe(Effect.provide(services)))
      const exit = yield* Fiber.await(loop)
      assert.isTrue(Exit.hasInterrupts(exit))
      assert.deepStrictEqual(syncs, ["sync"])
      // The pass itself was done: the review stands.
      assert.strictEqual((yield* status(db, sms)).status, "manual_review")
    }), 30_000)
})
