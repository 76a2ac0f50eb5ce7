// SvcPrettyField (§2.6) as plain functions the NocoBase plugin can share: what a value renders as,
// the read-only node built from a field's svcMeta, and the rowKey rewrite of uiSchemas:insertAdjacent.
import { DateTime, Option } from "effect"
import { getPath, getString, isJsonObject, type Json, type JsonObject, setPath } from "./Json.ts"
import { type Preview, svcMetaProblems, type UiKind, type Validator } from "./MetadataRules.ts"

/** unix_timestamp values are always shown and written back in this zone, whatever svcMeta.timezone says. */
export const SEOUL = "Asia/Seoul"

export interface SvcPrettyFieldProps {
  readonly fieldName: string
  readonly uiKind: UiKind
  readonly preview: Preview | "none"
  readonly copyable: boolean
  readonly validator: Validator | "none"
  readonly ellipsis: boolean
}

/** What SvcPrettyField renders for a value. `copy` is the text of the copy action, present when `copyable`. */
export type PrettyDisplay =
  | { readonly kind: "empty" }
  | { readonly kind: "image"; readonly src: string; readonly copy?: string }
  | { readonly kind: "link"; readonly href: string; readonly text: string; readonly download: boolean; readonly copy?: string }
  | { readonly kind: "time"; readonly text: string; readonly iso: string; readonly timeZone: typeof SEOUL; readonly copy?: string }
  | { readonly kind: "text"; readonly text: string; readonly ellipsis: boolean; readonly copy?: string }

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/
const EMAIL = /^[^\s@<>()"',;:]+@[^\s@<>()"',;:]+\.[^\s@<>()"',;:]+$/
const DOMAIN = /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$|^(?=.{1,253}$)(?:xn--[A-Za-z0-9-]+\.)+[A-Za-z0-9-]{2,63}$/
const IMAGE_DATA_URI = /^data:image\/(?:png|jpe?g|gif|webp|avif|bmp);base64,[A-Za-z0-9+/=\s]+$/

const asText = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return undefined
  if (typeof value === "string") return value.trim() === "" ? undefined : value.trim()
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return String(value)
  return JSON.stringify(value)
}

