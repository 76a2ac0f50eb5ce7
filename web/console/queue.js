// @ts-check
// The work queues (need_check, manual_review, unmatched, parse_failed, ignored), one tab each with
// its count, paged; each item with what a person needs to decide it (for unmatched and manual
// review: the candidate deposits and the reconciliation aids' suggestions, apart), and the decision
// behind a confirmation that shows what will happen. After an SMS is read by eye, the offer to make
// a template from it (learn.js).
import { accountOf, api, confirmDialog, detailOf, failure, outcome, session } from "./api.js"
import { badge, byId, duration, el, pager, since, statusWord, time, won } from "./format.js"
import { t } from "./i18n.js"
import { offerTemplate } from "./learn.js"

/** @typedef {import("./api.js").Envelope} Envelope */
/**
 * @typedef {{ deposit_id: number, player_id: number, player_name: string, from_bank_owner: string, amount: string,
 *   task_status: number | null, created_at: string, same_name: boolean }} Candidate
 * @typedef {{ deposit_id: number, player_id: number, player_name: string, from_bank_owner: string, amount: string,
 *   reasons: string[], score: number, sms_ids?: number[] }} Suggestion
 * @typedef {{ id: number, action: "approve" | "assign", deposit_id: number | null, payer_name: string | null, amount: string,
 *   operator: string, reason: string | null, requested_at: string }} PendingApproval
 * @typedef {{ id: number, device_id: string, sender: string, body: string, received_at: string, status: string, bank: string | null,
 *   payer_name: string | null, amount: string | null, deposit_id: number | null, created_at: string, reason: string | null,
 *   waiting_s: number | null, candidates: Candidate[], candidates_total: number, suggestions: Suggestion[],
 *   pending_approval: PendingApproval | null }} Item
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
      li.append(readLine(item), ...pendingLine(item), ...choices(item))
      break
    default:
      li.append(
        el("p", { class: "why", "data-field": "reason" }, el("span", { class: "muted" }, `${t(item.status === "ignored" ? "reasonIgnored" : "reasonNotRead")}: `), item.reason ?? "–"),
        ...pendingLine(item),
        assignForm(item))
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
 * One deposit to choose for an SMS: a radio of the item's group (a candidate and the same deposit
 * suggested are one choice), enabling approve once chosen.
 * @param {Item} item @param {number} depositId @param {string} id @param {string} testId @param {HTMLButtonElement} approve
 */
const pick = (item, depositId, id, testId, approve) => {
  const radio = el("input", {
    type: "radio", name: `sms-${item.id}`, id, value: String(depositId), "data-testid": testId, checked: state.chosen.get(item.id) === depositId
  })
  radio.addEventListener("change", () => {
    state.chosen.set(item.id, depositId)
    approve.disabled = state.busy.has(item.id)
  })
  return radio
}

/** A suggestion sms/resolve would take as it stands: a deposit of the SMS's amount (the names differ: that is for a person). */
const approvable = (/** @type {Suggestion} */ s) => !s.reasons.includes("amount_differs") && !s.reasons.includes("sum_of_sms")

/** Why a deposit is suggested, in words, and how likely. @param {Suggestion} s */
const why = (s) => `${s.reasons.map((r) => t(`why_${r}`)).join(" · ")} · ${t("likeness", { n: Math.round(s.score * 100) })}`

/**
 * What to choose from and the decision: the candidate deposits as a short table, the suggestions
 * apart (never an exact match), approve and reject.
 * @param {Item} item
 * @returns {Array<Node | string>}
 */
