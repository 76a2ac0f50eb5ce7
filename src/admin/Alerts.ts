// The console's alerts (DESIGN section 11, POST /api/alerts/list): what is wrong right now,
// derived from the state each time it is asked (nothing kept that could drift from it), from a
// small list of sources, one per kind. With SVC_ALERT_TELEGRAM_CHAT_ID set, a notifier looks
// every 10 s (an alert reaches the chat within that of its condition) and sends each new alert to
// the chat once, across restarts and admin processes (admin.alert_notice).
import { Context, DateTime, Duration, Effect, Layer, Schedule } from "effect"
import * as Supervisor from "../actors/Supervisor.ts"
import type { SqlError } from "effect/sql"
import { TelegramClient } from "../clients/TelegramClient.ts"
import type { AlertChatSettings } from "./Settings.ts"
import { AlertStore, type Notice, type OpenBalanceGap } from "./AlertStore.ts"
import { Alert, AlertKind } from "../api/ConsoleRecords.ts"

/** Where alerts of one kind come from: the open ones at `now`. */
export interface AlertSource {
  readonly kind: AlertKind
  readonly open: (now: Date) => Effect.Effect<ReadonlyArray<Alert>, SqlError.SqlError>
}

/** How often the notifier looks for new alerts. */
export const NOTIFY_EVERY = Duration.seconds(10)

const minutes = (seconds: number) => seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`

/** An account as people name it: its bank and digits as shown, else the phone and the sender whose messages it is. */
export const accountName = (g: Pick<OpenBalanceGap, "account" | "bank" | "device_id" | "sender">): string =>
  g.account !== null ? [g.bank, g.account].filter((part) => part !== null).join(" ") : `${g.bank === null ? "" : `${g.bank} `}${g.device_id} · ${g.sender}`

const gapDetail = (g: OpenBalanceGap, listed: number) => {
  const out = g.unexplained.startsWith("-")
  return `${out ? g.unexplained.slice(1) : g.unexplained} won ${out ? "went out" : "came in"} that no SMS between ` +
    `#${g.after_sms_id} and #${g.before_sms_id} tells of; an SMS is missing (never arrived, or never read)` +
    (g.total > listed ? ` (${g.total} gaps are open; the oldest ${listed} are listed)` : "")
}

const gapFacts = (g: OpenBalanceGap, listed: number) => {
  const out = g.unexplained.startsWith("-")
  return { direction: out ? "out" : "in", amount: out ? g.unexplained.slice(1) : g.unexplained, after_sms_id: g.after_sms_id, before_sms_id: g.before_sms_id, total: g.total, listed }
}

/** The sources, one per kind. */
const sources = (store: AlertStore["Service"], waitAlertS: number, gapGraceS: number): ReadonlyArray<AlertSource> => [
  {
    kind: "phone_silent",
    open: (now) =>
      Effect.map(store.silentPhones(now), (phones) =>
        phones.map((p): Alert => ({
          kind: "phone_silent",
          subject: p.device_id,
          since: p.since,
          detail: `${p.name === null ? p.device_id : `${p.name} (${p.device_id})`}: no SMS for more than ${minutes(p.silence_alert_s)}` +
            (p.last_sms_at === null ? " since it was registered" : `; the last one arrived at ${p.last_sms_at}`),
          facts: { device_id: p.device_id, name: p.name, silence_s: p.silence_alert_s, last_sms_at: p.last_sms_at }
        })))
  },
  {
    kind: "review_waiting",
    open: (now) =>
      Effect.map(store.waitingSms(now, waitAlertS), (waiting) =>
        waiting.map((s): Alert => ({
          kind: "review_waiting",
          subject: `sms:${s.id}`,
          since: s.since,
          detail: `SMS #${s.id} (${s.status}${s.amount === null ? "" : `, ${s.amount} won`}${s.payer_name === null ? "" : ` from ${s.payer_name}`}) ` +
            `has waited for a person more than ${minutes(waitAlertS)}` + (s.total > waiting.length ? ` (${s.total} SMS wait that long; the oldest ${waiting.length} are listed)` : ""),
          facts: { sms_id: s.id, status: s.status, amount: s.amount, payer_name: s.payer_name, wait_s: waitAlertS, total: s.total, listed: waiting.length }
        })))
  },
  {
    // Balance continuity (the reconciliation aids): each gap open past the grace period and not
    // explained by an operator, read where the worker writes it.
    kind: "balance_gap",
    open: (now) =>
      Effect.map(store.balanceGaps(now, gapGraceS), (gaps) =>
        gaps.map((g): Alert => ({ kind: "balance_gap", subject: accountName(g), since: g.since, detail: gapDetail(g, gaps.length), facts: gapFacts(g, gaps.length) })))
  }
]

