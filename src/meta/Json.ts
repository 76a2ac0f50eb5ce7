// JSON values of the NocoBase `json` columns: read without losing number text, edited by path,
// written back compactly. Only the paths a repair sets change; everything else keeps its value.

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
export type JsonObject = { readonly [key: string]: Json }
export type Path = ReadonlyArray<string>

declare global {
  interface JSON {
    /** Node ≥ 21: a value that JSON.stringify writes as the given text. */
    rawJSON(text: string): unknown
  }
}

/** A JSON.parse reviver that keeps number literals whose text a JS number would change (big ids, `1.0`). */
export const keepNumberText = (_key: string, value: unknown, context?: { readonly source?: string }): unknown =>
  typeof value === "number" && context?.source !== undefined && String(value) !== context.source
    ? JSON.rawJSON(context.source)
    : value

/** JSON.parse that keeps number text (see keepNumberText). */
export const parseJson = (text: string): Json => JSON.parse(text, keepNumberText) as Json

export const stringifyJson = (value: Json): string => JSON.stringify(value)

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) !== null

export const hasKey = (object: JsonObject, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key)

export const getPath = (value: Json | undefined, path: Path): Json | undefined => {
  let current: Json | undefined = value
  for (const key of path) {
    if (current === undefined || !isJsonObject(current) || !hasKey(current, key)) return undefined
    current = current[key]
  }
  return current
}

export const getString = (value: Json | undefined, path: Path): string | undefined => {
  const found = getPath(value, path)
  return typeof found === "string" ? found : undefined
}

/** A copy of `object` with `value` at `path`; missing or non-object intermediate levels become objects. */
export const setPath = (object: JsonObject, path: Path, value: Json): JsonObject => {
  const [head, ...rest] = path
  if (head === undefined) return object
  if (rest.length === 0) return { ...object, [head]: value }
  const child = hasKey(object, head) ? object[head] : undefined
  return { ...object, [head]: setPath(isJsonObject(child) ? child : {}, rest, value) }
}

export const jsonEquals = (a: Json | undefined, b: Json | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b))

/** Equal as JSON values whatever the order of object keys (a server may serve an object's keys in another order). */
export const sameJson = (a: Json | undefined, b: Json | undefined): boolean => {
  if (a !== undefined && b !== undefined && isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((key) => hasKey(b, key) && sameJson(a[key], b[key]))
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameJson(item, b[i]))
  return jsonEquals(a, b)
}

/** How a value reads in a diff line: JSON text, or `(absent)`. */
export const showJson = (value: Json | undefined): string => value === undefined ? "(absent)" : JSON.stringify(value)
