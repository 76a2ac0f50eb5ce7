// @ts-check
// The operator console's entry: sign-in and the sliding session, the live counters and queues
// over /ws/top-info?with=activity, the alerts banner, the views (queues, search, decisions,
// balances, devices, worker) by the URL's hash, and the worker's loops.
import { loadAccounts, setupAccounts, showGaps } from "./accounts.js"
import { accountOf, api, detailOf, session, setToken } from "./api.js"
import { loadAudit, setupAudit } from "./audit.js"
import { loadDevices, setupDevices } from "./devices.js"
import { byId, duration, el, statusWord, time, won } from "./format.js"
import { applyStatic, lang, t } from "./i18n.js"
import { countsChanged, loadQueue, renderLatest, setCounts, showQueue, STATUSES } from "./queue.js"
import { loadFilters, search, searchFor, setupSearch } from "./search.js"

/** The counters: what each counts says its label; the SMS ones open their queue. */
const COUNTERS = /** @type {const} */ ([
  { key: "pending_deposit_cnt", label: "c_pending_deposit_cnt", href: null },
  { key: "manual_review_cnt", label: "c_manual_review_cnt", href: "#queue/manual_review" },
  { key: "sms_need_check_cnt", label: "c_need_check", href: "#queue/need_check" },
  { key: "manual_review_sms", label: "c_manual_review", href: "#queue/manual_review" },
  { key: "unmatched_sms_cnt", label: "c_unmatched", href: "#queue/unmatched" },
  { key: "parse_fail_cnt", label: "c_parse_failed", href: "#queue/parse_failed" },
  { key: "duplicate_sms_cnt", label: "c_duplicate_sms_cnt", href: null }
])

const timers = /** @type {{ ws: WebSocket | null, every: number[], retry: number | undefined }} */ ({ ws: null, every: [], retry: undefined })

const show = (/** @type {boolean} */ signedIn) => {
  byId("signin").hidden = signedIn
  byId("board").hidden = !signedIn
  byId("signout").hidden = !signedIn
}

const signOut = (/** @type {string} */ reason) => {
  setToken(null)
  if (timers.ws) {
    timers.ws.onclose = null
    timers.ws.close()
    timers.ws = null
  }
  for (const timer of timers.every) clearInterval(timer)
  timers.every = []
  clearTimeout(timers.retry)
  byId("signin-error").textContent = reason
  show(false)
}
session.onExpired = () => signOut(t("sessionEnded"))

const renderCounters = () => {
  byId("counters").replaceChildren(...COUNTERS.map(({ href, key, label }) => {
    const value = el("span", { class: "value", id: `value-${key}`, "data-testid": `value-${key}` }, "–")
    const body = [el("span", { class: "label" }, t(label)), value]
    return href === null
      ? el("div", { class: "counter", "data-testid": `counter-${key}` }, ...body)
      : el("a", { class: "counter", href, "data-testid": `counter-${key}` }, ...body)
  }))
}

/** @param {string} key @param {number | null} value */
const setCounter = (key, value) => {
  const node = byId(`value-${key}`)
  node.textContent = value === null ? t("unavailable") : String(value)
  node.classList.toggle("unavailable", value === null)
  node.parentElement?.classList.toggle("attention", value !== null && value > 0 && key !== "pending_deposit_cnt" && key !== "duplicate_sms_cnt")
}

/** @param {any} message */
const renderTopInfo = (message) => {
  byId("db-state").hidden = message.type !== "unavailable"
  byId("updated-at").textContent = time(message.at, { short: true })
  if (message.type !== "top-info") return
  const data = message.data
  for (const key of ["pending_deposit_cnt", "manual_review_cnt", "sms_need_check_cnt", "unmatched_sms_cnt", "parse_fail_cnt", "duplicate_sms_cnt"]) {
    setCounter(key, data[key])
  }
  const recon = byId("recon-state")
  recon.textContent = data.recon.available ? t("reconAvailable") : t("reconUnavailable", { error: data.recon.error })
  recon.className = data.recon.available ? "muted" : "bad"
  recon.dataset.available = String(data.recon.available)
}
countsChanged.listeners.push((counts) => setCounter("manual_review_sms", counts["manual_review"] ?? 0))

