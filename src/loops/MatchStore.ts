// The queries of order_match_loop: a pass's whole decision in one statement (recon.match_pass,
// src/db/sql/match_pass.sql: parsed SMS and the unmatched ones a new deposit may fund claimed with SKIP
// LOCKED and decided under the locks of their names, approving SMS leased for a wallet call), and
// the wallet's answers recorded in small groups as they arrive. No transaction is ever open across
// a call to another service. A lease names its owner: a number this process holds a session
// advisory lock on while it lives, so that another process takes over at once the leases of one
// that died (src/db/sql/lease_due_sms.sql).
import { Context, Effect, Layer, Random, Schema, type Scope } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import type { WalletAnswer } from "../domain/Matching.ts"
import { countMatchDecisions } from "../observability/Metrics.ts"
import { reportSmsChanges } from "../observability/SmsChanges.ts"
import { DbId } from "../domain/PgValues.ts"
import { sqlFailures } from "../db/Codecs.ts"
import { sourceText } from "../db/SourceText.ts"

/** How long from its first parse an SMS without a candidate is tried again when a deposit appears. */
export const UNMATCHED_WINDOW = "24 hours"

/** An approving SMS leased to this process for a wallet call until `leaseUntil` (ms since the epoch). */
export interface Due {
  readonly id: number
  readonly depositId: number
  /** Wallet calls made for it so far. */
  readonly attempts: number
  readonly leaseUntil: number
  /** The owner the lease names (this process's owner when it leased it). */
  readonly owner: number | undefined
}

const RECORDED = sourceText(import.meta.url, "./MatchStore.recorded.sql")
/** The owner's lock, (this key, owner): the key recon.lease_due_sms and recon.match_pass try. */
const OWNER_LOCK = "hashtext('recon.match_owner'), $1"
const Leased = Schema.Tuple([DbId, DbId, Schema.Int])
const MatchDecision = Schema.Literals(["approving", "manual_review", "unmatched"])
const LostRow = Schema.Struct({ owner_lost: Schema.Literal(true) })
const PassRow = Schema.Struct({
  due: Schema.Array(Leased),
  decided: Schema.Array(Schema.Tuple([DbId, MatchDecision])),
  approving: Schema.Array(Leased),
  reviews: Schema.Int,
  unmatched_changed: Schema.Int,
  claimed: Schema.Int,
  more: Schema.Boolean,
  next_due_ms: Schema.NullOr(Schema.Number)
})

export interface Decided {
  /** Approving SMS due again (a retry, a lease run out, a person's approval), leased to this process. */
  readonly due: ReadonlyArray<Due>
  /** SMS approved by this pass, leased to this process: send them to the wallet. */
  readonly approving: ReadonlyArray<Due>
  readonly reviews: number
  /** SMS newly unmatched, or unmatched ones that now went elsewhere (the counter moved). */
  readonly unmatchedChanged: number
  /** SMS decided. */
  readonly claimed: number
  /** The pass took all it was allowed: more may be waiting. */
  readonly more: boolean
  /** When the next approving SMS falls due (ms since the epoch), if any waits. */
  readonly nextDueAt: number | undefined
}

/**
 * The session of a lease owner: a connection reserved until its scope closes, holding the session
 * advisory lock (hashtext('recon.match_owner'), owner). While it holds, no other process takes over
 * this owner's leases before they run out; once the process dies or the connection is lost, the
 * lock is free and any other process takes them over at its next pass.
 */
export interface OwnerSession {
  readonly owner: number
}

export interface Outcome {
  readonly id: number
  readonly depositId: number
  /** The owner of the lease the call was made under: a retry is recorded only while that lease stands. */
  readonly owner: number | undefined
  readonly status: "approved" | "manual_review" | "approving"
  readonly wallet: WalletAnswer
  /** For `approving`: when to send again. */
  readonly nextAt: Date | null
  readonly reason: string | undefined
}

