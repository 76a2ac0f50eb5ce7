// @ts-check
// The work queues (need_check, manual_review, unmatched, parse_failed, ignored), one tab each with
// its count, paged; each item with what a person needs to decide it, and the decision behind a
// confirmation that shows what will happen. After an SMS is read by eye, the offer to make a
// template from it (learn.js).
import { accountOf, api, confirmDialog, detailOf, failure, outcome, session } from "./api.js"
import { badge, byId, duration, el, pager, since, statusWord, time, won } from "./format.js"
import { t } from "./i18n.js"
import { offerTemplate } from "./learn.js"

/** @typedef {import("./api.js").Envelope} Envelope */
/**
 * @typedef {{ deposit_id: number, player_id: number, player_name: string, from_bank_owner: string, amount: string,
 *   task_status: number | null, created_at: string, same_name: boolean }} Candidate
 * @typedef {{ id: number, action: "approve" | "assign", deposit_id: number | null, payer_name: string | null, amount: string,
 *   operator: string, reason: string | null, requested_at: string }} PendingApproval
 * @typedef {{ id: number, device_id: string, sender: string, body: string, received_at: string, status: string, bank: string | null,
 *   payer_name: string | null, amount: string | null, deposit_id: number | null, created_at: string, reason: string | null,
 *   waiting_s: number | null, candidates: Candidate[], candidates_total: number, pending_approval: PendingApproval | null,
 *   suggestions?: Array<Record<string, unknown>> }} Item
 */

export const STATUSES = /** @type {const} */ (["need_check", "manual_review", "unmatched", "parse_failed", "ignored"])
const PAGE_SIZE = 20

const state = {
  /** @type {(typeof STATUSES)[number]} */
  status: "manual_review",
  /** The operator chose the queue (a tab, a link); until then the first queue with work is shown. */
  chosen_queue: false,
  page: 1,
  /** @type {Map<number, number>} the deposit chosen per SMS */
  chosen: new Map(),
  /** @type {Set<number>} SMS with a decision in flight */
  busy: new Set(),
  /** @type {Record<string, number>} */
  counts: {}
}

/** Listeners told of fresh counts (the counters panel shows them too). */
export const countsChanged = { listeners: /** @type {Array<(counts: Record<string, number>) => void>} */ ([]) }

/**
 * @param {(typeof STATUSES)[number] | undefined} status the queue to show; undefined: the one shown, or the first with work
 */
export const showQueue = (status) => {
  if (status !== undefined) {
    if (state.status !== status) state.page = 1
    state.status = status
    state.chosen_queue = true
  }
  void loadQueue()
}

const renderTabs = () => {
  byId("queue-tabs").replaceChildren(...STATUSES.map((status) =>
    el("button", {
      type: "button",
      role: "tab",
      "aria-selected": String(status === state.status),
      "data-testid": `tab-${status}`,
      onclick: () => showQueue(status)
    }, statusWord(status), el("span", { class: "n", "data-testid": `tab-count-${status}` }, String(state.counts[status] ?? 0)))
  ))
  byId("queue-hint").textContent = t(`h_${state.status}`)
}

/** @param {Record<string, number>} counts */
export const setCounts = (counts) => {
  state.counts = counts
  renderTabs()
  for (const listener of countsChanged.listeners) listener(counts)
}

let loading = false
let again = false
/** Reads the page shown (once at a time; a change arriving meanwhile reads it once more). */
export const loadQueue = async () => {
  if (loading) {
    again = true
    return
  }
  loading = true
  try {
    const answer = await api("/api/review/list", { status: state.status, page: state.page, page_size: PAGE_SIZE })
    if (answer.status !== 200) return outcome(detailOf(answer), "bad")
    const data = answer.data
    if (data.items.length === 0 && state.page > 1) {
      state.page -= 1
      again = true
      return
    }
    const busy = STATUSES.slice(0, 4).find((s) => data.counts[s] > 0)
    if (!state.chosen_queue && data.total === 0 && busy !== undefined) {
      // Nothing here, work elsewhere: show that queue (once; the operator's own choice is kept).
      state.chosen_queue = true
      state.status = busy
      again = true
      return
    }
    setCounts(data.counts)
    renderItems(data.items)
    pager(byId("queue-pager"), data, (page) => {
      state.page = page
      void loadQueue()
    })
  } catch (error) {
    if (session.token) outcome(failure(error), "bad")
  } finally {
    loading = false
    if (again) {
      again = false
      void loadQueue()
    }
  }
}

