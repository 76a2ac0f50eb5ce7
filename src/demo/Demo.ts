// `all --demo` (DESIGN section 2): the services on their own embedded database (./.data/demo),
// with demo players (two of them share a name) and pending deposits, a demo operator, two trusted
// demo phones with whitelisted bank senders, and a simulated phone that posts one realistic bank
// SMS a second through the real signed webhook. Nothing here approves anything: the worker's
// loops and the wallet do that, exactly as for a real phone.
import { Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes, randomUUID } from "node:crypto"
import { hashPassword } from "../admin/Passwords.ts"
import { DEMO_DATA_DIR } from "../db/Database.ts"
import { CHANGES_CHANNEL } from "../db/ReconStore.ts"
import { normalizePhone } from "../domain/Phone.ts"
import { signSmsGateway, smsForwarderFormBody } from "../domain/PushFormats.ts"
import { formatForwarderContent } from "../domain/SmsText.ts"
import { type Bank, banks, depositSms, grouped, seoulDateTime, withdrawalSms } from "./BankSms.ts"

export const DEMO_OPERATOR = "demo"
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

/** What the simulated phone does on each tick, in turn: mostly deposits that match. */
const SCRIPT = ["match", "match", "collision", "match", "unmatched", "match", "withdrawal", "match", "duplicate", "match"] as const
type Step = (typeof SCRIPT)[number]

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
    yield* sql`INSERT INTO admin.operator (account, password_hash) VALUES (${DEMO_OPERATOR}, ${passwordHash})
      ON CONFLICT (account) DO UPDATE SET password_hash = EXCLUDED.password_hash`
    for (const bank of Object.values(banks)) {
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

/** The simulated phones: each `send` posts one SMS through the webhook as the forwarder app would. */
const phones = (pushPort: number, secrets: Record<string, string>) => {
  const url = (deviceId: string) => `http://127.0.0.1:${pushPort}/push/${deviceId}`
  const post = (deviceId: string, body: string, headers: Record<string, string>) =>
    Effect.tryPromise(async () => {
      const response = await fetch(url(deviceId), { method: "POST", headers, body })
      const answer = await response.json().catch(() => null) as { data?: { sms_id?: number; duplicate?: boolean } } | null
      return { http: response.status, smsId: answer?.data?.sms_id, duplicate: answer?.data?.duplicate ?? false }
    })
  return {
    /** SmsForwarder's default webhook: a form with the wrapped content, signed with the phone's secret. */
    forwarder: (sender: string, text: string, at: Date) =>
      post(PHONE, smsForwarderFormBody({
        from: sender,
        content: formatForwarderContent({ from: sender, text, simInfo: "SIM1_KT", subId: 1, receiveTime: seoulDateTime(at), deviceName: "Galaxy A54" }),
        timestamp: at.getTime(),
        secret: secrets[PHONE]
      }), { "content-type": "application/x-www-form-urlencoded" }),
    /** SMS Gateway for Android's `sms:received` webhook, signed over the raw body and X-Timestamp. */
    gateway: (sender: string, text: string, at: Date) => {
      const body = JSON.stringify({
        deviceId: "demo-gateway-device",
        event: "sms:received",
        id: randomUUID(),
        payload: { messageId: randomUUID(), message: text, phoneNumber: sender, simNumber: 1, receivedAt: at.toISOString() },
        webhookId: "demo-webhook"
      })
      const timestamp = String(Math.floor(at.getTime() / 1000))
      return post(SECOND_PHONE, body, {
        "content-type": "application/json",
        "x-timestamp": timestamp,
        "x-signature": signSmsGateway(secrets[SECOND_PHONE]!, body, timestamp)
      })
    }
  }
}

/** The phone's script, one step a tick; new pending deposits are created as it goes. */
const simulate = (pushPort: number, secrets: Record<string, string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const phone = phones(pushPort, secrets)
    // Balances differ from run to run: the balance is what tells two equal deposits apart (PUSH_PROTOCOL "Duplicates").
    const opening = () => 500_000 + Math.floor(Math.random() * 5_000_000)
    const balances: Record<Bank, number> = { KB: opening(), NH: opening(), SHINHAN: opening() }
    const bankOrder: ReadonlyArray<Bank> = ["KB", "NH", "SHINHAN"]
    let tick = 0
    let last: { readonly sender: string; readonly text: string } | undefined
    /** Deposits this phone has sent the money of (the newest few hundred): each is paid once. */
    const paid: Array<number> = []

    const pendingOf = (name: string) =>
      Effect.map(sql<{ amount: string }>`SELECT amount::text AS amount FROM recon.deposit d
        WHERE status = 'pending' AND from_bank_owner = ${name}`, (rows) => new Set(rows.map((r) => Number(r.amount))))
    /** A player asks to deposit: a pending deposit of an amount they have no other pending deposit of. */
    const newDeposit = Effect.gen(function*() {
      const name = pick(PLAYERS)
      const taken = yield* pendingOf(name)
      const amount = AMOUNTS.find((a) => !taken.has(a) && Math.random() < 0.5) ?? AMOUNTS.find((a) => !taken.has(a))
      if (amount === undefined) return
      yield* sql`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
        SELECT id, name, ${amount} FROM recon.player WHERE name = ${name} ORDER BY id LIMIT 1`
    })
    /** The oldest deposit still waiting for its money, of a player whose name is theirs alone. */
    const oldestWaiting = Effect.suspend(() =>
      Effect.map(sql<{ id: bigint; name: string; amount: string }>`SELECT d.id, d.from_bank_owner AS name, d.amount::text AS amount
        FROM recon.deposit d WHERE d.status = 'pending' AND d.task_status IS NULL AND d.from_bank_owner <> ${SHARED_NAME}
        ${paid.length === 0 ? sql`` : sql`AND NOT ${sql.in("d.id", paid)}`}
        ORDER BY d.created_at, d.id LIMIT 1`, ([row]): Pending | undefined =>
        row === undefined ? undefined : { id: Number(row.id), name: row.name, amount: Number(row.amount) }))

    const deposit = (bank: Bank, name: string, amount: number, why: string) =>
      Effect.gen(function*() {
        const at = new Date()
        balances[bank] += amount
        const text = depositSms(bank, name, amount, balances[bank], at)
        last = { sender: banks[bank].sender, text }
        const answer = yield* phone.forwarder(banks[bank].sender, text, at)
        console.log(`demo sms         ${banks[bank].name} deposit ${name} ${grouped(amount)} won (${why}) -> ${describe(answer)}`)
      })

    const step = (what: Step) =>
      Effect.gen(function*() {
        const bank = bankOrder[tick % bankOrder.length]!
        switch (what) {
          case "match": {
            const waiting = yield* oldestWaiting
            if (waiting === undefined) return yield* deposit(bank, pick(STRANGERS), pick(AMOUNTS), "no deposit was waiting: unmatched")
            paid.push(waiting.id)
            if (paid.length > 500) paid.shift()
            return yield* deposit(bank, waiting.name, waiting.amount, `pays deposit #${waiting.id}`)
          }
          case "collision": {
            const taken = yield* pendingOf(SHARED_NAME)
            const amount = AMOUNTS.find((a) => !taken.has(a) && Math.random() < 0.4) ?? AMOUNTS.find((a) => !taken.has(a)) ?? 1_000
            // Both players of the name ask for the same amount: which one paid is for a person to say.
            yield* sql`INSERT INTO recon.deposit (player_id, from_bank_owner, amount)
              SELECT id, name, ${amount} FROM recon.player WHERE name = ${SHARED_NAME}`
            return yield* deposit(bank, SHARED_NAME, amount, "two players share the name: manual review")
          }
          case "unmatched":
            return yield* deposit(bank, pick(STRANGERS), pick(AMOUNTS) + 3_000, "nobody asked for it: unmatched")
          case "withdrawal": {
            const at = new Date()
            const amount = pick([8_110, 18_000, 4_500, 12_900])
            balances.KB -= amount
            const answer = yield* phone.forwarder(banks.KB.sender, withdrawalSms(pick(PAYEES), amount, balances.KB, at), at)
            return console.log(`demo sms         KB국민 withdrawal ${grouped(amount)} won (never a deposit: ignored) -> ${describe(answer)}`)
          }
          case "duplicate": {
            if (last === undefined) return
            const answer = yield* phone.gateway(last.sender, last.text, new Date())
            return console.log(`demo sms         the last SMS again, from ${SECOND_PHONE} (duplicate) -> ${describe(answer)}`)
          }
        }
      })

    const once = Effect.gen(function*() {
      const what = SCRIPT[tick % SCRIPT.length]!
      if (what !== "withdrawal" && what !== "duplicate" && what !== "unmatched") yield* newDeposit
      yield* step(what)
      tick += 1
    }).pipe(Effect.catchCause((cause) => Effect.logWarning("demo: one simulated SMS failed", cause)))
    // About one a second, not on the beat: phones are not metronomes.
    yield* once.pipe(Effect.repeat(Schedule.spaced("1 second").pipe(Schedule.jittered)))
  })

const describe = (answer: { readonly http: number; readonly smsId?: number | undefined; readonly duplicate: boolean }) =>
  answer.http !== 200 ? `HTTP ${answer.http}` : `sms ${answer.smsId}${answer.duplicate ? " stored as a duplicate" : ""}`

/** The demo beside the services of `all`: seeds, prints what to open, then runs the phone until stopped. */
export const DemoLive = (ports: DemoPorts) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const { password, secrets } = yield* seed
    yield* waitFor(`http://127.0.0.1:${ports.push}/health/live`)
    yield* waitFor(`http://127.0.0.1:${ports.admin}/`)
    console.log([
      `demo             open http://127.0.0.1:${ports.admin}/ and sign in: account ${DEMO_OPERATOR}  password ${password}`,
      `demo             ${PHONE} (SmsForwarder) posts a signed bank SMS about every second to http://127.0.0.1:${ports.push}/push/${PHONE};`,
      `demo             ${SECOND_PHONE} (SMS Gateway) sends duplicates. Data in ${DEMO_DATA_DIR} (not npm start's); Ctrl-C stops the demo.`
    ].join("\n"))
    yield* Effect.forkScoped(simulate(ports.push, secrets))
  }).pipe(Effect.orDie))
