// @ts-check
// The console's words: Korean first, English with ?lang=en (the server sets <html lang>). Static
// text carries data-i18n="key" (and data-i18n-placeholder / data-i18n-aria); code calls t(key, params).
import dictionary from "./words.json" with { type: "json" }

/** @typedef {"ko" | "en"} Lang */

/** @type {Lang} */
export const lang = document.documentElement.lang === "en" ? "en" : "ko"

/** Every key in both languages (words.json; admin's CSV export reads its status words too). */
const words = lang === "en" ? dictionary.en : dictionary.ko

/**
 * The text of `key` with `{name}` replaced by `params[name]`.
 * @param {string} key
 * @param {Record<string, string | number>} [params]
 */
export const t = (key, params = {}) => {
  const text = /** @type {Record<string, string>} */ (words)[key] ?? key
  return text.replace(/\{(\w+)\}/g, (whole, name) => name in params ? String(params[name]) : whole)
}

/** Fills every element marked with data-i18n (text), data-i18n-placeholder and data-i18n-aria. */
export const applyStatic = () => {
  document.title = t("title")
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(/** @type {HTMLElement} */ (node).dataset.i18n ?? "")
  for (const node of document.querySelectorAll("[data-i18n-placeholder]")) {
    ;/** @type {HTMLInputElement} */ (node).placeholder = t(/** @type {HTMLElement} */ (node).dataset.i18nPlaceholder ?? "")
  }
  for (const node of document.querySelectorAll("[data-i18n-aria]")) node.setAttribute("aria-label", t(/** @type {HTMLElement} */ (node).dataset.i18nAria ?? ""))
  const other = /** @type {HTMLAnchorElement} */ (document.getElementById("lang-switch"))
  other.href = `?lang=${lang === "en" ? "ko" : "en"}${location.hash}`
}
