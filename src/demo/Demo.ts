// `all --demo` (DESIGN section 2): the services on their own embedded database (./.data/demo),
// with demo players (two of them share a name) and pending deposits, a demo operator, two trusted
// demo phones with whitelisted bank senders, and a simulated phone that posts one realistic bank
// SMS a second through the real signed webhook, for as long as it runs: what waits for the
// operator stays bounded (DEMO_LIMITS), deposits nobody paid expire, near-miss payers leave
// suggestions, and now and then an SMS is withheld (a gap in its account's balances) until the
// second phone's gateway re-sends it. With DEMO_WEBHOOK_URL the signed events go to a receiver.
// Nothing here approves anything: the worker's loops and the wallet do that, exactly as for a
// real phone.
import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import * as Supervisor from "../actors/Supervisor.ts"
import { SqlClient } from "effect/sql"
import { randomBytes, randomUUID } from "node:crypto"
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { hashPassword } from "../domain/Passwords.ts"
import { DEMO_SMS_EVERY_MS, type DemoSettings } from "./Settings.ts"
import { DEMO_DATA_DIR } from "../db/Database.ts"
import { make as depositExpiry } from "../db/DepositExpiry.ts"
import { CHANGES_CHANNEL } from "../db/Sms.ts"
import { WebhookStore } from "../db/WebhookStore.ts"
import { normalizePhone } from "../domain/Phone.ts"
import { signSmsGateway } from "../domain/PushSignatures.ts"
import { forwarderClock, smsForwarderFormBody } from "../domain/SmsForwarder.ts"
import { formatForwarderContent } from "../domain/SmsText.ts"
import { EVENT_TYPES } from "../domain/Records.ts"
import {
  type Account,
  ACCOUNTS,
  accountSender,
  accountShown,
  balanceShown,
  type Bank,
  banks,
  COMPANY,
  depositSms,
  grouped,
  Ledger,
  NEAR_MISSES,
  nearMiss,
  seoulDateTime,
  unknownSender,
  unknownSenderSms,
  unreadableSms,
  unreadBank,
  withdrawalSms
} from "./BankSms.ts"

export const DEMO_OPERATOR = "demo"
/** Where the demo keeps its sign-in line (mode 0600), beside its database. */
export const SIGN_IN_FILE = ".data/demo-signin.txt"
/** The sign-in line is said again after the start-up logs, then now and then. */
const SAY_AGAIN_AFTER = "5 seconds"
const SAY_AGAIN_EVERY = "5 minutes"
/** The phone that forwards every bank SMS (SmsForwarder), and a second one on the same account (SMS Gateway). */
export const PHONE = "demo-phone-1"
export const SECOND_PHONE = "demo-phone-2"

/** Two players share this name: a deposit under it is never approved without a person. */
export const SHARED_NAME = "김민준"
const PLAYERS = ["이서연", "박지호", "최윤서", "정도현", "강하은", "조민재", "윤서아", "장예준", "임지유", "한시우"]
/** Senders of money no player asked to deposit. */
const STRANGERS = ["홍길동", "서지훈", "배수빈", "오태양"]
const PAYEES = ["쿠팡", "GS25역삼점", "스타벅스", "카카오택시"]
const AMOUNTS = [10_000, 20_000, 30_000, 50_000, 70_000, 100_000, 150_000, 200_000, 300_000, 500_000]

/**
 * What the simulated phone does on each tick, in turn: mostly deposits that match; now and then a
 * name two players share, a payer who missed the name or amount (a suggestion), money nobody
 * asked for, a withdrawal, the same SMS again, a layout no template reads (parse_failed) and a
 * sender nobody whitelisted (need_check).
 */
const SCRIPT = [
  "match", "match", "collision", "near_miss", "match", "unmatched", "match", "withdrawal", "match", "duplicate",
  "match", "unreadable", "match", "near_miss", "withdrawal", "match", "unknown_sender", "match", "duplicate", "match"
] as const
type Step = (typeof SCRIPT)[number]

/**
 * What may wait for the operator at once: past these the phone sends a matching deposit instead,
 * so an unattended demo stays as it would in life (a few items waiting, none piling up).
 */
export const DEMO_LIMITS = {
  manual_review: 3,
  /** Unmatched SMS: near misses (each with a suggestion) up to this… */
  unmatched: 6,
  /** …and money nobody asked for only while fewer than this wait. */
  strangers: 2,
  parse_failed: 3,
  need_check: 2,
  /** Pending deposits: players stop asking past this. */
  pending: 30
} as const

