// @ts-check
// Talking to admin_service: the session token (kept in this tab; every answer carries a fresh
// one: the sliding session), JSON calls that answer the envelope, downloads, and the two dialogs
// (a confirmation showing what is decided, and a record's detail).
import { byId, el } from "./format.js"
import { t } from "./i18n.js"

/** @typedef {{ status: number, msg: string, data: any }} Envelope */

const KEY = "admin.token"

export const session = {
  /** @type {string | null} */
  token: sessionStorage.getItem(KEY),
  /** Called when a request is refused for the session (the app signs out). */
  onExpired: () => {}
}

/** @param {string | null} token */
export const setToken = (token) => {
  session.token = token
  if (token) sessionStorage.setItem(KEY, token)
  else sessionStorage.removeItem(KEY)
}

/** @param {Response} response */
const keepToken = (response) => {
  const header = response.headers.get("authorization") ?? ""
  if (/^Bearer /.test(header)) setToken(header.slice(7))
}

/** The account the token names (its `acc` claim), or undefined when it is not a token. */
export const accountOf = (/** @type {string} */ token) => {
  try {
    return /** @type {string} */ (JSON.parse(atob(token.split(".")[1]?.replace(/-/g, "+").replace(/_/g, "/") ?? "")).acc)
  } catch {
    return undefined
  }
}

/**
 * GET (no body) or POST JSON to an operator route: the envelope, whatever its status. A 401 ends the session.
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<Envelope>}
 */
export const api = async (path, body) => {
  /** @type {RequestInit & { headers: Record<string, string> }} */
  const init = { headers: { authorization: `Bearer ${session.token ?? ""}` } }
  if (body !== undefined) {
    init.method = "POST"
    init.headers["content-type"] = "application/json"
    init.body = JSON.stringify(body)
  }
  const response = await fetch(path, init)
  if (response.status === 401) {
    session.onExpired()
    throw new Error("signed out")
  }
  keepToken(response)
  return /** @type {Promise<Envelope>} */ (response.json())
}

/** @param {Envelope} answer */
export const detailOf = (answer) => answer.data && typeof answer.data.detail === "string" ? answer.data.detail : answer.msg

/**
 * Downloads a file from an operator route (the token goes in the header, never in a URL).
 * @param {string} path
 * @param {string} fallbackName
 */
export const download = async (path, fallbackName) => {
  const response = await fetch(path, { headers: { authorization: `Bearer ${session.token ?? ""}` } })
  if (response.status === 401) {
    session.onExpired()
    throw new Error("signed out")
  }
  if (!response.ok) throw new Error(detailOf(await response.json()))
  const blob = await response.blob()
  const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1] ?? fallbackName
  const link = el("a", { href: URL.createObjectURL(blob), download: name })
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000)
  return blob.size
}

/**
 * Shows the outcome of an action where screen readers hear it.
 * @param {string} text
 * @param {"ok" | "bad" | "pending"} [kind]
 */
export const outcome = (text, kind = "ok") => {
  const node = byId("outcome")
  node.textContent = text
  node.classList.toggle("bad", kind === "bad")
  node.classList.toggle("pending", kind === "pending")
}

/**
 * The confirmation dialog: what is decided, shown fact by fact; answers the reason typed (or "" when
 * the dialog asks none), or undefined when cancelled.
 * @param {{ title: string, facts: Array<[string, string]>, ok: string, danger?: boolean, note?: string, reason?: boolean }} what
 * @returns {Promise<string | undefined>}
 */
export const confirmDialog = (what) =>
  new Promise((resolve) => {
    const dialog = /** @type {HTMLDialogElement} */ (byId("confirm"))
    byId("confirm-title").textContent = what.title
    byId("confirm-facts").replaceChildren(...what.facts.flatMap(([term, value]) => [el("dt", null, term), el("dd", null, value)]))
    const note = byId("confirm-note")
    note.textContent = what.note ?? ""
    note.hidden = what.note === undefined
    const reason = /** @type {HTMLInputElement} */ (byId("confirm-reason"))
    reason.value = ""
    byId("confirm-reason-label").hidden = what.reason !== true
    const ok = byId("confirm-ok")
    ok.textContent = what.ok
    ok.className = what.danger === true ? "danger" : "primary"
    dialog.returnValue = ""
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok" ? reason.value.trim() : undefined), { once: true })
    dialog.showModal()
    ;(what.reason === true ? reason : ok).focus()
  })

/**
 * The detail dialog with a title and content.
 * @param {string} title
 * @param {Node[]} content
 */
export const showDetail = (title, content) => {
  const dialog = /** @type {HTMLDialogElement} */ (byId("detail"))
  byId("detail-title").textContent = title
  byId("detail-body").replaceChildren(...content)
  dialog.showModal()
}

/** A request failed on the way (not an answer): what to show. */
export const failure = (/** @type {unknown} */ error) => t("requestFailed", { detail: error instanceof Error ? error.message : String(error) })
