// The metadata doctor's public surface: the doctor's operations on the database, the refresh of a
// running NocoBase, and the SvcPrettyField rules shared with the NocoBase plugin.
export {
  applyRepairs,
  audit,
  auditReport,
  checklist,
  type ChecklistItem,
  latestRun,
  LOG_SCHEMA,
  planRepairs,
  RepairConflict,
  type RepairedColumn,
  type RepairRun,
  UndoFailed,
  undoRepairs,
  undoRepairs as undo
} from "./Doctor.ts"
export {
  commaSeparated,
  domainHref,
  emailHref,
  formatUnixTimestamp,
  htmlToPlainText,
  parseSeoulDateTime,
  phoneHref,
  type PrettyDisplay,
  prettyDisplay,
  type PrettyNode,
  prettyNodeFor,
  rewriteInsertAdjacentRowKey,
  type RowKeyRewrite,
  SEOUL,
  type SvcPrettyFieldProps,
  urlHref
} from "./PrettyField.ts"
export {
  NocoBaseError,
  refresh,
  type RefreshChecked,
  type RefreshOptions,
  type RefreshProblem,
  type RefreshReport,
  type RefreshTarget
} from "./Refresh.ts"
export { auditSnapshot, type Change, type CheckId, type Finding, planSnapshot, reviewSnapshot, type Skipped } from "./Review.ts"
export { SvcMeta, svcMetaProblems } from "./MetadataRules.ts"
export { loadSnapshot, MetaTablesMissing, type Snapshot } from "./Snapshot.ts"
