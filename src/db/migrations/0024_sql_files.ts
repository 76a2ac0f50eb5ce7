// SQL as SQL (issue 38). recon.match_pass leaves the string patching of migration 0020 (seven exact
// edits of 0017's text): its full text is 0024_match_pass_text.sql, readable, applied as it is.
// recon.schema_definition records the repeatable definitions (src/db/sql/) runMigrations applies
// after the numbered migrations: each function's name, and the version and checksum of the text
// last applied (a process of an older release, its version lower, leaves a newer text alone).
import { sourceText } from "../SourceText.ts"

export default [
  `CREATE TABLE recon.schema_definition (
    name text PRIMARY KEY,
    version integer NOT NULL,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`,
  sourceText(import.meta.url, "./0024_match_pass_text.sql")
]
