// @ts-check
// How the console writes times (Asia/Seoul, with the zone), amounts (with 원), durations and
// statuses (in words), and the small DOM helpers every view uses.
import { t } from "./i18n.js"

const seoul = new Intl.DateTimeFormat("en-GB", {
  timeZone: "Asia/Seoul", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23"
})

/** @param {Date} date */
const parts = (date) => Object.fromEntries(seoul.formatToParts(date).map((p) => [p.type, p.value]))

/**
 * `2026-05-01 18:02:03 KST`; `short`: without the date when it is today in Seoul.
 * @param {string | null | undefined} iso
 * @param {{ short?: boolean }} [options]
 */
export const time = (iso, options = {}) => {
  if (iso === null || iso === undefined) return "–"
  const p = parts(new Date(iso))
  const today = parts(new Date())
  const day = `${p.year}-${p.month}-${p.day}`
  const clock = `${p.hour}:${p.minute}:${p.second}`
  return options.short === true && day === `${today.year}-${today.month}-${today.day}` ? `${clock} KST` : `${day} ${clock} KST`
}

/**
 * The value of a datetime-local input (a Seoul wall-clock time) as an ISO time with its offset.
 * @param {string} local
 */
export const seoulInputToIso = (local) => local === "" ? undefined : `${local.length === 16 ? `${local}:00` : local}+09:00`

/**
 * "50000.00" → "50,000원"; cents only when there are some.
 * @param {string | null | undefined} amount
 */
export const won = (amount) => {
  if (amount === null || amount === undefined) return "–"
  const [whole = "", cents] = String(amount).split(".")
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  return t("won", { n: cents && !/^0+$/.test(cents) ? `${grouped}.${cents}` : grouped })
}

/**
 * Seconds as "45초", "12분", "1시간 5분", "3일".
 * @param {number} seconds
 */
export const duration = (seconds) => {
  const s = Math.max(0, Math.floor(seconds))
  if (s < 60) return t("d_s", { n: s })
  if (s < 3600) return t("d_m", { n: Math.floor(s / 60) })
  if (s < 86400) return t("d_hm", { h: Math.floor(s / 3600), m: Math.floor((s % 3600) / 60) })
  return t("d_d", { n: Math.floor(s / 86400) })
}

/** @param {string | null | undefined} iso */
export const since = (iso) => iso ? duration((Date.now() - Date.parse(iso)) / 1000) : "–"

/** @param {string} status */
export const statusWord = (status) => t(`s_${status}`)

/** @typedef {Record<string, unknown> & { class?: string, dataset?: Record<string, string> }} Props */

/**
 * An element with properties (`class`, `data-*`, ARIA and read-only ones as attributes, the rest as properties) and children.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown> | null} [props]
 * @param {...(Node | string | null | undefined | false)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export const el = (tag, props, ...children) => {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (key === "class") node.className = String(value)
    else if (key.startsWith("data-") || key.startsWith("aria-") || ["role", "for", "list"].includes(key)) node.setAttribute(key, String(value))
    else /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (node))[key] = value
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child)
  return node
}

/** @param {string} status */
export const badge = (status) => el("span", { class: `badge ${status}`, "data-field": "status", "data-status": status }, statusWord(status))

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
export const byId = (id) => {
  const node = document.getElementById(id)
  if (node === null) throw new Error(`no #${id}`)
  return node
}

/**
 * Previous/next under a paged list.
 * @param {HTMLElement} container
 * @param {{ page: number, page_size: number, total: number }} data
 * @param {(page: number) => void} go
 */
export const pager = (container, data, go) => {
  const pages = Math.max(1, Math.ceil(data.total / data.page_size))
  if (pages <= 1) return container.replaceChildren()
  container.replaceChildren(
    el("button", { type: "button", disabled: data.page <= 1, onclick: () => go(data.page - 1), "data-testid": "page-prev" }, t("prev")),
    el("span", { "data-testid": "page-of" }, t("pageOf", { page: data.page, pages })),
    el("button", { type: "button", disabled: data.page >= pages, onclick: () => go(data.page + 1), "data-testid": "page-next" }, t("next"))
  )
}

/**
 * A table cell with its column's label (shown above it when the table becomes cards on a phone).
 * @param {string} label
 * @param {...(Node | string | null | undefined | false)} children
 */
export const cell = (label, ...children) => el("td", { "data-label": label }, ...children)
