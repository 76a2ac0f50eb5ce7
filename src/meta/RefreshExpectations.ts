// What `meta refresh` expects a running NocoBase to serve after a repair run: each value the run
// wrote, as the HTTP API shows it (field options flattened, JSON columns compared leaf by leaf).
import type { RepairRun } from "./Doctor.ts"
import { isJsonObject, type Json, parseJson, type Path, sameJson } from "./Json.ts"

/** One value the running server must serve: at `path` of the listMeta collection, the listMeta field, or the page node. */
export interface Expectation {
  readonly target: "collection" | "field" | "page"
  readonly collection: string | null
  /** Collection name, field key, or x-uid. */
  readonly key: string
  readonly path: Path
  /** `undefined`: absent. */
  readonly value: Json | undefined
  /** How the value is named in a report line (`options.filterTargetKey`). */
  readonly label: string
}

/** The leaf values that differ between two JSON values (objects are compared key by key). */
const leafChanges = (before: Json | undefined, after: Json | undefined, path: Path = []): Array<{ readonly path: Path; readonly value: Json | undefined }> => {
  if (before !== undefined && after !== undefined && isJsonObject(before) && isJsonObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)])
    return [...keys].flatMap((key) =>
      leafChanges(
        Object.prototype.hasOwnProperty.call(before, key) ? before[key] : undefined,
        Object.prototype.hasOwnProperty.call(after, key) ? after[key] : undefined,
        [...path, key]
      )
    )
  }
  return sameJson(before, after) ? [] : [{ path, value: after }]
}

const parsedColumn = (text: string | null): Json | undefined => {
  if (text === null) return undefined
  try {
    return parseJson(text)
  } catch {
    return undefined
  }
}

/** What the run wrote, as values the running server must serve (the HTTP API flattens field options). */
export const expectationsOf = (run: RepairRun): Array<Expectation> =>
  run.rows.flatMap((row): Array<Expectation> => {
    if (row.table === "fields" && row.column === "interface") {
      return [{ target: "field", collection: row.collection, key: row.key, path: ["interface"], value: row.after, label: "interface" }]
    }
    const target = row.table === "collections" ? "collection" : row.table === "fields" ? "field" : "page"
    const key = row.table === "collections" ? row.collection ?? row.key : row.key
    return leafChanges(parsedColumn(row.before), parsedColumn(row.after)).map((change) => ({
      target,
      collection: row.collection,
      key,
      path: change.path,
      value: change.value,
      label: `${row.column}.${change.path.join(".")}`
    }))
  })