/** Rebuilds only the items that changed, so a choice, the focus and a form being filled survive an update. @param {Item[]} items */
const renderItems = (items) => {
  const list = byId("queue-list")
  const old = new Map(Array.from(list.children, (node) => [/** @type {HTMLElement} */ (node).dataset.sms, node]))
  list.replaceChildren(...items.map((item) => {
    const { waiting_s: _, ...stable } = item
    const key = JSON.stringify(stable)
    const kept = /** @type {HTMLElement | undefined} */ (old.get(String(item.id)))
    if (kept !== undefined && kept.dataset.key === key) {
      refreshWait(kept, item)
      return kept
    }
    const node = renderItem(item)
    node.dataset.key = key
    return node
  }))
  byId("queue-empty").hidden = items.length > 0
  const live = new Set(items.map((i) => i.id))
  for (const id of state.chosen.keys()) if (!live.has(id)) state.chosen.delete(id)
}

/** @param {HTMLElement} node @param {Item} item */
const refreshWait = (node, item) => {
  const waited = node.querySelector("[data-field=waited]")
  if (waited !== null && item.waiting_s !== null) waited.textContent = t("waited", { d: duration(item.waiting_s) })
}

/** @param {Item} item */
const renderItem = (item) => {
  const li = el("li", { class: "item", "data-testid": `review-${item.id}`, "data-sms": String(item.id), "data-status": item.status })
  li.append(
    el("div", { class: "meta" },
      badge(item.status),
      el("span", null, `${t("smsNo")} #${item.id}`),
      el("span", null, item.bank ?? t("unknownBank")),
      el("span", null, `${t("from")} ${item.sender}`),
      el("span", null, item.device_id),
      el("span", { "data-field": "received" }, time(item.received_at)),
      item.waiting_s === null ? null : el("span", { class: "waited", "data-field": "waited" }, t("waited", { d: duration(item.waiting_s) }))),
    el("div", { class: "sms-text", "data-field": "body" }, item.body)
  )
  switch (item.status) {
    case "need_check":
      li.append(el("div", { class: "actions" },
        button("approve", `pass-${item.id}`, t("pass"), () => decide(item, { action: "pass" })),
        button("reject", `reject-${item.id}`, t("reject"), () => decide(item, { action: "reject" }))))
      break
    case "manual_review":
    case "unmatched":
      li.append(readLine(item), ...pendingLine(item), ...candidates(item))
      break
    default:
      li.append(
        el("p", { class: "why", "data-field": "reason" }, el("span", { class: "muted" }, `${t(item.status === "ignored" ? "reasonIgnored" : "reasonNotRead")}: `), item.reason ?? "–"),
        ...pendingLine(item),
        assignForm(item))
  }
  if (item.suggestions !== undefined && item.suggestions.length > 0) {
    // Reconciliation aids (recon's match.suggestions): shown to help, never approved without a person.
    li.append(el("div", { class: "suggestions", "data-testid": `suggestions-${item.id}` }, `${t("suggestions")}: `,
      item.suggestions.map((s) => `#${String(s["deposit_id"])} ${String(s["from_bank_owner"])} ${won(/** @type {string} */ (s["amount"]))}`).join(" · ")))
  }
  return li
}

/**
 * @param {string} kind @param {string} testId @param {string} label @param {() => void} onclick
 * @param {Record<string, unknown>} [extra]
 */
const button = (kind, testId, label, onclick, extra = {}) =>
  el("button", { type: "button", class: kind, "data-testid": testId, onclick, ...extra }, label)

/** @param {Item} item */
const readLine = (item) =>
  el("p", { class: "read" }, el("span", { class: "muted" }, `${t("payerRead")}: `),
    `${t("payer")} `, el("strong", { "data-field": "payer" }, item.payer_name ?? "–"),
    ` · ${t("amount")} `, el("strong", { "data-field": "amount" }, won(item.amount)))

/** The decision waiting for a second operator, and the button that confirms it. @param {Item} item */
const pendingLine = (item) => {
  const pending = item.pending_approval
  if (pending === null) return []
  const what = pending.action === "approve"
    ? t("whatApprove", { deposit: pending.deposit_id ?? "" })
    : t("whatAssign", { payer: pending.payer_name ?? "", amount: won(pending.amount) })
  const mine = pending.operator === accountOf(session.token ?? "")
  return [el("div", { class: "pending-approval", "data-testid": `pending-${item.id}` },
    t("pendingApproval", { operator: pending.operator, what, at: time(pending.requested_at, { short: true }) }), " ",
    mine
      ? el("span", { class: "muted" }, t("pendingMine"))
      : button("approve", `second-${item.id}`, t("secondApprove"), () =>
        pending.action === "approve"
          ? decide(item, { action: "approve", deposit_id: pending.deposit_id ?? 0 }, true)
          : decide(item, { action: "assign", payer_name: pending.payer_name ?? "", amount: pending.amount }, true)))]
}

