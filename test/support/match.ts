// Matching tests: players, pending deposits and parsed SMS arranged in the tables; what an SMS and
// the wallet hold afterwards; and a stand-in in front of the real wallet_service that fails,
// delays or drops calls on purpose (same wire format: it forwards the real request).
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { runSql } from "./database.ts"
import { callLog, json, serveLoopback } from "./fakeServer.ts"

const query = <A>(db: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  runSql(db, Effect.gen(function*() {
    return yield* f(yield* SqlClient.SqlClient)
  }).pipe(Effect.orDie))

export const addPlayer = (db: string, name: string): Promise<number> =>
  query(db, (sql) => sql<{ id: bigint }>`INSERT INTO recon.player (name) VALUES (${name}) RETURNING id`.pipe(
    Effect.map((rows) => Number(rows[0]!.id))
  ))

export const addDeposit = (db: string, playerId: number, owner: string, amount: string): Promise<number> =>
  query(db, (sql) => sql<{ id: bigint }>`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
    VALUES (${playerId}, ${owner}, ${amount}::numeric) RETURNING id`.pipe(Effect.map((rows) => Number(rows[0]!.id))))

/** `count` players named `prefix-i`, each with one pending deposit of `amount` from that name; answers the deposit ids. */
export const addPlayersWithDeposits = (db: string, prefix: string, count: number, amount = "10000"): Promise<ReadonlyArray<number>> =>
  query(db, (sql) => Effect.gen(function*() {
    yield* sql`INSERT INTO recon.player (name) SELECT ${prefix} || '-' || g FROM generate_series(1, ${count}) AS g`
    const rows = yield* sql<{ id: bigint }>`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
      SELECT p.id, p.name, ${amount}::numeric FROM recon.player AS p WHERE p.name LIKE ${`${prefix}-%`} ORDER BY p.id
      RETURNING id`
    return rows.map((row) => Number(row.id))
  }))

/** An SMS as parse_loop leaves it: `parsed`, with payer name and amount. */
export const addParsedSms = (db: string, payer: string, amount: string, status = "parsed"): Promise<number> =>
  query(db, (sql) => sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
      (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount)
    VALUES ('phone-1', '15881688', ${`${payer} ${amount}`}, ${`${payer}${amount}${Math.random()}`}, now(), ${status}, 'KB', ${payer}, ${amount}::numeric)
    RETURNING id`.pipe(Effect.map((rows) => Number(rows[0]!.id))))

/** `count` parsed SMS from the payers `prefix-i` of `amount`. */
export const addParsedSmsBatch = (db: string, prefix: string, count: number, amount = "10000"): Promise<void> =>
  query(db, (sql) => Effect.asVoid(sql`INSERT INTO recon.shooter_sms
      (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount)
    SELECT 'phone-1', '15881688', ${prefix} || '-' || g || ' ' || ${amount}, ${prefix} || g || ${amount}, now(), 'parsed', 'KB',
      ${prefix} || '-' || g, ${amount}::numeric
    FROM generate_series(1, ${count}) AS g`))

export interface SmsState {
  readonly status: string
  readonly depositId: number | null
  readonly match: any
  readonly attempts: number
}

export const smsState = (db: string, id: number): Promise<SmsState> =>
  query(db, (sql) => sql<{ status: string; deposit_id: bigint | null; match_detail: unknown; match_attempts: number }>`
    SELECT status, deposit_id, match_detail, match_attempts FROM recon.shooter_sms WHERE id = ${id}`.pipe(
    Effect.map(([row]) => ({
      status: row!.status,
      depositId: row!.deposit_id === null ? null : Number(row!.deposit_id),
      match: row!.match_detail,
      attempts: Number(row!.match_attempts)
    }))
  ))

/** SMS counts by status. */
export const smsStatuses = (db: string): Promise<Record<string, number>> =>
  query(db, (sql) => sql<{ status: string; n: bigint }>`SELECT status, count(*) AS n FROM recon.shooter_sms GROUP BY status`.pipe(
    Effect.map((rows) => Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])))
  ))

export interface Credits {
  /** Ledger rows per deposit that has any. */
  readonly ledgerRows: number
  readonly depositsCredited: number
  /** Deposits with more than one ledger row (must stay 0: the unique key forbids it). */
  readonly creditedTwice: number
  readonly approvedDeposits: number
  /** Approved deposits whose sms_id is not the SMS approved against them. */
  readonly wrongSms: number
  readonly balanceTotal: string
  readonly ledgerTotal: string
}

export const credits = (db: string): Promise<Credits> =>
  query(db, (sql) => sql<Record<string, string>>`SELECT
      (SELECT count(*) FROM wallet.ledger)::text AS ledger_rows,
      (SELECT count(DISTINCT deposit_id) FROM wallet.ledger)::text AS deposits_credited,
      (SELECT count(*) FROM (SELECT deposit_id FROM wallet.ledger GROUP BY deposit_id HAVING count(*) > 1) AS t)::text AS credited_twice,
      (SELECT count(*) FROM recon.deposit WHERE status = 'approved')::text AS approved_deposits,
      (SELECT count(*) FROM recon.deposit AS d WHERE d.status = 'approved' AND NOT EXISTS (
        SELECT 1 FROM recon.shooter_sms AS s WHERE s.id = d.sms_id AND s.deposit_id = d.id))::text AS wrong_sms,
      (SELECT COALESCE(sum(balance), 0)::text FROM wallet.balance) AS balance_total,
      (SELECT COALESCE(sum(amount), 0)::text FROM wallet.ledger) AS ledger_total`.pipe(
    Effect.map(([r]) => ({
      ledgerRows: Number(r!.ledger_rows),
      depositsCredited: Number(r!.deposits_credited),
      creditedTwice: Number(r!.credited_twice),
      approvedDeposits: Number(r!.approved_deposits),
      wrongSms: Number(r!.wrong_sms),
      balanceTotal: r!.balance_total!,
      ledgerTotal: r!.ledger_total!
    }))
  ))

/** What the stand-in does with the next call. */
export type Fate =
  | "forward"
  /** 503 without forwarding: the wallet never saw it. */
  | "fail-before"
  /** Forwarded (the wallet decided), then answered 502: the caller cannot know. */
  | "fail-after"
  /** Forwarded, then the answer is held until released (past the caller's timeout). */
  | "hold"
  /** 503, the wallet being down. */
  | "down"

export interface WalletCall {
  readonly depositId: number
  readonly smsId: number
  readonly fate: Fate
}

/**
 * A stand-in for wallet_service in front of the real one: each request's fate comes from `fateOf`
 * (by request number), and `calls` has one entry per SMS it carried (agree: one; agree_batch: each
 * item); held answers wait for `releaseHeld` (or the end of the test's scope).
 */
export const walletStandIn = (target: string, initial: (n: number) => Fate = () => "forward") =>
  Effect.gen(function*() {
    const log = callLog<WalletCall>()
    let fateOf = initial
    let held: Array<{ readonly send: () => void; readonly open: () => boolean }> = []
    // Called with each forwarded call's answer from the real wallet, before the stand-in answers.
    let onForwarded: (call: WalletCall, body: unknown) => void = () => {}
    let requests = 0
    const url = yield* serveLoopback((req, res, body) => {
      const n = requests++
      type Item = { deposit_id?: number; sms_id?: number }
      let parsed: Item & { items?: Array<Item> } = {}
      try {
        parsed = JSON.parse(body)
      } catch {
        // forwarded as it is
      }
      const fate = fateOf(n)
      const carried = (parsed.items ?? [parsed]).map((item) => ({ depositId: item.deposit_id ?? 0, smsId: item.sms_id ?? 0, fate }))
      for (const one of carried) log.record(one)
      const call = carried[0]!
      if (fate === "fail-before" || fate === "down") return json(res, 503, { status: 503, msg: "unavailable", data: null })
      void fetch(`${target}${req.url}`, {
        method: req.method ?? "POST",
        headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => ["content-type", "x-internal-service-token"].includes(k))) as Record<string, string>,
        body
      }).then(async (answer) => {
        const text = await answer.text()
        let answerBody: unknown = text
        try {
          answerBody = JSON.parse(text)
        } catch {
          // not JSON
        }
        onForwarded(call, answerBody)
        if (fate === "fail-after") return json(res, 502, { status: 502, msg: "bad_gateway", data: null })
        const send = () => res.writeHead(answer.status, { "content-type": "application/json" }).end(text)
        if (fate === "hold") {
          // Whether the caller still waits for this answer (it has not given up and closed the connection).
          let open = true
          res.on("close", () => (open = false))
          held.push({ send, open: () => open && !res.writableEnded })
        } else send()
      }, () => json(res, 502, { status: 502, msg: "bad_gateway", data: null }))
    })
    return {
      url,
      calls: log.calls,
      arrived: log.arrived,
      setFate: (f: (n: number) => Fate) => {
        fateOf = f
      },
      setOnForwarded: (f: (call: WalletCall, body: unknown) => void) => {
        onForwarded = f
      },
      held: () => held.length,
      /** Held answers whose caller is still waiting for them. */
      heldOpen: () => held.filter((h) => h.open()).length,
      releaseHeld: () => {
        const waiting = held
        held = []
        for (const { send } of waiting) {
          try {
            send()
          } catch {
            // the caller gave up and closed the connection
          }
        }
      }
    }
  })
