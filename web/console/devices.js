// @ts-check
// The phones and the senders: push registrations (add with a generated secret, delete), devices
// (trust, untrust, delete) and the whitelist of bank sender numbers (add, delete), each passed on
// to recon as the signed-in operator; deletions behind a confirmation.
import { api, confirmDialog, detailOf, failure, outcome } from "./api.js"
import { byId, cell, el, pager, time } from "./format.js"
import { t } from "./i18n.js"

const pages = { registrations: 1, devices: 1, phones: 1 }
const PAGE_SIZE = 20

/**
 * Sends an action and says what happened; reloads the lists. Answers the data, or undefined.
 * @param {string} path @param {unknown} body @param {(data: any) => string} said
 */
const act = async (path, body, said) => {
  try {
    const answer = await api(path, body)
    if (answer.status !== 200) {
      outcome(detailOf(answer), "bad")
      return undefined
    }
    outcome(said(answer.data))
    void loadDevices()
    return answer.data
  } catch (error) {
    outcome(failure(error), "bad")
    return undefined
  }
}

/** @param {string} message @param {string} path @param {number} id @param {string} name */
const remove = async (message, path, id, name) => {
  const ok = await confirmDialog({ title: t("confirmDelete"), facts: [], note: message, ok: t("okDelete"), danger: true })
  if (ok === undefined) return
  await act(path, { id }, () => t("deleted", { what: name }))
}

/** 24 random bytes, base64url: a signing secret for the phone's app. */
const newSecret = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(24)))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

export const setupDevices = () => {
  const registration = /** @type {HTMLFormElement} */ (byId("registration-form"))
  byId("secret-generate").addEventListener("click", () => {
    ;/** @type {HTMLInputElement} */ (registration.elements.namedItem("secret")).value = newSecret()
  })
  registration.addEventListener("submit", async (event) => {
    event.preventDefault()
    const data = new FormData(registration)
    /** @type {Record<string, unknown>} */
    const body = { device_id: String(data.get("device_id")).trim(), format: String(data.get("format")) }
    for (const key of ["name", "secret", "api_url"]) {
      const value = String(data.get(key) ?? "").trim()
      if (value !== "") body[key] = value
    }
    const silence = String(data.get("silence_alert_s") ?? "").trim()
    if (silence !== "") body["silence_alert_s"] = Number(silence)
    const added = await act("/api/pushsvc/add_device", body, (r) =>
      `${t("saved", { what: r.device_id })} · ${t("webhook")}: ${r.webhook_url}` + (body["secret"] === undefined ? "" : ` · ${t("secretShown", { secret: String(body["secret"]) })}`))
    if (added !== undefined) registration.reset()
  })
  const phone = /** @type {HTMLFormElement} */ (byId("phone-form"))
  phone.addEventListener("submit", async (event) => {
    event.preventDefault()
    const data = new FormData(phone)
    /** @type {Record<string, unknown>} */
    const body = { phone: String(data.get("phone")).trim() }
    for (const key of ["bank", "note"]) {
      const value = String(data.get(key) ?? "").trim()
      if (value !== "") body[key] = value
    }
    const added = await act("/api/phone/add", body, (p) => t("saved", { what: `${p.phone}${p.bank === null ? "" : ` (${p.bank})`}` }))
    if (added !== undefined) phone.reset()
  })
}

/** @param {string} path @param {keyof typeof pages} key @param {(item: any) => HTMLElement} row */
const list = async (path, key, row) => {
  const answer = await api(path, { page: pages[key], page_size: PAGE_SIZE })
  if (answer.status !== 200) return outcome(detailOf(answer), "bad")
  byId(key).replaceChildren(...answer.data.items.map(row))
  pager(byId(`${key}-pager`), answer.data, (page) => {
    pages[key] = page
    void loadDevices()
  })
}

export const loadDevices = async () => {
  try {
    await Promise.all([
      list("/api/pushsvc/list", "registrations", (r) =>
        el("tr", { "data-testid": `registration-${r.device_id}` },
          el("td", { class: "full", "data-label": t("deviceId") }, el("strong", null, r.device_id)),
          cell(t("name"), r.name ?? "–"),
          cell(t("format"), r.format),
          el("td", { class: "full", "data-label": t("webhook") }, el("code", { class: "url" }, r.webhook_url)),
          cell(t("listener"), r.enabled ? r.listener_status : `${r.listener_status} (off)`),
          cell(t("lastEvent"), time(r.last_event_at)),
          cell(t("silenceAlert"), r.silence_alert_s === null ? t("never") : `${r.silence_alert_s} s`),
          el("td", null, el("button", { type: "button", class: "danger", "data-testid": `registration-delete-${r.device_id}`,
            onclick: () => remove(t("deleteRegistration", { what: r.device_id }), "/api/pushsvc/delete", r.id, r.device_id) }, t("delete"))))),
      list("/api/device/list", "devices", (d) =>
        el("tr", { "data-testid": `device-${d.device_id}` },
          el("td", { class: "full", "data-label": t("deviceId") }, el("strong", null, d.device_id)),
          cell(t("name"), d.name ?? "–"),
          cell(t("trust"), el("span", { "data-field": "trusted" }, d.trusted ? t("trusted") : t("untrusted"))),
          cell(t("lastSeen"), time(d.last_seen_at)),
          el("td", { class: "num", "data-label": t("smsCount") }, String(d.sms_count)),
          el("td", { class: "full" }, el("span", { class: "form-actions" },
            el("button", { type: "button", "data-testid": `device-trust-${d.device_id}`,
              onclick: () => act("/api/device/trust", { id: d.id, trusted: !d.trusted }, (x) => t("saved", { what: `${x.device_id}: ${x.trusted ? t("trusted") : t("untrusted")}` })) },
              d.trusted ? t("doUntrust") : t("doTrust")),
            el("button", { type: "button", class: "danger", "data-testid": `device-delete-${d.device_id}`,
              onclick: () => remove(t("deleteDevice", { what: d.device_id }), "/api/device/delete", d.id, d.device_id) }, t("delete")))))),
      list("/api/phone/list", "phones", (p) =>
        el("tr", { "data-testid": `phone-${p.phone}` },
          cell(t("phone"), el("strong", null, p.phone)),
          cell(t("bank"), p.bank ?? "–"),
          cell(t("note"), p.note ?? "–"),
          cell(t("added"), time(p.created_at)),
          el("td", null, el("button", { type: "button", class: "danger", "data-testid": `phone-delete-${p.phone}`,
            onclick: () => remove(t("deletePhone", { what: p.phone }), "/api/phone/delete", p.id, p.phone) }, t("delete")))))
    ])
  } catch (error) {
    outcome(failure(error), "bad")
  }
}