/**
 * The candidate deposits as a short table to choose from, and approve/reject.
 * @param {Item} item
 * @returns {Array<Node | string>}
 */
const candidates = (item) => {
  const approve = button("approve", `approve-${item.id}`, t("approve"), () => {
    const chosen = state.chosen.get(item.id)
    if (chosen !== undefined) void decide(item, { action: "approve", deposit_id: chosen })
  }, { disabled: !state.chosen.has(item.id) || state.busy.has(item.id) })
  approve.dataset.needs = "deposit"
  const reject = button("reject", `reject-${item.id}`, t("reject"), () => decide(item, { action: "reject" }))
  if (item.candidates.length === 0) {
    return [el("p", { class: "muted", "data-testid": `no-candidates-${item.id}` }, t("noCandidates")), el("div", { class: "actions" }, reject)]
  }
  const rows = item.candidates.map((c) => {
    const id = `cand-${item.id}-${c.deposit_id}`
    const radio = el("input", {
      type: "radio", name: `sms-${item.id}`, id, value: String(c.deposit_id), "data-testid": `candidate-${item.id}-${c.deposit_id}`,
      checked: state.chosen.get(item.id) === c.deposit_id
    })
    radio.addEventListener("change", () => {
      state.chosen.set(item.id, c.deposit_id)
      approve.disabled = state.busy.has(item.id)
    })
    return el("tr", { class: c.same_name ? "same" : "" },
      el("td", { class: "pick" }, radio),
      el("td", { class: "num id" }, el("label", { for: id }, `#${c.deposit_id}`)),
      el("td", { class: "player" }, el("label", { for: id }, `${c.player_name} (${t("player")} ${c.player_id})`,
        c.from_bank_owner === c.player_name ? "" : ` · ${t("owner")} ${c.from_bank_owner}`,
        c.task_status === 6 ? ` · ${t("onReview")}` : "")),
      el("td", { class: "num amount" }, won(c.amount)),
      el("td", { class: "num age", title: time(c.created_at) }, since(c.created_at)))
  })
  const table = el("table", { class: "candidates", "data-testid": `candidates-${item.id}` },
    el("caption", { class: "visually-hidden" }, t("candidates")),
    el("thead", null, el("tr", null, el("th", null, ""), el("th", { class: "num" }, t("depositNo")), el("th", null, t("player")), el("th", { class: "num" }, t("amount")), el("th", { class: "num" }, t("age")))),
    el("tbody", null, ...rows))
  const more = item.candidates_total > item.candidates.length
    ? [el("p", { class: "more" }, t("moreCandidates", { n: item.candidates_total - item.candidates.length, shown: item.candidates.length }))]
    : []
  return [el("div", { class: "table-wrap" }, table), ...more, el("div", { class: "actions" }, approve, reject)]
}

/** The form for what a person read off a parse_failed or ignored SMS. @param {Item} item */
const assignForm = (item) => {
  const payer = el("input", { name: "payer_name", maxLength: 64, required: true, autocomplete: "off", "data-testid": `assign-payer-${item.id}` })
  const amount = el("input", { name: "amount", inputMode: "decimal", required: true, autocomplete: "off", "data-testid": `assign-amount-${item.id}` })
  const form = el("form", { class: "assign", "data-testid": `assign-${item.id}` },
    el("label", null, t("assignPayer"), payer),
    el("label", null, t("assignAmount"), amount),
    el("button", { type: "submit", class: "approve", "data-testid": `assign-submit-${item.id}` }, t("assign")),
    item.status === "parse_failed" ? button("reject", `reject-${item.id}`, t("reject"), () => decide(item, { action: "reject" })) : null)
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const value = amount.value.replace(/[,\s원₩]/g, "")
    if (!/^\d{1,16}(\.\d{1,2})?$/.test(value) || /^0+(\.0+)?$/.test(value)) {
      amount.setCustomValidity(t("invalidAmount"))
      amount.reportValidity()
      return
    }
    amount.setCustomValidity("")
    void decide(item, { action: "assign", payer_name: payer.value.trim(), amount: value.replace(/^0+(?=\d)/, "") })
  })
  amount.addEventListener("input", () => amount.setCustomValidity(""))
  return form
}

