// Repeatable definitions: stored functions the code calls, each in a .sql file of this folder as
// one `CREATE OR REPLACE` statement. runMigrations applies them after the numbered migrations, in
// the same transaction and under the same lock, each one whose text changed since it was last
// applied (recon.schema_definition records its name and checksum). To change such a function,
// edit its file: no migration. A change of its signature or return type (which CREATE OR REPLACE
// refuses) or dropping one is a numbered migration.
//
// Here, not beside the stores that call them (worker/, wallet/): the migration runner (db, the
// kernel) applies them, and the kernel imports no service folder. The order is the order applied.
import { sourceText } from "../SourceText.ts"

export interface Definition {
  /** The function's name, schema-qualified: the key of its checksum. */
  readonly name: string
  readonly statement: string
}

export const definitions: ReadonlyArray<Definition> = [
  { name: "recon.lease_due_sms", statement: sourceText(import.meta.url, "./lease_due_sms.sql") },
  { name: "recon.ingest_sms_batch", statement: sourceText(import.meta.url, "./ingest_sms_batch.sql") },
  { name: "wallet.agree_batch", statement: sourceText(import.meta.url, "./agree_batch.sql") }
]
