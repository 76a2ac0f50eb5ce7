// @ts-check
// Balance continuity (the reconciliation aids), passed on from recon's /accounts/list: each account
// whose messages print a balance, its last balance, and its open gaps (money the balance shows
// moving that no SMS received tells of: one never arrived, or was never read). A gap's SMS open
// their story. An operator marks a gap explained (a sweep, a fee: it no longer alerts) and merges
// a device-account (a layout without account digits, e.g. 신한) into another; both are audited
// (the actions listed below the accounts) and undone from the same place.
import { api, detailOf, failure, outcome } from "./api.js"
import { byId, cell, el, pager, time, won } from "./format.js"
import { t } from "./i18n.js"
import { openSms } from "./search.js"

/**
 * @typedef {{ reason: string, amount: string | null, operator: string, at: string }} Explained
 * @typedef {{ id: number, after_sms_id: number, before_sms_id: number, unexplained: string, since: string, explained: Explained | null }} Gap
 * @typedef {{ id: number, account: string | null, bank: string | null, device_id: string | null, sender: string | null,
 *   last_balance: string | null, last_at: string | null, merged_into: number | null, gaps: Gap[] }} Account
 * @typedef {{ id: number, action: string, operator: string, account_id: number, gap_id: number | null,
 *   other_account_id: number | null, reason: string | null, amount: string | null, at: string | null }} Action
 */

const state = { page: 1 }

export const setupAccounts = () => {
  byId("accounts-gaps").addEventListener("change", () => {
    state.page = 1
    void loadAccounts()
  })
}

/** Shows the accounts with open gaps (an alert's link). */
export const showGaps = () => {
  ;/** @type {HTMLInputElement} */ (byId("accounts-gaps")).checked = true
  state.page = 1
  if (location.hash === "#accounts") void loadAccounts()
  else location.hash = "#accounts"
}

/** An account as the alerts name it: its bank and digits as shown, else the phone and the sender whose messages it is. @param {Account} a */
const accountName = (a) => a.account !== null ? [a.bank, a.account].filter((part) => part !== null).join(" ") : `${a.bank === null ? "" : `${a.bank} `}${a.device_id} · ${a.sender}`

/** @param {number} id */
const smsLink = (id) => el("button", { type: "button", class: "link", onclick: () => openSms(id) }, `#${id}`)

/** An operator's action on balances, then the view again; recon's refusal (404, 409, 400) said as it gave it. @param {string} path @param {object} body */
const act = async (path, body) => {
  try {
    const answer = await api(path, body)
    if (answer.status !== 200) return outcome(detailOf(answer), "bad")
    outcome(t("actionDone"))
    await loadAccounts()
  } catch (error) {
    outcome(failure(error), "bad")
  }
}

/** Explaining a gap: the reason, and the amount it explains when known. @param {Gap} gap */
const explainForm = (gap) => {
  const reason = /** @type {HTMLInputElement} */ (el("input", { type: "text", maxLength: 500, required: true, placeholder: t("explainReason"), "aria-label": t("explainReason"), "data-testid": `explain-reason-${gap.id}` }))
  const amount = /** @type {HTMLInputElement} */ (el("input", { type: "text", inputMode: "numeric", placeholder: t("explainAmount"), "aria-label": t("explainAmount"), "data-testid": `explain-amount-${gap.id}` }))
  return el("form", {
    class: "gap-action",
    "data-testid": `explain-${gap.id}`,
    onsubmit: (/** @type {Event} */ event) => {
      event.preventDefault()
      const text = amount.value.replace(/[,\s원]/g, "")
      void act("/api/accounts/gap/explain", { gap_id: gap.id, reason: reason.value.trim(), ...(text === "" ? {} : { amount: text }) })
    }
  }, reason, amount, el("button", { type: "submit" }, t("explainGap")))
}

