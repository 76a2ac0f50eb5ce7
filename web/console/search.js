// @ts-check
// Find any SMS: free text (payer name, amount, account digits, SMS number), status, bank, device
// and period (Seoul time), paged; the same filter downloaded as CSV; one SMS's whole story (what
// the readers found, what matching decided, who decided what) in a dialog.
import { api, detailOf, download, failure, outcome, showDetail } from "./api.js"
import { badge, byId, cell, duration, el, pager, seoulInputToIso, statusWord, time, won } from "./format.js"
import { t } from "./i18n.js"

const STATUSES = ["received", "need_check", "rejected", "duplicate", "ignored", "parse_failed", "parsed", "unmatched", "manual_review", "approving", "approved"]

const state = { page: 1 }

/** The form's filter as the API takes it (empty fields left out). */
const filter = () => {
  const form = /** @type {HTMLFormElement} */ (byId("search-form"))
  const data = new FormData(form)
  /** @type {Record<string, string>} */
  const out = {}
  for (const key of ["q", "status", "bank", "device_id"]) {
    const value = String(data.get(key) ?? "").trim()
    if (value !== "") out[key] = value
  }
  for (const key of ["since", "until"]) {
    const iso = seoulInputToIso(String(data.get(key) ?? ""))
    if (iso !== undefined) out[key] = iso
  }
  return out
}

export const setupSearch = () => {
  const status = /** @type {HTMLSelectElement} */ (byId("search-status"))
  status.replaceChildren(el("option", { value: "" }, t("allStatuses")), ...STATUSES.map((s) => el("option", { value: s }, statusWord(s))))
  byId("search-form").addEventListener("submit", (event) => {
    event.preventDefault()
    state.page = 1
    void search()
  })
  byId("search-reset").addEventListener("click", () => {
    ;/** @type {HTMLFormElement} */ (byId("search-form")).reset()
    state.page = 1
    void search()
  })
  byId("search-export").addEventListener("click", async () => {
    outcome(t("exporting"))
    try {
      const size = await download(`/api/sms/export.csv?${new URLSearchParams(filter())}`, "sms.csv")
      outcome(t("exported", { size: `${Math.ceil(size / 1024)} KiB` }))
    } catch (error) {
      outcome(failure(error), "bad")
    }
  })
}

/** The banks and devices offered as filters. */
export const loadFilters = async () => {
  const answer = await api("/api/sms/filters")
  if (answer.status !== 200) return
  byId("bank-options").replaceChildren(...answer.data.banks.map((/** @type {string} */ b) => el("option", { value: b })))
  const device = /** @type {HTMLSelectElement} */ (byId("search-device"))
  const chosen = device.value
  device.replaceChildren(el("option", { value: "" }, t("allDevices")), ...answer.data.devices.map((/** @type {string} */ d) => el("option", { value: d }, d)))
  device.value = chosen
}

/** Shows SMS `q` found by a link elsewhere (an alert, an outcome). @param {string} q */
export const searchFor = (q) => {
  ;/** @type {HTMLFormElement} */ (byId("search-form")).reset()
  ;/** @type {HTMLInputElement} */ (byId("search-q")).value = q
  state.page = 1
  location.hash = "#search"
  void search()
}

export const search = async () => {
  try {
    const answer = await api("/api/sms/list", { ...filter(), page: state.page, page_size: 50 })
    if (answer.status !== 200) return outcome(detailOf(answer), "bad")
    const data = answer.data
    byId("search-total").textContent = t("found", { total: data.total })
    byId("search-results").replaceChildren(...data.items.map((/** @type {any} */ sms) => {
      const row = el("tr", { class: "clickable", "data-testid": `result-${sms.id}`, tabIndex: 0, onclick: () => openSms(sms.id) },
        el("td", { class: "time", "data-label": t("received") }, time(sms.received_at)),
        cell(t("smsNo"), `#${sms.id}`),
        cell(t("status"), badge(sms.status)),
        cell(t("bank"), sms.bank ?? "–"),
        cell(t("payer"), sms.payer_name ?? "–"),
        el("td", { class: "num", "data-label": t("amount") }, won(sms.amount)),
        cell(t("waiting"), sms.waiting_s === null ? "–" : duration(sms.waiting_s)),
        cell(t("device"), sms.device_id))
      row.addEventListener("keydown", (event) => {
        if (event.key === "Enter") openSms(sms.id)
      })
      return row
    }))
    pager(byId("search-pager"), data, (page) => {
      state.page = page
      void search()
    })
  } catch (error) {
    outcome(failure(error), "bad")
  }
}

/** @param {string} title @param {unknown} value */
const block = (title, value) => [el("h3", null, title), el("pre", null, typeof value === "string" ? value : JSON.stringify(value, null, 2))]

/** One SMS's whole story. @param {number} id */
export const openSms = async (id) => {
  try {
    const answer = await api("/api/sms/get", { id })
    if (answer.status !== 200) return outcome(detailOf(answer), "bad")
    const sms = answer.data
    const match = sms.match && typeof sms.match === "object" ? sms.match : null
    const { decisions, ...found } = match ?? {}
    showDetail(t("detailTitle", { id }), [
      el("p", null, badge(sms.status), ` ${time(sms.received_at)} · ${sms.bank ?? t("unknownBank")} · ${t("from")} ${sms.sender} · ${sms.device_id}`),
      el("p", null, `${t("payer")} ${sms.payer_name ?? "–"} · ${t("amount")} ${won(sms.amount)}`, sms.deposit_id === null ? "" : ` · ${t("depositFor")} #${sms.deposit_id}`),
      ...block(t("text"), sms.body),
      ...(sms.parse === null ? [] : block(t("parse"), sms.parse)),
      ...(match === null || Object.keys(found).length === 0 ? [] : block(t("match"), found)),
      ...(decisions === undefined ? [] : [el("h3", null, t("decisions")), el("ul", { "data-testid": "detail-decisions" },
        ...decisions.map((/** @type {any} */ d) =>
          el("li", null, `${time(d.decided_at)} · ${d.operator ?? "–"}${d.second_operator ? ` + ${d.second_operator}` : ""} · ${t(`a_${d.action}`)}` +
            `${d.deposit_id === null ? "" : ` #${d.deposit_id}`}${d.payer_name === null ? "" : ` ${d.payer_name} ${won(d.amount)}`} → ${statusWord(d.to_status)}` +
            `${d.reason ? ` (${d.reason})` : ""}`)))])
    ])
  } catch (error) {
    outcome(failure(error), "bad")
  }
}
