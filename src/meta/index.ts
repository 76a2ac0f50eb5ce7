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
export { NocoBaseError } from "./NocoBaseApi.ts"
export { refresh, type RefreshOptions, type RefreshReport } from "./Refresh.ts"
export { type RefreshChecked, type RefreshProblem, type RefreshTarget } from "./RefreshVerify.ts"
export { auditSnapshot, type Change, type CheckId, type Finding, planSnapshot, reviewSnapshot, type Skipped } from "./Review.ts"
export { SvcMeta, svcMetaProblems } from "./MetadataRules.ts"
export { loadSnapshot, MetaTablesMissing, type Snapshot } from "./Snapshot.ts"