/** The platform gives up on a deposit nobody paid after this (what SVC_DEPOSIT_TTL_H does for real, sooner; the same expiry). */
export const DEMO_DEPOSIT_TTL = "15 minutes"

/**
 * Now and then (in ticks, about seconds) the phone never forwards a deposit's SMS: its account's
 * next balance is unexplained, a gap. The second phone's SMS Gateway app re-sends it later (its
 * received time kept), which closes the gap; every other one waits 10 minutes.
 */
export const WITHHOLD = { first: 45, every: 240, resendAfter: [90, 600] } as const

export interface DemoPorts {
  readonly admin: number
  readonly push: number
}

interface Pending {
  readonly id: number
  readonly name: string
  readonly amount: number
}

const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(Math.random() * items.length)]!

/** Players, deposits to start with, the operator, the phones and the whitelist; answers the secrets of this run. */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const password = randomBytes(12).toString("base64url")
  const secrets = { [PHONE]: randomBytes(24).toString("base64url"), [SECOND_PHONE]: randomBytes(24).toString("base64url") }
  const passwordHash = yield* hashPassword(password)
  yield* sql.withTransaction(Effect.gen(function*() {
    const [players] = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.player`
    if (Number(players?.n ?? 0) === 0) {
      for (const name of [SHARED_NAME, SHARED_NAME, ...PLAYERS]) yield* sql`INSERT INTO recon.player (name) VALUES (${name})`
      // A few deposits already waiting when the demo starts.
      yield* sql`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
        SELECT id, name, (ARRAY[30000, 50000, 100000, 200000, 70000])[row_number() OVER (ORDER BY id) % 5 + 1]
        FROM recon.player WHERE name <> ${SHARED_NAME} ORDER BY id LIMIT 5`
    }
    // A company whose name banks cut short (added to a demo database made before it).
    yield* sql`INSERT INTO recon.player (name) SELECT ${COMPANY} WHERE NOT EXISTS (SELECT 1 FROM recon.player WHERE name = ${COMPANY})`
    yield* sql`INSERT INTO admin.operator (account, password_hash) VALUES (${DEMO_OPERATOR}, ${passwordHash})
      ON CONFLICT (account) DO UPDATE SET password_hash = EXCLUDED.password_hash`
    for (const bank of [...Object.values(banks), unreadBank]) {
      yield* sql`INSERT INTO recon.shooter_phone (phone, bank, note) VALUES (${normalizePhone(bank.sender)!}, ${bank.name}, 'demo')
        ON CONFLICT (phone) DO NOTHING`
    }
    for (const [deviceId, format, name] of [[PHONE, "smsforwarder", "demo phone (SmsForwarder)"], [SECOND_PHONE, "sms-gateway", "second demo phone (SMS Gateway)"]] as const) {
      yield* sql`INSERT INTO recon.shooter_device (device_id, name, trusted) VALUES (${deviceId}, ${name}, true)
        ON CONFLICT (device_id) DO UPDATE SET trusted = true`
      yield* sql`INSERT INTO recon.shooter_push (device_id, name, format, secret) VALUES (${deviceId}, ${name}, ${format}, ${secrets[deviceId]})
        ON CONFLICT (device_id) DO UPDATE SET secret = EXCLUDED.secret, format = EXCLUDED.format, enabled = true`
    }
    yield* sql`SELECT pg_notify(${CHANGES_CHANNEL}, 'shooter_push')`
  }))
  return { password, secrets }
})

const waitFor = (url: string) =>
  Effect.tryPromise(() => fetch(url).then((r) => r.status)).pipe(
    Effect.retry(Schedule.spaced("200 millis")),
    Effect.timeout("60 seconds")
  )

/** The demo's webhook (DEMO_WEBHOOK_URL), made afresh each run with all four events; answers its secret. */
const registerWebhook = (webhook: NonNullable<DemoSettings["webhook"]>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* WebhookStore
    const secret = webhook.secret === undefined ? randomBytes(24).toString("base64url") : Redacted.value(webhook.secret)
    yield* sql`DELETE FROM recon.webhook WHERE url = ${webhook.url}`
    yield* store.add({ url: webhook.url, secret, events: EVENT_TYPES })
    return secret
  }).pipe(Effect.provide(WebhookStore.layer))

/**
 * Each account continues from the balance its last notice of an earlier run printed (in received
 * order), so a restart opens no gap; an account with none starts from a random balance.
 */
const openingBalances = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const senders = ACCOUNTS.map((account) => normalizePhone(accountSender[account])!)
  const latest = yield* sql<{ sender: string; body: string }>`SELECT DISTINCT ON (sender_normalized) sender_normalized AS sender, body
    FROM recon.shooter_sms WHERE ${sql.in("device_id", [PHONE, SECOND_PHONE])} AND ${sql.in("sender_normalized", senders)}
    ORDER BY sender_normalized, received_at DESC, id DESC`
  // Balances differ from run to run: the balance is what tells two equal deposits apart (PUSH_PROTOCOL "Duplicates").
  return Object.fromEntries(ACCOUNTS.map((account, i) => {
    const last = latest.find((row) => row.sender === senders[i])
    return [account, (last === undefined ? undefined : balanceShown(last.body)) ?? 500_000 + Math.floor(Math.random() * 5_000_000)]
  })) as Record<Account, number>
})

/** The simulated phones: each `send` posts one SMS through the webhook as the forwarder app would. */
const phones = (pushPort: number, secrets: Record<string, string>) => {
  const url = (deviceId: string) => `http://127.0.0.1:${pushPort}/push/${deviceId}`
  const post = (deviceId: string, body: string, headers: Record<string, string>) =>
    Effect.tryPromise(async () => {
      const response = await fetch(url(deviceId), { method: "POST", headers, body })
      const answer = await response.json().catch(() => null) as { data?: { sms_id?: number; duplicate?: boolean } } | null
      return { http: response.status, smsId: answer?.data?.sms_id, duplicate: answer?.data?.duplicate ?? false }
    })
  const stamp = forwarderClock()
  return {
    /** SmsForwarder's default webhook: a form with the wrapped content, signed with the phone's secret. */
    forwarder: (sender: string, text: string, at: Date) =>
      post(PHONE, smsForwarderFormBody({
        from: sender,
        content: formatForwarderContent({ from: sender, text, simInfo: "SIM1_KT", subId: 1, receiveTime: seoulDateTime(at), deviceName: "Galaxy A54" }),
        timestamp: stamp(at.getTime()),
        secret: secrets[PHONE]
      }), { "content-type": "application/x-www-form-urlencoded" }),
    /** SMS Gateway for Android's `sms:received` webhook (received at `at`), signed now over the raw body and X-Timestamp. */
    gateway: (sender: string, text: string, at: Date) => {
      const body = JSON.stringify({
        deviceId: "demo-gateway-device",
        event: "sms:received",
        id: randomUUID(),
        payload: { messageId: randomUUID(), message: text, phoneNumber: sender, simNumber: 1, receivedAt: at.toISOString() },
        webhookId: "demo-webhook"
      })
      const timestamp = String(Math.floor(Date.now() / 1000))
      return post(SECOND_PHONE, body, {
        "content-type": "application/json",
        "x-timestamp": timestamp,
        "x-signature": signSmsGateway(secrets[SECOND_PHONE]!, body, timestamp)
      })
    }
  }
}

/** The phone's script, one step a tick; new pending deposits are created as it goes, old ones expire. */
const simulate = (pushPort: number, secrets: Record<string, string>, everyMs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const expiry = yield* depositExpiry
    const phone = phones(pushPort, secrets)
    const ledger = new Ledger(yield* openingBalances)
    const bankOrder: ReadonlyArray<Bank> = ["KB", "NH", "SHINHAN"]
    let tick = 0
    let last: { readonly sender: string; readonly text: string } | undefined
    /** Deposits this phone has sent the money of (the newest few hundred): each is paid once. */
    const paid: Array<number> = []
    let nearMisses = 0
    /** The next deposit that pays a waiting request is withheld (WITHHOLD). */
    let withholdNext = false
    let withholds = 0
    const withheld: Array<{ readonly sender: string; readonly text: string; readonly at: Date; readonly due: number; readonly what: string }> = []

    /** Which of the operator's queues (and the pending deposits) are at their limit. */
    const atLimit = Effect.map(
      sql<{ status: string; n: bigint }>`SELECT status, count(*) AS n FROM recon.shooter_sms
        WHERE status IN ('manual_review', 'unmatched', 'parse_failed', 'need_check') GROUP BY status
        UNION ALL SELECT 'pending', count(*) FROM recon.deposit WHERE status = 'pending'`,
      (rows) => (key: keyof typeof DEMO_LIMITS) =>
        Number(rows.find((r) => r.status === (key === "strangers" ? "unmatched" : key))?.n ?? 0) >= DEMO_LIMITS[key]
    )
    const pendingOf = (name: string) =>
      Effect.map(sql<{ amount: string }>`SELECT amount::text AS amount FROM recon.deposit d
        WHERE status = 'pending' AND from_bank_owner = ${name}`, (rows) => new Set(rows.map((r) => Number(r.amount))))
    /** A deposit request of `name`, of an amount they have no other pending request of (undefined: every amount is taken). */
    const ask = (name: string) =>
      Effect.gen(function*() {
        const taken = yield* pendingOf(name)
        const amount = AMOUNTS.find((a) => !taken.has(a) && Math.random() < 0.5) ?? AMOUNTS.find((a) => !taken.has(a))
        if (amount === undefined) return undefined
        const [row] = yield* sql<{ id: bigint }>`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
          SELECT id, name, ${amount} FROM recon.player WHERE name = ${name} ORDER BY id LIMIT 1 RETURNING id`
        return row === undefined ? undefined : { id: Number(row.id), name, amount }
      })
    /** A player asks to deposit. */
    const newDeposit = Effect.asVoid(Effect.suspend(() => ask(pick(PLAYERS))))
    /** The oldest deposit still waiting for its money, of a player whose name is theirs alone. */
    const oldestWaiting = Effect.suspend(() =>
      Effect.map(sql<{ id: bigint; name: string; amount: string }>`SELECT d.id, d.from_bank_owner AS name, d.amount::text AS amount
        FROM recon.deposit d WHERE d.status = 'pending' AND d.task_status IS NULL AND d.from_bank_owner <> ${SHARED_NAME}
        ${paid.length === 0 ? sql`` : sql`AND NOT ${sql.in("d.id", paid)}`}
        ORDER BY d.created_at, d.id LIMIT 1`, ([row]): Pending | undefined =>
        row === undefined ? undefined : { id: Number(row.id), name: row.name, amount: Number(row.amount) }))
    /** Marks a deposit as paid by this phone (so never paid twice). */
    const markPaid = (waiting: Pending | undefined) =>
      Effect.sync(() => {
        if (waiting === undefined) return
        paid.push(waiting.id)
        if (paid.length > 500) paid.shift()
      })
    /** The next deposit to pay, if one waits. */
    const nextToPay = Effect.tap(oldestWaiting, markPaid)

    /**
     * A deposit notice of `bank`'s account. `pays`: it pays a waiting request, and may be the one
     * the phone withholds (the balance moves all the same; the gateway re-sends it later).
     */
    const deposit = (bank: Bank, name: string, amount: number, why: string, pays = false) =>
      Effect.gen(function*() {
        const at = new Date()
        const text = depositSms(bank, name, amount, ledger.move(bank, amount), at)
        const what = `${banks[bank].name} deposit ${name} ${grouped(amount)} won (${why})`
        if (pays && withholdNext) {
          withholdNext = false
          const wait = WITHHOLD.resendAfter[withholds++ % WITHHOLD.resendAfter.length]!
          withheld.push({ sender: banks[bank].sender, text, at, due: tick + wait, what })
          return console.log(`demo sms         ${what} never forwarded by ${PHONE}: a gap in ${banks[bank].name} ${accountShown[bank]}'s balances ` +
            `until ${SECOND_PHONE}'s gateway re-sends it (in about ${Math.round(wait / 60)} min)`)
        }
        last = { sender: banks[bank].sender, text }
        const answer = yield* phone.forwarder(banks[bank].sender, text, at)
        console.log(`demo sms         ${what} -> ${describe(answer)}`)
      })

    /** Pays the oldest waiting deposit; none waiting, and room for it: money nobody asked for. */
    const match = (bank: Bank) =>
      Effect.gen(function*() {
        const waiting = yield* nextToPay
        if (waiting !== undefined) return yield* deposit(bank, waiting.name, waiting.amount, `pays deposit #${waiting.id}`, true)
        if (!(yield* atLimit)("strangers")) yield* deposit(bank, pick(STRANGERS), pick(AMOUNTS), "no deposit was waiting: unmatched")
      })

    /** The SMS the phone withheld whose time has come, sent by the second phone's gateway with their received time. */
    const resendDue = Effect.gen(function*() {
      for (const due of withheld.filter((w) => w.due <= tick)) {
        withheld.splice(withheld.indexOf(due), 1)
        const answer = yield* phone.gateway(due.sender, due.text, due.at)
        console.log(`demo sms         ${SECOND_PHONE}'s gateway re-sends what ${PHONE} withheld: ${due.what} -> ${describe(answer)}`)
      }
    })

    const step = (what: Step) =>
      Effect.gen(function*() {
        const bank = bankOrder[tick % bankOrder.length]!
        const full = yield* atLimit
        switch (what) {
          case "match":
            return yield* match(bank)
          case "collision": {
            const taken = yield* pendingOf(SHARED_NAME)
            const amount = AMOUNTS.find((a) => !taken.has(a) && Math.random() < 0.4) ?? AMOUNTS.find((a) => !taken.has(a))
            // Enough collisions wait for the operator (or every amount has one): a plain deposit instead.
            if (full("manual_review") || amount === undefined) return yield* match(bank)
            // Both players of the name ask for the same amount: which one paid is for a person to say.
            yield* sql`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
              SELECT id, name, ${amount} FROM recon.player WHERE name = ${SHARED_NAME}`
            return yield* deposit(bank, SHARED_NAME, amount, "two players share the name: manual review")
          }
          case "near_miss": {
            // A payer who missed their request's name or amount: unmatched, with a suggestion for the person.
            const kind = NEAR_MISSES[nearMisses % NEAR_MISSES.length]!
            const waiting = full("unmatched") ? undefined : kind === "truncated"
              ? (full("pending") ? undefined : yield* Effect.tap(ask(COMPANY), markPaid))
              : yield* nextToPay
            if (waiting === undefined) return yield* match(bank)
            nearMisses += 1
            const sent = nearMiss(kind, waiting.name, waiting.amount, tick)
            return yield* deposit(bank, sent.payer, sent.amount,
              `pays deposit #${waiting.id} of ${waiting.name} ${grouped(waiting.amount)} won, ${kind.replace("_", " ")}: unmatched, with a suggestion`)
          }
          case "unmatched":
            if (full("strangers")) return yield* match(bank)
            return yield* deposit(bank, pick(STRANGERS), pick(AMOUNTS) + 3_000, "nobody asked for it: unmatched")
          case "withdrawal": {
            const at = new Date()
            const amount = pick([8_110, 18_000, 4_500, 12_900])
            const answer = yield* phone.forwarder(banks.KB.sender, withdrawalSms(pick(PAYEES), amount, ledger.move("KB", -amount), at), at)
            return console.log(`demo sms         KB국민 withdrawal ${grouped(amount)} won (never a deposit: ignored) -> ${describe(answer)}`)
          }
          case "duplicate": {
            if (last === undefined) return
            const answer = yield* phone.gateway(last.sender, last.text, new Date())
            return console.log(`demo sms         the last SMS again, from ${SECOND_PHONE} (duplicate) -> ${describe(answer)}`)
          }
          case "unreadable": {
            const waiting = full("parse_failed") ? undefined : yield* nextToPay
            if (waiting === undefined) return yield* match(bank)
            const at = new Date()
            const layout = tick % (SCRIPT.length * 2) < SCRIPT.length ? 0 : 1
            const text = unreadableSms(layout, waiting.name, waiting.amount, ledger.move("SHINHYUP", waiting.amount), at)
            const answer = yield* phone.forwarder(unreadBank.sender, text, at)
            return console.log(`demo sms         ${unreadBank.name} deposit ${waiting.name} ${grouped(waiting.amount)} won in a layout no template reads ` +
              `(parse_failed until a person reads it; pays deposit #${waiting.id}) -> ${describe(answer)}`)
          }
          case "unknown_sender": {
            const waiting = full("need_check") ? undefined : yield* nextToPay
            if (waiting === undefined) return yield* match(bank)
            const at = new Date()
            const text = unknownSenderSms(waiting.name, waiting.amount, ledger.move("IBK", waiting.amount), at)
            const answer = yield* phone.forwarder(unknownSender.sender, text, at)
            return console.log(`demo sms         ${unknownSender.name} deposit ${waiting.name} ${grouped(waiting.amount)} won from a sender nobody whitelisted ` +
              `(need_check until a person passes it; pays deposit #${waiting.id}) -> ${describe(answer)}`)
          }
        }
      })

    const once = Effect.gen(function*() {
      const what = SCRIPT[tick % SCRIPT.length]!
      if (tick % SCRIPT.length === 0) yield* expiry.expire(DEMO_DEPOSIT_TTL)
      if (tick >= WITHHOLD.first && (tick - WITHHOLD.first) % WITHHOLD.every === 0) withholdNext = true
      yield* resendDue
      if ((what === "match" || what === "collision") && !(yield* atLimit)("pending")) yield* newDeposit
      yield* step(what)
    }).pipe(
      Effect.catchCause((cause) => Effect.logWarning("demo: one simulated SMS failed", cause)),
      Effect.ensuring(Effect.sync(() => {
        tick += 1
      }))
    )
    // About one a second (DEMO_SMS_EVERY_MS), not on the beat: phones are not metronomes.
    yield* once.pipe(Effect.repeat(Schedule.spaced(Duration.millis(everyMs)).pipe(Schedule.jittered)))
  })

const describe = (answer: { readonly http: number; readonly smsId?: number | undefined; readonly duplicate: boolean }) =>
  answer.http !== 200 ? `HTTP ${answer.http}` : `sms ${answer.smsId}${answer.duplicate ? " stored as a duplicate" : ""}`

/** The demo beside the services of `all`: seeds, prints what to open, then runs the phone until stopped. */
export const DemoLive = (ports: DemoPorts, settings: DemoSettings) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const { password, secrets } = yield* seed
    const everyMs = settings.smsEveryMs ?? DEMO_SMS_EVERY_MS
    const webhook = settings.webhook === undefined ? undefined : { url: settings.webhook.url, secret: yield* registerWebhook(settings.webhook) }
    yield* waitFor(`http://127.0.0.1:${ports.push}/health/live`)
    yield* waitFor(`http://127.0.0.1:${ports.admin}/`)
    const signIn = `demo             open http://127.0.0.1:${ports.admin}/ and sign in: account ${DEMO_OPERATOR}  password ${password}`
    // A secret the demo made is said (the receiver needs it); one the person gave is theirs already.
    const events = webhook === undefined ? undefined
      : `demo             signed events (${EVENT_TYPES.join(", ")}) go to ${webhook.url}` +
        (settings.webhook?.secret === undefined ? `; their secret (DEMO_WEBHOOK_SECRET): ${webhook.secret}` : " (signed with DEMO_WEBHOOK_SECRET)")
    // The password scrolls away with the phone's lines: it is kept in a file (only for this user) and said again.
    mkdirSync(dirname(SIGN_IN_FILE), { recursive: true })
    writeFileSync(SIGN_IN_FILE, [signIn, ...(events === undefined ? [] : [events])].map((line) => `${line.replace(/^demo\s+/, "")}\n`).join(""), { mode: 0o600 })
    chmodSync(SIGN_IN_FILE, 0o600)
    console.log([
      signIn,
      `demo             ${PHONE} (SmsForwarder) posts a signed bank SMS about every ${everyMs === 1000 ? "second" : `${everyMs} ms`} to http://127.0.0.1:${ports.push}/push/${PHONE};`,
      `demo             ${SECOND_PHONE} (SMS Gateway) sends duplicates and re-sends what the first withheld. Data in ${DEMO_DATA_DIR} (not npm start's); Ctrl-C stops the demo.`,
      ...(events === undefined ? [] : [events]),
      `demo             the sign-in is kept in ${SIGN_IN_FILE}, and said again in a few seconds and every 5 minutes.`
    ].join("\n"))
    yield* Supervisor.fork({ name: "demo phones", answer: "restart" }, simulate(ports.push, secrets, everyMs))
    yield* Effect.sync(() => console.log(signIn)).pipe(
      Effect.delay(SAY_AGAIN_AFTER),
      Effect.andThen(Effect.sync(() => console.log(signIn)).pipe(Effect.delay(SAY_AGAIN_EVERY), Effect.forever)),
      (saying) => Supervisor.fork({ name: "sign-in reminder", answer: "restart" }, saying)
    )
  }).pipe(Effect.orDie))
