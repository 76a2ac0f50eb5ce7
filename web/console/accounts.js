// @ts-check
// Balance continuity (the reconciliation aids), passed on from recon's /accounts/list: each account
// whose messages print a balance, its last balance, and its open gaps (money the balance shows
// moving that no SMS received tells of: one never arrived, or was never read). A gap's SMS open
// their story.
import { api, detailOf, failure, outcome } from "./api.js"
import { byId, cell, el, pager, time, won } from "./format.js"
import { t } from "./i18n.js"
import { openSms } from "./search.js"

/**
 * @typedef {{ after_sms_id: number, before_sms_id: number, unexplained: string, since: string }} Gap
 * @typedef {{ id: number, account: string | null, bank: string | null, device_id: string | null, sender: string | null,
 *   last_balance: string | null, last_at: string | null, gaps: Gap[] }} Account
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

/** One open gap: how much moved unseen, between which SMS, since when. @param {Gap} gap */
const gapLine = (gap) => {
  const out = gap.unexplained.startsWith("-")
  return el("li", { "data-testid": `gap-${gap.after_sms_id}-${gap.before_sms_id}` },
    el("strong", { class: "bad" }, t(out ? "gapOut" : "gapIn", { amount: won(out ? gap.unexplained.slice(1) : gap.unexplained) })),
    ` · SMS `, smsLink(gap.after_sms_id), " → ", smsLink(gap.before_sms_id), ` · ${t("alertSince", { since: time(gap.since, { short: true }) })}`)
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
        cell(t("bankAccount"), accountName(a)),
        el("td", { class: "num", "data-label": t("lastBalance") }, won(a.last_balance)),
        el("td", { class: "time", "data-label": t("lastAt") }, time(a.last_at)),
        el("td", { class: "full", "data-label": t("openGaps"), "data-field": "gaps" },
          a.gaps.length === 0 ? el("span", { class: "muted" }, t("noGaps")) : el("ul", { class: "gaps" }, ...a.gaps.map(gapLine))))))
    pager(byId("accounts-pager"), data, (page) => {
      state.page = page
      void loadAccounts()
    })
  } catch (error) {
    outcome(failure(error), "bad")
  }
}