export class Alerts extends Context.Service<Alerts, {
  /** The open alerts, the newest condition first. */
  readonly open: Effect.Effect<ReadonlyArray<Alert>, SqlError.SqlError>
}>()("recon/admin/Alerts") {
  static readonly layer = (waitAlertS: number, gapGraceS = 120) =>
    Layer.effect(
      Alerts,
      Effect.gen(function*() {
        const list = sources(yield* AlertStore, waitAlertS, gapGraceS)
        return {
          open: Effect.gen(function*() {
            const now = DateTime.toDateUtc(yield* DateTime.now)
            const found = yield* Effect.forEach(list, (source) => source.open(now), { concurrency: list.length })
            return found.flat().sort((a, b) => b.since.localeCompare(a.since) || a.kind.localeCompare(b.kind) || a.subject.localeCompare(b.subject))
          })
        }
      })
    )
}

const kindLine: Record<AlertKind, string> = {
  phone_silent: "휴대폰 무응답 (phone silent)",
  review_waiting: "처리 대기 (waiting for a person)",
  balance_gap: "잔액 불일치 (balance gap)"
}

/** The chat message for a batch of new alerts: a heading, then one line each. */
export const alertMessage = (notices: ReadonlyArray<Notice>): string =>
  [`recon 알림 ${notices.length}건 / ${notices.length} new alert${notices.length === 1 ? "" : "s"}`,
    ...notices.map((n) => `• ${kindLine[n.kind as AlertKind] ?? n.kind} ${n.subject}: ${n.detail} (since ${n.since})`)].join("\n")

/** One pass: note the open alerts, send the new ones (a message per batch), each once. */
export const notifyOnce = (chatId: string) =>
  Effect.gen(function*() {
    const alerts = yield* Alerts
    const store = yield* AlertStore
    const telegram = yield* TelegramClient
    const open = yield* alerts.open
    const notices = open.map(({ detail, kind, since, subject }) => ({ kind, subject, since, detail }))
    yield* store.noteAlerts(notices)
    let sent = 0
    for (;;) {
      const done = yield* store.sendDue(notices, (batch) => telegram.sendMessage(chatId, alertMessage(batch)))
      if (done.failure !== undefined) {
        yield* Effect.logWarning(`alerts not sent to the chat (retried with backoff): ${done.failure._tag === "TelegramApiError" ? done.failure.description : done.failure.reason}`)
        break
      }
      if (done.sent === 0) break
      sent += done.sent
    }
    if (sent > 0) yield* Effect.logInfo(`${sent} new alert${sent === 1 ? "" : "s"} sent to the chat`)
  })

/** The notifier beside admin's routes, when a chat is configured: a pass every {@link NOTIFY_EVERY}; a failed pass is logged and the next one comes. */
export const AlertNotifierLive = (chat: AlertChatSettings | undefined) =>
  chat === undefined ? Layer.empty : Layer.effectDiscard(Effect.gen(function*() {
    const telegram = yield* TelegramClient.make({ apiUrl: chat.apiUrl, token: chat.token })
    yield* notifyOnce(chat.chatId).pipe(
      Effect.provideService(TelegramClient, telegram),
      Effect.catch((error) => Effect.logWarning("alert notifier pass failed (the database is away?); the next pass comes", error)),
      Effect.catchDefect((defect) => Effect.logError("alert notifier pass failed", defect)),
      Effect.repeat(Schedule.spaced(NOTIFY_EVERY)),
      (notifier) => Supervisor.fork({ name: "alert notifier", answer: "restart" }, notifier)
    )
  }))
