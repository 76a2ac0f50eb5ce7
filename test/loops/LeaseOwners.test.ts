// A lease names its owner (issue 32, migration 0025): a number its process holds a session advisory
// lock on (MatchStore.ownerSession). A pass takes over at once the leases of an owner whose session
// is gone; never those of a live owner, nor the caller's own earlier owners (their calls may still
// be running here), nor an earlier release's (no owner: they run out as before). A caller whose own
// session is gone leases nothing until it takes a new owner.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { type Decided, MatchStore } from "../../src/loops/MatchStore.ts"
import { type AgreeOutcome, statusAfter, walletAnswer } from "../../src/domain/Matching.ts"
import { createMigratedDatabase, layerFor } from "../support/database.ts"
import { addParsedSms, addPlayersWithDeposits } from "../support/match.ts"

/** A lease owner's session in a scope of its own (closed with the test's at the latest), ended by `end` (the process dies, or its connection is lost). */
const owner = (store: MatchStore["Service"]) =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(yield* Effect.scope)
    const { owner } = yield* Scope.provide(store.ownerSession(), scope)
    return { owner, end: Scope.close(scope, Exit.void) }
  })

describe("lease owners", () => {
  it.live("a dead owner's leases are taken over at the next pass; a live owner's, the caller's earlier owners' and an earlier release's wait for their time; a lease taken over is not given back or put off by its former owner", () =>
    Effect.gen(function*() {
      const db = yield* Effect.promise(() => createMigratedDatabase("lease_owners"))
      const deposits = yield* Effect.promise(() => addPlayersWithDeposits(db, "lease", 4))
      const sms: Array<number> = []
      for (let i = 0; i < 4; i++) sms.push(yield* Effect.promise(() => addParsedSms(db, `other-${i}`, "10000", "approving")))
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* MatchStore
        const live = yield* owner(store)
        const dead = yield* owner(store)
        yield* dead.end
        const earlier = yield* owner(store)
        yield* earlier.end
        const current = yield* owner(store)
        // Leased an hour ahead: to the live owner, the dead one, the caller's earlier owner, and no owner.
        const leases = [live.owner, dead.owner, earlier.owner, null]
        for (let i = 0; i < 4; i++) {
          yield* sql`UPDATE recon.shooter_sms SET deposit_id = ${deposits[i]!}, match_next_at = now() + interval '1 hour',
            match_owner = ${leases[i]} WHERE id = ${sms[i]!}`
        }
        const owners = () => sql<{ id: bigint; owner: number | null }>`
          SELECT id, match_owner AS owner FROM recon.shooter_sms WHERE id IN ${sql.in(sms)} ORDER BY id`.pipe(
          Effect.map((rows) => rows.map((row) => row.owner))
        )
        const pass = (mine: ReadonlyArray<number>) =>
          Effect.flatMap(Effect.sync(() => Date.now()), (now) => store.decide(now, now + 8_000, 10, 10, mine))
        const dueIds = (decided: Decided | "owner_lost") => decided === "owner_lost" ? decided : decided.due.map((d) => d.id)

        assert.deepStrictEqual(dueIds(yield* pass([current.owner, earlier.owner])), [sms[1]])
        assert.deepStrictEqual(yield* owners(), [live.owner, current.owner, earlier.owner, null])

        // The live owner's process dies: its lease goes at the next pass.
        yield* live.end
        assert.deepStrictEqual(dueIds(yield* pass([current.owner, earlier.owner])), [sms[0]])
        assert.deepStrictEqual(yield* owners(), [current.owner, current.owner, earlier.owner, null])

        // The caller's own session lost: nothing leased, nothing decided, until it takes a new owner.
        yield* current.end
        assert.strictEqual(yield* pass([current.owner]), "owner_lost")
        assert.deepStrictEqual(yield* owners(), [current.owner, current.owner, earlier.owner, null])

        // A process of the earlier release (the old signature, no owner) takes over dead owners' leases too.
        const [old] = yield* sql<{ pass: { due: ReadonlyArray<ReadonlyArray<number>> } }>`
          SELECT recon.match_pass(now(), now() + interval '8 seconds', 10, 10, interval '24 hours') AS pass`
        assert.deepStrictEqual(old!.pass.due.map(([id]) => Number(id)), [sms[0], sms[1], sms[2]])
        assert.deepStrictEqual(yield* owners(), [null, null, null, null])

        // A lease given back, or answered, names no owner; but a process whose lease was taken
        // over since neither gives it back nor writes its "try again" over the new owner's lease.
        const next = yield* owner(store)
        yield* sql`UPDATE recon.shooter_sms SET match_next_at = NULL WHERE id = ${sms[3]!}`
        const leased = yield* pass([next.owner])
        assert.deepStrictEqual(dueIds(leased), [sms[3]])
        assert.deepStrictEqual(yield* owners(), [null, null, null, next.owner])
        const due = (leased as Decided).due[0]!
        const answer = (owner: number, outcome: AgreeOutcome) => ({
          id: due.id,
          depositId: due.depositId,
          owner,
          status: statusAfter(outcome),
          wallet: walletAnswer(outcome, due.depositId, 1, new Date().toISOString()),
          nextAt: statusAfter(outcome) === "approving" ? new Date(Date.now() + 1_000) : null,
          reason: undefined
        })
        const unavailable: AgreeOutcome = { _tag: "Unavailable", reason: "wallet_service answered 503" }
        yield* store.release([{ ...due, owner: earlier.owner }])
        yield* store.record([answer(earlier.owner, unavailable)])
        const [held] = yield* sql<{ owner: number; attempts: number; leased: boolean }>`
          SELECT match_owner AS owner, match_attempts AS attempts, match_next_at > now() + interval '5 seconds' AS leased
          FROM recon.shooter_sms WHERE id = ${due.id}`
        assert.deepStrictEqual(held, { owner: next.owner, attempts: 0, leased: true })
        yield* store.record([answer(next.owner, unavailable)])
        assert.deepStrictEqual(yield* owners(), [null, null, null, null])
        // A final answer stands, whoever's call it was.
        yield* store.record([answer(earlier.owner, { _tag: "Approved", depositId: due.depositId })])
        const [approved] = yield* sql<{ status: string }>`SELECT status FROM recon.shooter_sms WHERE id = ${due.id}`
        assert.strictEqual(approved!.status, "approved")
        // Given back under its own lease: due at once.
        const again = yield* owner(store)
        yield* sql`UPDATE recon.shooter_sms SET match_next_at = NULL WHERE id = ${sms[2]!}`
        const passed = yield* pass([again.owner])
        const [mine] = (passed as Decided).due.filter((d) => d.id === sms[2])
        assert.deepStrictEqual(yield* owners(), [null, null, again.owner, null])
        yield* store.release([mine!])
        assert.deepStrictEqual(yield* owners(), [null, null, null, null])
        yield* again.end
        yield* next.end
      }).pipe(Effect.scoped, Effect.provide(MatchStore.layer.pipe(Layer.provideMerge(layerFor(db)))))
    }), 60_000)
})