/** An http(s) address for a url value: kept when http(s), `https://` added when it has no scheme, refused otherwise. */
export const urlHref = (value: string): string | undefined => {
  const text = value.trim()
  if (text === "" || /\s/.test(text)) return undefined
  if (/^https?:\/\//i.test(text)) return text
  if (text.startsWith("//")) return `https:${text}`
  if (SCHEME.test(text) && !/^[^:/]+:\d+(?:\/|$)/.test(text)) return undefined // javascript:, data:, ftp:, … are not links
  return `https://${text}`
}

export const emailHref = (value: string): string | undefined => {
  const address = value.trim().replace(/^mailto:/i, "")
  return EMAIL.test(address) ? `mailto:${address}` : undefined
}

/** `tel:` with the digits (and a leading +) of the number as written. */
export const phoneHref = (value: string): string | undefined => {
  const text = value.trim().replace(/^tel:/i, "")
  const digits = text.replace(/[^0-9]/g, "")
  if (digits.length < 3 || /[^0-9+\-().\s/]/.test(text)) return undefined
  return `tel:${text.startsWith("+") ? "+" : ""}${digits}`
}

export const domainHref = (value: string): string | undefined => {
  const domain = value.trim().replace(/^https?:\/\//i, "").replace(/\/+$/, "").toLowerCase()
  return DOMAIN.test(domain) ? `https://${domain}` : undefined
}

const imageSrc = (value: string): string | undefined => {
  const text = value.trim()
  if (IMAGE_DATA_URI.test(text)) return text
  if (text.startsWith("/") && !text.startsWith("//")) return text
  return urlHref(text)
}

const pad2 = (n: number) => String(n).padStart(2, "0")

/** Seconds (or milliseconds, from 10^11 up) since the epoch; numbers, numeric strings and bigints accepted. */
const epochMillis = (value: unknown): number | undefined => {
  const number = typeof value === "bigint"
    ? Number(value)
    : typeof value === "number"
    ? value
    : typeof value === "string" && /^\s*-?\d+(?:\.\d+)?\s*$/.test(value)
    ? Number(value)
    : Number.NaN
  if (!Number.isFinite(number)) return undefined
  return Math.abs(number) >= 1e11 ? Math.trunc(number) : Math.trunc(number * 1000)
}

/** A unix timestamp as `YYYY-MM-DD HH:mm:ss` in Asia/Seoul, with its ISO form. */
export const formatUnixTimestamp = (value: unknown): { readonly text: string; readonly iso: string } | undefined => {
  const millis = epochMillis(value)
  if (millis === undefined) return undefined
  return Option.getOrUndefined(Option.map(DateTime.makeZoned(millis, { timeZone: SEOUL }), (zoned) => {
    const p = DateTime.toParts(zoned)
    const text = `${String(p.year).padStart(4, "0")}-${pad2(p.month)}-${pad2(p.day)} ${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`
    const offset = DateTime.formatIsoOffset(zoned).slice(-6)
    return { text, iso: `${text.replace(" ", "T")}${offset}` }
  }))
}

const WALL_TIME = /^\s*(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?\s*$/

/**
 * The unix timestamp (seconds) to write back for a time typed in the edit drawer: a wall time
 * (`2024-03-01 09:00[:00]`) is read in Asia/Seoul; a string with an explicit offset is honoured.
 */
export const parseSeoulDateTime = (text: string): number | undefined => {
  const wall = WALL_TIME.exec(text)
  if (wall !== null) {
    const [, year, month, day, hour, minute, second] = wall
    const parts = {
      year: Number(year),
      month: Number(month),
      day: Number(day),
      hour: Number(hour ?? 0),
      minute: Number(minute ?? 0),
      second: Number(second ?? 0)
    }
    if (parts.month < 1 || parts.month > 12 || parts.day < 1 || parts.day > 31 || parts.hour > 23 || parts.minute > 59 || parts.second > 59) {
      return undefined
    }
    const zoned = DateTime.makeZoned(parts, { timeZone: SEOUL, adjustForTimeZone: true })
    return Option.getOrUndefined(Option.map(zoned, (dt) => {
      const back = DateTime.toParts(dt)
      // reject dates that rolled over (2024-02-31)
      return back.day === parts.day && back.month === parts.month ? Math.floor(DateTime.toEpochMillis(dt) / 1000) : undefined
    }))
  }
  if (!/(?:Z|[+-]\d{2}:?\d{2})\s*$/i.test(text)) return undefined
  return Option.getOrUndefined(Option.map(DateTime.make(text.trim()), (dt) => Math.floor(DateTime.toEpochMillis(dt) / 1000)))
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " " }

/** Plain text of an HTML fragment: no tags, scripts or styles; entities decoded; whitespace collapsed. */
export const htmlToPlainText = (html: string): string =>
  html
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<(script|style|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(/<\/?(?:p|div|br|li|ul|ol|tr|td|th|h[1-6]|blockquote|section|article|table)\b[^>]*>/gi, " ")
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, body: string) => {
      if (body.startsWith("#x") || body.startsWith("#X")) {
        const code = Number.parseInt(body.slice(2), 16)
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity
      }
      if (body.startsWith("#")) {
        const code = Number.parseInt(body.slice(1), 10)
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity
      }
      return ENTITIES[body.toLowerCase()] ?? entity
    })
    .replace(/\s+/g, " ")
    .trim()

const itemLabel = (item: unknown): string | undefined => {
  if (isJsonObject(item)) {
    for (const key of ["label", "title", "name", "value"]) {
      const found = asText(item[key])
      if (found !== undefined) return found
    }
    return JSON.stringify(item)
  }
  return asText(item)
}

/** An array value (or its JSON text) as comma-separated text. */
export const commaSeparated = (value: unknown): string | undefined => {
  let items: unknown = value
  if (typeof value === "string") {
    const text = value.trim()
    if (text.startsWith("[")) {
      try {
        items = JSON.parse(text)
      } catch {
        return text === "" ? undefined : text
      }
    } else {
      return text === "" ? undefined : text
    }
  }
  if (!Array.isArray(items)) return asText(items)
  const labels = items.map(itemLabel).filter((label): label is string => label !== undefined)
  return labels.length === 0 ? undefined : labels.join(", ")
}

const withCopy = <A extends PrettyDisplay>(display: A, copyable: boolean, copy: string): A =>
  copyable ? { ...display, copy } : display

/** How SvcPrettyField shows `value` for the given props (the table of §2.6). */
export const prettyDisplay = (value: unknown, props: SvcPrettyFieldProps): PrettyDisplay => {
  const text = (shown: string, copy: string = shown): PrettyDisplay =>
    withCopy({ kind: "text", text: shown, ellipsis: props.ellipsis }, props.copyable, copy)
  if (props.uiKind === "m2m_array" || props.uiKind === "multi_select") {
    const joined = commaSeparated(value)
    return joined === undefined ? { kind: "empty" } : text(joined)
  }
  if (props.uiKind === "unix_timestamp") {
    if (asText(value) === undefined) return { kind: "empty" }
    const time = formatUnixTimestamp(value)
    return time === undefined
      ? text(asText(value)!)
      : withCopy({ kind: "time", text: time.text, iso: time.iso, timeZone: SEOUL }, props.copyable, time.text)
  }
  const raw = asText(value)
  if (raw === undefined) return { kind: "empty" }
  const link = (href: string | undefined, download = false): PrettyDisplay =>
    href === undefined ? text(raw) : withCopy({ kind: "link", href, text: raw, download }, props.copyable, raw)
  switch (props.uiKind) {
    case "attachment_url": {
      if (props.preview === "image") {
        const src = imageSrc(raw)
        return src === undefined ? text(raw) : withCopy({ kind: "image", src }, props.copyable, raw)
      }
      return link(imageSrc(raw), props.preview === "download")
    }
    case "url":
      return link(urlHref(raw))
    case "email":
      return link(emailHref(raw))
    case "phone":
      return link(phoneHref(raw))
    case "domain":
      return link(domainHref(raw))
    case "richtext_html": {
      const plain = htmlToPlainText(raw)
      return plain === "" ? { kind: "empty" } : text(plain)
    }
    default:
      return text(raw)
  }
}

// ---------------------------------------------------------------------------------------------
// the node built from a field's svcMeta

const KIND_OF_INTERFACE: Readonly<Record<string, UiKind>> = {
  url: "url",
  email: "email",
  phone: "phone",
  unixTimestamp: "unix_timestamp",
  percent: "percent",
  multipleSelect: "multi_select"
}
const DEFAULT_PREVIEW: Partial<Record<UiKind, Preview>> = {
  attachment_url: "image",
  url: "link",
  domain: "link",
  email: "link",
  phone: "link"
}
const DEFAULT_VALIDATOR: Partial<Record<UiKind, Validator>> = { url: "url", domain: "domain", internal_path: "internal_path" }
/** Kinds whose values run long in a table cell. */
const ELLIPSIS_KINDS: ReadonlySet<UiKind> = new Set(["url", "attachment_url", "internal_path", "richtext_html", "m2m_array", "multi_select"])

export interface PrettyNode {
  readonly type: "string"
  readonly name: string
  readonly "x-collection-field": string
  readonly "x-component": "SvcPrettyField"
  readonly "x-read-pretty": true
  readonly "x-component-props": SvcPrettyFieldProps
}

/**
 * The read-only SvcPrettyField node for a field, from its `options.svcMeta` (uiKind falls back to
 * the interface: url, email, phone, unixTimestamp, percent, multipleSelect). Fails with the reasons
 * when svcMeta is malformed or no uiKind can be told.
 */
export const prettyNodeFor = (
  collection: string,
  field: { readonly name: string; readonly interface?: string | null; readonly options: JsonObject }
): { readonly _tag: "ok"; readonly node: PrettyNode } | { readonly _tag: "error"; readonly problems: ReadonlyArray<string> } => {
  const svcMeta = field.options["svcMeta"]
  const problems = svcMetaProblems(svcMeta)
  if (problems.length > 0) return { _tag: "error", problems: problems.map((problem) => `svcMeta: ${problem}`) }
  const meta: JsonObject = isJsonObject(svcMeta) ? svcMeta : {}
  const uiKind = (meta["uiKind"] as UiKind | undefined) ??
    (field.interface === null || field.interface === undefined ? undefined : KIND_OF_INTERFACE[field.interface])
  if (uiKind === undefined) {
    return { _tag: "error", problems: [`${collection}.${field.name} has no svcMeta.uiKind and its interface does not imply one`] }
  }
  const props: SvcPrettyFieldProps = {
    fieldName: field.name,
    uiKind,
    preview: (meta["preview"] as Preview | undefined) ?? DEFAULT_PREVIEW[uiKind] ?? "none",
    copyable: meta["copyable"] === true,
    validator: (meta["validator"] as Validator | undefined) ?? DEFAULT_VALIDATOR[uiKind] ?? "none",
    ellipsis: ELLIPSIS_KINDS.has(uiKind)
  }
  return {
    _tag: "ok",
    node: {
      type: "string",
      name: field.name,
      "x-collection-field": `${collection}.${field.name}`,
      "x-component": "SvcPrettyField",
      "x-read-pretty": true,
      "x-component-props": props
    }
  }
}

// ---------------------------------------------------------------------------------------------
// uiSchemas:insertAdjacent rowKey rewrite

export interface RowKeyRewrite {
  /** Where in the payload, e.g. `schema.properties.abc.x-decorator-props.rowKey`. */
  readonly path: string
  readonly collection: string
  readonly from: "id"
  readonly to: string
}

/**
 * What the plugin-svc-preset-actions middleware does to a `uiSchemas:insertAdjacent` payload:
 * every table block (`TableBlockProvider` decorator props, `TableV2` component props under it)
 * whose rowKey is `id` gets the collection's filterTargetKey instead, when that is known and not
 * `id`. `keyOf` answers a collection's filterTargetKey (data source `main` when not given).
 * The input is not modified.
 */
export const rewriteInsertAdjacentRowKey = <A>(
  payload: A,
  keyOf: (collection: string, dataSource: string) => string | undefined
): { readonly payload: A; readonly rewrites: ReadonlyArray<RowKeyRewrite> } => {
  const rewrites: Array<RowKeyRewrite> = []
  const visit = (value: Json, path: ReadonlyArray<string>, context: { readonly collection: string; readonly dataSource: string } | undefined): Json => {
    if (Array.isArray(value)) return value.map((item, i) => visit(item, [...path, String(i)], context))
    if (!isJsonObject(value)) return value
    let node: JsonObject = value
    let inner = context
    const fix = (propsKey: string, collection: string) => {
      if (getPath(node, [propsKey, "rowKey"]) !== "id") return
      const key = keyOf(collection, inner?.dataSource ?? "main")
      if (key === undefined || key === "" || key === "id") return
      node = setPath(node, [propsKey, "rowKey"], key)
      rewrites.push({ path: [...path, propsKey, "rowKey"].join("."), collection, from: "id", to: key })
    }
    if (node["x-decorator"] === "TableBlockProvider") {
      const collection = getString(node, ["x-decorator-props", "collection"])
      if (collection !== undefined && collection !== "") {
        inner = { collection, dataSource: getString(node, ["x-decorator-props", "dataSource"]) ?? "main" }
        fix("x-decorator-props", collection)
      }
    }
    if (node["x-component"] === "TableV2" && inner !== undefined) fix("x-component-props", inner.collection)
    const out: Record<string, Json> = {}
    for (const [key, child] of Object.entries(node)) {
      out[key] = key === "x-decorator-props" || key === "x-component-props" ? child : visit(child, [...path, key], inner)
    }
    return out
  }
  return { payload: visit(payload as Json, [], undefined) as A, rewrites }
}