let lastMarks = ""
/** @param {any} message */
const onMessage = (message) => {
  if (message.type === "activity") {
    byId("activity-state").hidden = true
    setCounts(message.data.counts)
    renderLatest(message.data.latest)
    // Something the queue shows may have changed: read the page shown again.
    const marks = JSON.stringify([message.data.counts, message.data.marks, message.data.latest.map((/** @type {any} */ s) => [s.id, s.status])])
    if (marks !== lastMarks && currentView() === "queue") void loadQueue()
    lastMarks = marks
  } else if (message.type === "activity-unavailable") {
    byId("activity-state").hidden = false
  } else {
    renderTopInfo(message)
  }
}

const connect = () => {
  if (!session.token) return
  const scheme = location.protocol === "https:" ? "wss://" : "ws://"
  const ws = new WebSocket(`${scheme}${location.host}/ws/top-info?with=activity&token=${encodeURIComponent(session.token)}`)
  timers.ws = ws
  byId("ws-state").textContent = t("connecting")
  ws.onopen = () => { byId("ws-state").textContent = t("live") }
  ws.onmessage = (event) => onMessage(JSON.parse(String(event.data)))
  ws.onclose = () => {
    byId("ws-state").textContent = t("disconnected")
    timers.ws = null
    // The newest token is used on reconnect; a refused one is noticed by the next poll.
    timers.retry = setTimeout(connect, 3000)
  }
}

/** @param {any} data */
const renderWorker = (data) => {
  const status = byId("worker-status")
  const body = byId("worker-loops")
  body.replaceChildren()
  status.dataset.status = data.status
  if (data.status === "not_configured") return void (status.textContent = t("workerNotConfigured"))
  if (data.status === "unreachable") return void (status.textContent = t("workerUnreachable", { detail: data.detail }))
  const health = data.health
  status.textContent = t("workerLine", { ready: health.ready ? t("ready") : t("notReady"), pid: health.pid, at: time(health.written_at, { short: true }) })
  for (const [name, loop] of Object.entries(/** @type {Record<string, any>} */ (health.loops))) {
    const cells = [name, loop.state, loop.fresh ? t("fresh") : t("stale"), String(loop.restarts), loop.last_success_at ? time(loop.last_success_at, { short: true }) : t("never")]
    const fields = ["name", "state", "freshness", "restarts", "last_success"]
    const labels = ["", t("state"), t("freshness"), t("restarts"), t("lastSuccess")]
    body.append(el("tr", { "data-testid": `loop-${name}` }, ...cells.map((text, i) =>
      el("td", { "data-field": fields[i], "data-label": i > 0 ? labels[i] : undefined, class: !loop.fresh && i === 2 ? "bad" : undefined }, text))))
  }
}

const loadWorker = async () => {
  try {
    renderWorker((await api("/api/worker-health")).data)
  } catch {
    // signed out, or the page is going away
  }
}

/** Where an alert's "show" leads: the SMS waiting, or the accounts with gaps. @param {any} alert */
const showOf = (alert) =>
  alert.kind === "review_waiting" ? () => searchFor(alert.subject.replace(/^sms:/, "#")) : alert.kind === "balance_gap" ? showGaps : null

/** An alert's sentence in the page's language, its amounts and durations formatted (the English `detail` when it has no facts). @param {any} alert */
const alertText = (alert) => {
  const f = alert.facts
  if (f === undefined || f === null) return alert.detail
  const more = (/** @type {string} */ key) => f.total > f.listed ? t(key, { total: f.total, listed: f.listed }) : ""
  switch (alert.kind) {
    case "phone_silent":
      return t("ad_phone_silent", { phone: f.name === null ? f.device_id : `${f.name} (${f.device_id})`, after: duration(f.silence_s) }) +
        (f.last_sms_at === null ? t("ad_phone_silent_never") : t("ad_phone_silent_last", { at: time(f.last_sms_at, { short: true }) }))
    case "review_waiting": {
      const what = [statusWord(f.status), f.amount === null ? null : won(f.amount), f.payer_name].filter((part) => part !== null).join(", ")
      return t("ad_review_waiting", { id: f.sms_id, what, after: duration(f.wait_s) }) + more("ad_more_waiting")
    }
    case "balance_gap":
      return t(f.direction === "out" ? "ad_gap_out" : "ad_gap_in", { amount: won(f.amount), after: f.after_sms_id, before: f.before_sms_id }) + more("ad_more_gaps")
    default:
      return alert.detail
  }
}