export class MatchStore extends Context.Service<MatchStore, {
  /**
   * One pass (recon.match_pass): SMS decided (at most `batch`) and approving SMS leased until
   * `leaseUntil`, at most `room` wallet calls in all; approvals are committed with their deposit
   * and lease before any call. The leases name the first of `owners` (this process's current
   * owner, then those it held before); `owner_lost` (nothing decided) when no session holds the
   * current one's lock any more: take a new owner first.
   */
  decide(now: number, leaseUntil: number, room: number, batch: number, owners: ReadonlyArray<number>): Effect.Effect<Decided | "owner_lost", SqlError.SqlError>
  /**
   * Gives leases back (calls not made or cut off): due again at once. A lease another process has
   * taken over since (its owner is not the one leased under) is left alone.
   */
  release(leases: ReadonlyArray<Due>): Effect.Effect<void, SqlError.SqlError>
  /**
   * The wallet's answers, in one statement; an SMS changed meanwhile (not approving that deposit) is
   * left alone, and so is a retry (approving again) of an SMS whose lease another process has taken
   * over since: its call is in flight. `match.decision` then says what happened last: `approved`, or
   * `manual_review` and why.
   */
  record(outcomes: ReadonlyArray<Outcome>): Effect.Effect<void, SqlError.SqlError>
  /** A new lease owner: a number no live session holds, locked on a connection reserved until the scope closes. */
  ownerSession(): Effect.Effect<OwnerSession, SqlError.SqlError, Scope.Scope>
}>()("recon/loops/MatchStore") {
  static readonly layer = Layer.effect(MatchStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findPass = SqlSchema.findOne({
      Request: Schema.Struct({ now: Schema.String, leaseUntil: Schema.String, room: Schema.Int, batch: Schema.Int, owners: Schema.String }),
      Result: Schema.Struct({ pass: Schema.Union([LostRow, PassRow]) }),
      execute: ({ batch, leaseUntil, now, owners, room }) =>
        sql`SELECT recon.match_pass(${now}::timestamptz,
          ${leaseUntil}::timestamptz, ${room}, ${batch}, ${UNMATCHED_WINDOW}::interval, ${owners}::integer[]) AS pass`
    })
    const recorded = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: DbId, status: Schema.Literals(["approved", "manual_review", "approving"]) }),
      execute: (outcomes) => sql.unsafe(RECORDED, [outcomes])
    })

    const decide = Effect.fn("MatchStore.decide")(function*(now: number, leaseUntil: number, room: number, batch: number, owners: ReadonlyArray<number>) {
      const { pass } = yield* sqlFailures(findPass({
        now: new Date(now).toISOString(),
        leaseUntil: new Date(leaseUntil).toISOString(),
        room,
        batch,
        owners: `{${owners.join(",")}}`
      }))
      if ("owner_lost" in pass) return "owner_lost" as const
      const leased = (rows: typeof pass.due) => rows.map(([id, depositId, attempts]): Due => ({ id, depositId, attempts, leaseUntil, owner: owners[0] }))
      yield* countMatchDecisions(pass.decided.map(([, decision]) => decision))
      yield* reportSmsChanges(sql, pass.decided.map(([id, status]) => ({ id, status })))
      return {
        due: leased(pass.due),
        approving: leased(pass.approving),
        reviews: pass.reviews,
        unmatchedChanged: pass.unmatched_changed,
        claimed: pass.claimed,
        more: pass.more,
        nextDueAt: pass.next_due_ms ?? undefined
      }
    })

    const release = Effect.fn("MatchStore.release")(function*(leases: ReadonlyArray<Due>) {
      if (leases.length === 0) return
      yield* sql`
        UPDATE recon.shooter_sms AS s SET match_next_at = NULL, match_owner = NULL
        FROM jsonb_to_recordset(${JSON.stringify(leases.map((l) => ({ id: l.id, owner: l.owner ?? null })))}::jsonb) AS x(id bigint, owner integer)
        WHERE s.id = x.id AND s.status = 'approving' AND s.match_owner IS NOT DISTINCT FROM x.owner`
    })

    const record = Effect.fn("MatchStore.record")(function*(outcomes: ReadonlyArray<Outcome>) {
      if (outcomes.length === 0) return
      const rows = yield* sqlFailures(recorded(JSON.stringify(outcomes.map((o) => ({
        id: o.id,
        deposit_id: o.depositId,
        owner: o.owner ?? null,
        status: o.status,
        attempts: o.wallet.attempts,
        next_at: o.nextAt?.toISOString() ?? null,
        wallet: o.wallet,
        reason: o.reason ?? null
      })))))
      yield* reportSmsChanges(sql, rows.flatMap((row) => row.status === "approving" ? [] : [{ id: row.id, status: row.status }]))
    })

    const ownerSession = Effect.fn("MatchStore.ownerSession")(function*() {
      const connection = yield* sql.reserve
      // A number no live session holds (a clash, one in two billion, draws again).
      for (;;) {
        const owner = yield* Random.nextIntBetween(1, 2_147_483_647)
        const locked = yield* Effect.acquireRelease(
          connection.execute(`SELECT pg_try_advisory_lock(${OWNER_LOCK}) AS locked`, [owner], undefined).pipe(
            Effect.map((rows) => rows[0]?.locked === true)
          ),
          // The connection goes back to the pool: it must not take the lock with it (a connection
          // lost has lost it already).
          (locked) =>
            locked
              ? connection.execute(`SELECT pg_advisory_unlock(${OWNER_LOCK})`, [owner], undefined).pipe(
                Effect.timeout("2 seconds"),
                Effect.ignore
              )
              : Effect.void
        )
        if (locked) return { owner }
      }
    })

    return MatchStore.of({ decide, release, record, ownerSession })
  }))
}
