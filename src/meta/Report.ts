// Plain-text renderings of findings, checklist results and repair plans for the terminal.
import type { ChecklistItem } from "./Doctor.ts"
import { showJson } from "./Json.ts"
import type { Change, Finding, Skipped } from "./Review.ts"

const pad = (text: string, width: number) => text + " ".repeat(Math.max(0, width - text.length))

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): Array<string> => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, column) => column === cells.length - 1 ? cell : pad(cell, widths[column]!)).join("  ").trimEnd()
  return [line(header), ...rows.map(line)]
}

/** The audit as a table, one row per finding, then a summary line. */
export const formatFindings = (findings: ReadonlyArray<Finding>, schema: string): Array<string> => {
  if (findings.length === 0) return [`no findings in schema ${schema}`]
  const rows = findings.map((finding) => [
    finding.checklist === null ? finding.check : `${finding.check} [${finding.checklist}]`,
    finding.repair,
    finding.collection ?? "-",
    finding.subject,
    finding.detail
  ])
  const auto = findings.filter((finding) => finding.repair === "auto").length
  return [
    ...table(["CHECK", "REPAIR", "COLLECTION", "SUBJECT", "DETAIL"], rows),
    "",
    `${findings.length} finding${findings.length === 1 ? "" : "s"} in schema ${schema}: ${auto} repaired by \`meta repair --apply\`, ${findings.length - auto} need a person`
  ]
}

/** The five checklist queries: `ok` or how many rows (and which). */
export const formatChecklist = (items: ReadonlyArray<ChecklistItem>): Array<string> =>
  items.map((item) => {
    const shown = item.rows.slice(0, 6).join(", ") + (item.rows.length > 6 ? ", …" : "")
    return `checklist ${item.item}: ${item.rows.length === 0 ? "0 rows" : `${item.rows.length} row${item.rows.length === 1 ? "" : "s"} (${shown})`}  ${item.title}`
  })

const showPath = (column: string, path: ReadonlyArray<string>) => path.length === 0 ? column : `${column}.${path.join(".")}`

/** A repair plan, row by row, one line per changed value. */
export const formatChanges = (changes: ReadonlyArray<Change>): Array<string> =>
  changes.flatMap((change) => [
    `${change.table} ${change.subject} (${change.table === "uiSchemas" ? "x-uid" : "key"} ${change.key}) [${change.rules.join(", ")}]`,
    ...change.columns.flatMap((column) =>
      column.diffs.map((diff) => `  ${showPath(column.column, diff.path)}: ${showJson(diff.before)} -> ${showJson(diff.after)}`)
    )
  ])

export const summariseChanges = (changes: ReadonlyArray<Change>): string => {
  const count = (table: Change["table"]) => changes.filter((change) => change.table === table).length
  return `${changes.length} row${changes.length === 1 ? "" : "s"} (${count("collections")} collections, ${count("fields")} fields, ${count("uiSchemas")} page nodes)`
}

const listed = (items: ReadonlyArray<string>, max = 6) => items.slice(0, max).join(", ") + (items.length > max ? ", …" : "")

/** One line saying what the audit left alone as NocoBase's own, and why; empty when nothing was. */
export const formatSkipped = (skipped: Skipped): Array<string> => {
  const parts: Array<string> = []
  if (skipped.platform.length > 0) {
    const origins = [...new Set(skipped.platform.map((item) => item.origin))]
    parts.push(
      `${skipped.platform.length} platform-internal collection${skipped.platform.length === 1 ? "" : "s"} ` +
        `(${listed(skipped.platform.map((item) => item.collection))}) with their fields and page nodes, ` +
        `defined in code by ${listed(origins, 3)} (options.origin)`
    )
  }
  if (skipped.systemFields.length > 0) {
    parts.push(
      `${skipped.systemFields.length} NocoBase system field${skipped.systemFields.length === 1 ? "" : "s"} ` +
        `(${listed(skipped.systemFields)}: read-only, with a system-info interface of NocoBase's own)`
    )
  }
  return parts.length === 0 ? [] : [`left alone as NocoBase's own: ${parts.join("; ")}`]
}