/** @param {any} alert */
const alertLine = (alert) => {
  const show = showOf(alert)
  return el("li", { "data-testid": `alert-${alert.kind}-${alert.subject}`, "data-kind": alert.kind },
    el("strong", null, t(`k_${alert.kind}`)), ` · ${alert.subject} · `, alertText(alert), ` (${t("alertSince", { since: time(alert.since, { short: true }) })})`,
    show === null ? null : el("span", null, " ", el("button", { type: "button", class: "link", onclick: show }, t("show"))))
}

const loadAlerts = async () => {
  try {
    const answer = await api("/api/alerts/list", {})
    if (answer.status !== 200) return
    /** @type {any[]} */
    const alerts = answer.data
    byId("alerts").hidden = alerts.length === 0
    /** @type {Record<string, number>} */
    const byKind = {}
    for (const a of alerts) byKind[a.kind] = (byKind[a.kind] ?? 0) + 1
    byId("alerts-summary").textContent = `${t("alertsSummary", { n: alerts.length })}: ${Object.entries(byKind).map(([k, n]) => `${t(`k_${k}`)} ${n}`).join(" · ")}`
    byId("alerts-list").replaceChildren(...alerts.slice(0, 50).map(alertLine))
  } catch {
    // signed out, or the page is going away
  }
}

const VIEWS = ["queue", "search", "audit", "accounts", "devices", "worker"]

/** The view the hash names: queue (default), search, audit, accounts, devices, worker. */
const currentView = () => (location.hash.replace(/^#/, "").split("/")[0] || "queue")

const route = () => {
  const [view = "queue", sub] = location.hash.replace(/^#/, "").split("/")
  const known = VIEWS.includes(view) ? view : "queue"
  for (const name of VIEWS) byId(`view-${name}`).hidden = name !== known
  for (const link of document.querySelectorAll(".tabs a")) {
    if (/** @type {HTMLElement} */ (link).dataset.view === known) link.setAttribute("aria-current", "page")
    else link.removeAttribute("aria-current")
  }
  if (known === "queue") showQueue(/** @type {any} */ (STATUSES.includes(/** @type {any} */ (sub)) ? sub : undefined))
  else if (known === "search") void search()
  else if (known === "audit") void loadAudit()
  else if (known === "accounts") void loadAccounts()
  else if (known === "devices") void loadDevices()
  else void loadWorker()
}

const start = () => {
  const account = accountOf(session.token ?? "")
  if (account === undefined) return signOut("")
  byId("operator").textContent = account
  show(true)
  connect()
  route()
  void loadWorker()
  void loadAlerts()
  void loadFilters()
  timers.every.push(
    setInterval(loadWorker, 10_000),
    setInterval(loadAlerts, 10_000),
    // The times items have waited move on; a change no signal told of is caught.
    setInterval(() => { if (currentView() === "queue") void loadQueue() }, 30_000)
  )
}

applyStatic()
renderCounters()
setupSearch()
setupAudit()
setupAccounts()
setupDevices()
window.addEventListener("hashchange", () => { if (session.token) route() })
byId("alerts-toggle").addEventListener("click", () => {
  const list = byId("alerts-list")
  list.hidden = !list.hidden
  byId("alerts-toggle").setAttribute("aria-expanded", String(!list.hidden))
})
byId("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault()
  byId("signin-error").textContent = ""
  const response = await fetch("/api/auth/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ account: /** @type {HTMLInputElement} */ (byId("account")).value, password: /** @type {HTMLInputElement} */ (byId("password")).value })
  })
  const body = await response.json()
  if (response.status !== 200) return void (byId("signin-error").textContent = detailOf(body))
  ;/** @type {HTMLInputElement} */ (byId("password")).value = ""
  setToken(body.data.token)
  start()
})
byId("signout").addEventListener("click", () => signOut(""))
document.documentElement.dataset.lang = lang
if (session.token) start()
else show(false)
