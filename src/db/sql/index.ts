// Repeatable definitions: stored functions the code calls, each in a .sql file of this folder as
// one `CREATE OR REPLACE` statement. runMigrations applies them after the numbered migrations, in
// the same transaction and under the same lock, each one whose text changed since it was last
// applied (recon.schema_definition records its name, version and checksum). To change such a
// function, edit its file and raise its version here (test/db/Definitions.test.ts holds each
// version to one text): no migration. The version orders releases: during a rolling upgrade a
// process of the older release finds a higher version recorded and leaves the newer text alone
// instead of putting its own back. A change of a signature or return type (which CREATE OR
// REPLACE refuses) or dropping a function is a numbered migration.
//
// Here, not beside the stores that call them (loops/, wallet/): the migration runner (db, the
// kernel) applies them, and the kernel imports no service folder. The order is the order applied.
import { sourceText } from "../SourceText.ts"

export interface Definition {
  /** The function's name, schema-qualified: the key of its checksum. */
  readonly name: string
  /** Raised with every change of the text. */
  readonly version: number
  readonly statement: string
}

export const definitions: ReadonlyArray<Definition> = [
  { name: "recon.lease_due_sms", version: 2, statement: sourceText(import.meta.url, "./lease_due_sms.sql") },
  { name: "recon.ingest_sms_batch", version: 2, statement: sourceText(import.meta.url, "./ingest_sms_batch.sql") },
  { name: "wallet.agree_batch", version: 1, statement: sourceText(import.meta.url, "./agree_batch.sql") }
]