/** One open gap: how much moved unseen, between which SMS, since when; explained or the form to explain it. @param {Gap} gap */
const gapLine = (gap) => {
  const out = gap.unexplained.startsWith("-")
  return el("li", { class: gap.explained === null ? "" : "explained" },
    el("span", { "data-testid": `gap-${gap.after_sms_id}-${gap.before_sms_id}` },
      el("strong", { class: "bad" }, t(out ? "gapOut" : "gapIn", { amount: won(out ? gap.unexplained.slice(1) : gap.unexplained) })),
      ` · SMS `, smsLink(gap.after_sms_id), " → ", smsLink(gap.before_sms_id), ` · ${t("alertSince", { since: time(gap.since, { short: true }) })}`),
    gap.explained === null
      ? explainForm(gap)
      : el("div", { class: "gap-action", "data-testid": `explained-${gap.id}` },
        el("span", {}, t("explainedBy", { reason: gap.explained.reason, operator: gap.explained.operator }) +
          (gap.explained.amount === null ? "" : ` (${won(gap.explained.amount)})`)),
        el("button", { type: "button", "data-testid": `unexplain-${gap.id}`, onclick: () => act("/api/accounts/gap/unexplain", { gap_id: gap.id }) }, t("undoExplain"))))
}

/** A device-account (no account digits): merged into another by its id, or the merge undone. @param {Account} a */
const mergeControl = (a) => {
  if (a.merged_into !== null) {
    return el("div", { class: "merge-action", "data-testid": `merged-${a.id}` }, el("span", { class: "muted" }, t("mergedInto", { id: a.merged_into })),
      el("button", { type: "button", "data-testid": `unmerge-${a.id}`, onclick: () => act("/api/accounts/unmerge", { account_id: a.id }) }, t("unmerge")))
  }
  if (a.account !== null) return null
  const target = /** @type {HTMLInputElement} */ (el("input", { type: "number", min: 1, required: true, placeholder: t("mergeTarget"), "aria-label": t("mergeTarget"), "data-testid": `merge-target-${a.id}` }))
  return el("form", {
    class: "merge-action",
    "data-testid": `merge-${a.id}`,
    onsubmit: (/** @type {Event} */ event) => {
      event.preventDefault()
      void act("/api/accounts/merge", { account_id: a.id, into_id: Number(target.value) })
    }
  }, target, el("button", { type: "submit" }, t("mergeInto")))
}

/** The latest actions on balances (who, what, when). */
const loadActions = async () => {
  const answer = await api("/api/accounts/actions", { page_size: 20 })
  if (answer.status !== 200) return
  byId("accounts-actions").replaceChildren(...answer.data.items.map((/** @type {Action} */ x) =>
    el("li", { "data-testid": `action-${x.id}` },
      `${time(x.at, { short: true })} · ${x.operator} · ${t(`act_${x.action}`)} · #${x.account_id}` +
        (x.other_account_id === null ? "" : ` → #${x.other_account_id}`) + (x.gap_id === null ? "" : ` · gap ${x.gap_id}`) +
        (x.reason === null ? "" : ` · ${x.reason}`) + (x.amount === null ? "" : ` (${won(x.amount)})`))))
}

export const loadAccounts = async () => {
  const gapsOnly = /** @type {HTMLInputElement} */ (byId("accounts-gaps")).checked
  try {
    const answer = await api("/api/accounts/list", { page: state.page, page_size: 50, ...(gapsOnly ? { has_gaps: true } : {}) })
    if (answer.status !== 200) return outcome(detailOf(answer), "bad")
    const data = answer.data
    byId("accounts-total").textContent = t("found", { total: data.total })
    byId("accounts-empty").hidden = data.total > 0
    byId("accounts-rows").replaceChildren(...data.items.map((/** @type {Account} */ a) =>
      el("tr", { "data-testid": `account-${a.id}`, class: a.gaps.length > 0 ? "has-gaps" : "" },
        cell(t("bankAccount"), `#${a.id} ${accountName(a)}`, mergeControl(a)),
        el("td", { class: "num", "data-label": t("lastBalance") }, won(a.last_balance)),
        el("td", { class: "time", "data-label": t("lastAt") }, time(a.last_at)),
        el("td", { class: "full", "data-label": t("openGaps"), "data-field": "gaps" },
          a.gaps.length === 0 ? el("span", { class: "muted" }, t("noGaps")) : el("ul", { class: "gaps" }, ...a.gaps.map(gapLine))))))
    pager(byId("accounts-pager"), data, (page) => {
      state.page = page
      void loadAccounts()
    })
    await loadActions()
  } catch (error) {
    outcome(failure(error), "bad")
  }
}
