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
// kernel) applies them, and the kernel imports no service folder. The order is the order applied:
// each function after those it calls.
//
// Every function of recon and wallet that the code calls, directly or through another of these,
// is here, but two kinds that stay in the numbered migrations:
// - the trigger functions (recon.count_sms_status, recon.sms_webhook_event, …), with their
//   triggers: they read their table's columns and fire on its writes, so each must be the text of
//   the migration being applied when a later migration alters or fills that table; a definition
//   is applied only after the last migration;
// - recon.name_key and recon.loose_name_key: stored generated columns and indexes are computed by
//   them, so a new text is a migration that also recomputes those (CREATE OR REPLACE would leave
//   the stored keys of the old text).
import { sourceText } from "../SourceText.ts"

export interface Definition {
  /** The function's name, schema-qualified: the key of its checksum. */
  readonly name: string
  /** Raised with every change of the text. */
  readonly version: number
  readonly statement: string
}

export const definitions: ReadonlyArray<Definition> = [
  { name: "recon.lock_sms", version: 1, statement: sourceText(import.meta.url, "./lock_sms.sql") },
  { name: "recon.store_sms", version: 1, statement: sourceText(import.meta.url, "./store_sms.sql") },
  { name: "recon.ingest_sms_batch", version: 2, statement: sourceText(import.meta.url, "./ingest_sms_batch.sql") },
  { name: "recon.amount_text", version: 1, statement: sourceText(import.meta.url, "./amount_text.sql") },
  { name: "recon.iso_time", version: 1, statement: sourceText(import.meta.url, "./iso_time.sql") },
  { name: "recon.lock_match_keys", version: 1, statement: sourceText(import.meta.url, "./lock_match_keys.sql") },
  { name: "recon.emit_event", version: 1, statement: sourceText(import.meta.url, "./emit_event.sql") },
  { name: "recon.lease_due_sms", version: 4, statement: sourceText(import.meta.url, "./lease_due_sms.sql") },
  { name: "recon.match_pass", version: 3, statement: sourceText(import.meta.url, "./match_pass.sql") },
  { name: "wallet.agree", version: 1, statement: sourceText(import.meta.url, "./agree.sql") },
  { name: "wallet.agree_batch", version: 1, statement: sourceText(import.meta.url, "./agree_batch.sql") }
]
