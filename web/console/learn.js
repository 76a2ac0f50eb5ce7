// @ts-check
// Learning from the person: after an SMS was read by eye, the offer to make a template from that
// very message. The server drafts the rule (the marked name and amount as its groups), validates
// it like any rule, and says how many of the sender's other unread SMS it reads; saving adds it
// through recon (and, if asked, reads those SMS again at once).
import { api, detailOf, failure, outcome } from "./api.js"
import { byId, el, won } from "./format.js"
import { t } from "./i18n.js"

const panel = () => byId("learn")

const close = () => {
  panel().hidden = true
  panel().replaceChildren()
}

/**
 * Shows the offer for SMS `smsId`, read as `payer` and `amount`.
 * @param {number} smsId @param {string} payer @param {string} amount
 */
export const offerTemplate = (smsId, payer, amount) => {
  const node = panel()
  node.hidden = false
  node.replaceChildren(
    el("h3", null, t("learnTitle")),
    el("p", null, t("learnOffer", { id: smsId })),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "primary", "data-testid": "learn-draft", onclick: () => draft(smsId, payer, amount) }, t("learnDraft")),
      el("button", { type: "button", "data-testid": "learn-dismiss", onclick: close }, t("learnDismiss"))))
}

/** @param {number} smsId @param {string} payer @param {string} amount */
const draft = async (smsId, payer, amount) => {
  const node = panel()
  try {
    const answer = await api("/api/template/draft", { sms_id: smsId, payer_name: payer, amount })
    if (answer.status !== 200) {
      node.replaceChildren(el("h3", null, t("learnTitle")), el("p", { class: "bad", "data-testid": "learn-error" }, t("learnCannot", { detail: detailOf(answer) })),
        el("button", { type: "button", onclick: close }, t("learnDismiss")))
      return
    }
    const d = answer.data
    const bank = el("input", { value: d.bank ?? "", required: true, maxLength: 64, list: "bank-options", "data-testid": "learn-bank" })
    const reread = el("input", { type: "checkbox", checked: d.reads > 0, disabled: d.reads === 0, "data-testid": "learn-reread" })
    const form = el("form", { class: "filters" },
      el("label", null, t("learnBank"), bank),
      el("label", { class: "check" }, reread, t("learnReread", { n: d.reads })),
      el("div", { class: "form-actions" },
        el("button", { type: "submit", class: "primary", "data-testid": "learn-save" }, t("learnSave")),
        el("button", { type: "button", onclick: close }, t("learnDismiss"))))
    form.addEventListener("submit", async (event) => {
      event.preventDefault()
      try {
        const saved = await api("/api/template/add", { sms_id: smsId, bank: bank.value.trim(), rule: d.rule, reread: reread.checked })
        if (saved.status !== 200) return outcome(t("learnCannot", { detail: detailOf(saved) }), "bad")
        const n = saved.data.reread.length
        outcome(t(n > 0 ? "learnSaved" : "learnSavedNone", { id: saved.data.template.id, bank: saved.data.template.bank, n }))
        close()
      } catch (error) {
        outcome(failure(error), "bad")
      }
    })
    node.replaceChildren(
      el("h3", null, t("learnTitle")),
      el("p", { class: "muted" }, t("learnRule")),
      el("code", { "data-testid": "learn-rule" }, d.rule),
      el("p", { "data-testid": "learn-reads" }, d.tried === 0 ? t("learnNone") : t("learnReads", { sender: d.sender, tried: d.tried, reads: d.reads })),
      el("ul", { hidden: d.examples.length === 0 }, ...d.examples.map((/** @type {{ sms_id: number, payer_name: string, amount: string }} */ e) =>
        el("li", null, `#${e.sms_id}: ${e.payer_name} · ${won(e.amount)}`))),
      form)
  } catch (error) {
    outcome(failure(error), "bad")
  }
}