/**
 * @typedef {{ action: "pass" | "reject" } | { action: "approve", deposit_id: number } | { action: "assign", payer_name: string, amount: string }} Decision
 */

/** What the confirmation shows for a decision. @param {Item} item @param {Decision} d @param {boolean} second */
const confirmation = (item, d, second) => {
  /** @type {Array<[string, string]>} */
  const facts = [[t("smsNo"), `#${item.id} · ${item.bank ?? t("unknownBank")} · ${time(item.received_at)}`]]
  switch (d.action) {
    case "approve": {
      const c = item.candidates.find((x) => x.deposit_id === d.deposit_id)
      facts.push(
        [t("player"), c === undefined ? "–" : `${c.player_name} (${t("player")} ${c.player_id})`],
        [t("amount"), won(item.amount)],
        [t("depositFor"), c === undefined ? `#${d.deposit_id}` : `#${c.deposit_id} · ${t("owner")} ${c.from_bank_owner} · ${time(c.created_at)}`],
        [t("payer"), item.payer_name ?? "–"])
      return { title: t(second ? "confirmSecond" : "confirmApprove"), facts, ok: t("okApprove"), note: t("noteApprove"), reason: true }
    }
    case "assign":
      facts.push([t("payer"), d.payer_name], [t("amount"), won(d.amount)])
      return {
        title: t(second ? "confirmSecond" : "confirmAssign"),
        facts,
        ok: t("okAssign"),
        note: item.status === "ignored" ? t("noteIgnored", { reason: item.reason ?? "" }) : t("noteApprove"),
        reason: true
      }
    case "pass":
      return { title: t("confirmPass"), facts, ok: t("okPass") }
    case "reject":
      facts.push([t("payer"), item.payer_name ?? "–"], [t("amount"), won(item.amount)])
      return { title: t("confirmReject"), facts, ok: t("okReject"), danger: true, reason: true }
  }
}

/**
 * Confirms, sends the decision as the signed-in operator, and says what happened.
 * @param {Item} item @param {Decision} d @param {boolean} [second]
 */
const decide = async (item, d, second = false) => {
  const reason = d.action === "pass" ? "" : await confirmDialog(confirmation(item, d, second))
  if (reason === undefined) return
  state.busy.add(item.id)
  const buttons = document.querySelectorAll(`[data-sms='${item.id}'] button`)
  buttons.forEach((b) => { /** @type {HTMLButtonElement} */ (b).disabled = true })
  const action = t(`a_${d.action}`)
  try {
    const answer = await api("/api/review/resolve", { sms_id: item.id, ...d, ...(reason === "" ? {} : { reason }) })
    if (answer.status === 200) {
      state.chosen.delete(item.id)
      outcome(t("decided", { id: item.id, action, status: statusWord(answer.data.status) }))
      if (d.action === "assign" && item.status === "parse_failed") offerTemplate(item.id, d.payer_name, d.amount)
    } else if (answer.status === 202) {
      outcome(t("pendingSecond", { id: item.id, action }), "pending")
    } else {
      outcome(t("failed", { id: item.id, detail: detailOf(answer) }), "bad")
    }
  } catch (error) {
    if (session.token) outcome(t("failed", { id: item.id, detail: failure(error) }), "bad")
  } finally {
    state.busy.delete(item.id)
    buttons.forEach((b) => {
      const node = /** @type {HTMLButtonElement} */ (b)
      node.disabled = node.dataset.needs === "deposit" && !state.chosen.has(item.id)
    })
    byId("outcome").focus()
    void loadQueue()
  }
}

/**
 * The newest SMS, with their status in words (an SMS passed or decided stays in view here).
 * @param {Item[]} latest
 */
export const renderLatest = (latest) => {
  byId("latest-list").replaceChildren(...latest.map((sms) =>
    el("li", { "data-testid": `sms-${sms.id}` },
      el("span", { class: "at" }, time(sms.received_at, { short: true }).replace(" KST", "")),
      el("span", { class: "who" }, `#${sms.id} ${sms.payer_name ?? sms.bank ?? sms.sender}`, sms.amount === null ? "" : ` · ${won(sms.amount)}`),
      badge(sms.status))))
  byId("latest-empty").hidden = latest.length > 0
}
