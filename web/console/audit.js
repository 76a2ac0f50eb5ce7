// @ts-check
// Who decided what: every decision (pass, reject, approve, assign), with who confirmed it over the
// second-approval amount, and the requests still waiting for (or replaced before) a second approval.
import { api, detailOf, failure, outcome } from "./api.js"
import { byId, cell, el, pager, statusWord, time, won } from "./format.js"
import { t } from "./i18n.js"
import { openSms } from "./search.js"

const state = { page: 1 }

export const setupAudit = () => {
  byId("audit-form").addEventListener("submit", (event) => {
    event.preventDefault()
    state.page = 1
    void loadAudit()
  })
}

/** @param {{ action: string, deposit_id: number | null, payer_name: string | null, amount: string | null }} row */
const what = (row) =>
  row.action === "approve" ? `${t("depositFor")} #${row.deposit_id}${row.amount === null ? "" : ` · ${won(row.amount)}`}`
    : row.action === "assign" ? `${row.payer_name ?? ""} · ${won(row.amount)}`
    : "–"

/** @param {string} result */
const resultWord = (result) => result.startsWith("second_approval_") ? t(`r_${result}`) : statusWord(result)

export const loadAudit = async () => {
  const operator = /** @type {HTMLInputElement} */ (byId("audit-operator")).value.trim()
  const smsId = /** @type {HTMLInputElement} */ (byId("audit-sms")).value.trim()
  try {
    const answer = await api("/api/audit/list", {
      page: state.page,
      page_size: 50,
      ...(operator === "" ? {} : { operator }),
      ...(/^\d+$/.test(smsId) ? { sms_id: Number(smsId) } : {})
    })
    if (answer.status !== 200) return outcome(detailOf(answer), "bad")
    const data = answer.data
    byId("audit-total").textContent = t("found", { total: data.total })
    byId("audit-rows").replaceChildren(...data.items.map((/** @type {any} */ row, /** @type {number} */ i) =>
      el("tr", { "data-testid": `audit-${i}`, "data-sms": String(row.sms_id), "data-action": row.action },
        el("td", { class: "time", "data-label": t("at") }, time(row.at)),
        cell(t("smsNo"), el("button", { type: "button", class: "link", onclick: () => openSms(row.sms_id) }, `#${row.sms_id}`)),
        cell(t("decision"), t(`a_${row.action}`)),
        cell(t("operator"), row.operator ?? "–"),
        cell(t("secondOperator"), row.second_operator ?? "–"),
        cell(t("what"), what(row)),
        cell(t("reason"), row.reason ?? "–"),
        cell(t("result"), resultWord(row.result)))))
    pager(byId("audit-pager"), data, (page) => {
      state.page = page
      void loadAudit()
    })
  } catch (error) {
    outcome(failure(error), "bad")
  }
}