const choices = (item) => {
  const approve = button("approve", `approve-${item.id}`, t("approve"), () => {
    const chosen = state.chosen.get(item.id)
    if (chosen !== undefined) void decide(item, { action: "approve", deposit_id: chosen })
  }, { disabled: !state.chosen.has(item.id) || state.busy.has(item.id) })
  approve.dataset.needs = "deposit"
  const reject = button("reject", `reject-${item.id}`, t("reject"), () => decide(item, { action: "reject" }))
  const canApprove = item.candidates.length > 0 || item.suggestions.some(approvable)
  const actions = el("div", { class: "actions" }, canApprove ? approve : null, reject)
  const suggested = suggestions(item, approve)
  if (item.candidates.length === 0) {
    const none = canApprove ? t("noCandidatesSuggested") : t("noCandidates")
    return [el("p", { class: "muted", "data-testid": `no-candidates-${item.id}` }, none), ...suggested, actions]
  }
  const suggestedIds = new Set(item.suggestions.map((s) => s.deposit_id))
  const rows = item.candidates.map((c) => {
    const id = `cand-${item.id}-${c.deposit_id}`
    return el("tr", { class: c.same_name ? "same" : "" },
      el("td", { class: "pick" }, pick(item, c.deposit_id, id, `candidate-${item.id}-${c.deposit_id}`, approve)),
      el("td", { class: "num id" }, el("label", { for: id }, `#${c.deposit_id}`)),
      el("td", { class: "player" }, el("label", { for: id }, `${c.player_name} (${t("player")} ${c.player_id})`,
        c.from_bank_owner === c.player_name ? "" : ` · ${t("owner")} ${c.from_bank_owner}`,
        c.task_status === 6 ? ` · ${t("onReview")}` : ""),
        suggestedIds.has(c.deposit_id) ? el("span", { class: "tag suggested", "data-testid": `candidate-suggested-${item.id}-${c.deposit_id}` }, t("suggested")) : null),
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
  return [el("div", { class: "table-wrap" }, table), ...more, ...suggested, actions]
}

/**
 * The reconciliation aids' suggestions (recon's match.suggestions), apart from the candidates and
 * said to be what they are: a deposit of the SMS's amount can be chosen (through the same
 * confirmation as any approval); another amount, or several SMS adding up, says what to do instead.
 * @param {Item} item @param {HTMLButtonElement} approve
 */
const suggestions = (item, approve) => {
  if (item.suggestions.length === 0) return []
  return [el("section", { class: "suggestions", "data-testid": `suggestions-${item.id}`, "aria-label": t("suggestions") },
    el("h3", null, t("suggestions"), " ", el("span", { class: "muted" }, t("suggestionsNote"))),
    el("ul", null, ...item.suggestions.map((s) => {
      const id = `sugg-${item.id}-${s.deposit_id}`
      const can = approvable(s)
      return el("li", { class: can ? "suggestion" : "suggestion info", "data-testid": `suggestion-${item.id}-${s.deposit_id}`, "data-approvable": String(can) },
        el("span", { class: "pick" }, can ? pick(item, s.deposit_id, id, `suggestion-pick-${item.id}-${s.deposit_id}`, approve) : null),
        el("span", { class: "what" },
          el("label", { for: can ? id : undefined }, `#${s.deposit_id} ${s.player_name} (${t("player")} ${s.player_id})`,
            s.from_bank_owner === s.player_name ? "" : ` · ${t("owner")} ${s.from_bank_owner}`, ` · ${won(s.amount)}`),
          el("span", { class: "why", "data-field": "why" }, why(s)),
          can ? null : el("span", { class: "advice", "data-field": "advice" }, advice(item, s))))
    })))]
}

/** What to do with a suggestion that cannot be approved as it stands (docs/RECONCILIATION.md "Suggestions"). @param {Item} item @param {Suggestion} s */
const advice = (item, s) => s.reasons.includes("sum_of_sms")
  ? t("adviceSum", { sms: (s.sms_ids ?? [item.id]).map((id) => `#${id}`).join(" + "), deposit: won(s.amount) })
  : t("adviceAmount", { sms: won(item.amount), deposit: won(s.amount) })

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
      const s = item.suggestions.find((x) => x.deposit_id === d.deposit_id)
      const chosen = c ?? s
      facts.push(
        [t("player"), chosen === undefined ? "–" : `${chosen.player_name} (${t("player")} ${chosen.player_id})`],
        [t("amount"), won(item.amount)],
        [t("depositFor"), chosen === undefined ? `#${d.deposit_id}` : `#${chosen.deposit_id} · ${t("owner")} ${chosen.from_bank_owner}${c === undefined ? "" : ` · ${time(c.created_at)}`}`],
        [t("payer"), item.payer_name ?? "–"])
      // A suggested deposit: the names do not agree exactly, and the confirmation says so.
      if (s !== undefined) facts.push([t("suggested"), why(s)])
      const note = s === undefined ? t("noteApprove") : `${t("noteSuggestion", { payer: item.payer_name ?? "–", owner: s.from_bank_owner })} ${t("noteApprove")}`
      return { title: t(second ? "confirmSecond" : "confirmApprove"), facts, ok: t("okApprove"), note, reason: true }
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
