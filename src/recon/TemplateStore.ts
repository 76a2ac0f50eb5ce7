// The bank templates behind /shooter/template: list, add, delete. The table's trigger (migration
// 0017) tells the worker of every change.
import { Context, Effect, Layer, Schema } from "effect"
import type { SqlError } from "effect/sql"
import { decodeRows } from "../db/Codecs.ts"
import type { PageOf, Paging } from "../db/Pages.ts"
import { type RuleSource, TemplateRow } from "../domain/Records.ts"
import { makeTables } from "./ReconTables.ts"

/** No template has this id. */
export class TemplateNotFound extends Schema.TaggedError<TemplateNotFound>()("TemplateNotFound", { id: Schema.Int }) {}

/** The bank has a template with this rule already. */
export class TemplateExists extends Schema.TaggedError<TemplateExists>()("TemplateExists", { bank: Schema.String }) {}

/** What a TemplateStore method can fail with besides the SqlError. */
export type TemplateStoreError = TemplateNotFound | TemplateExists

export interface NewTemplate {
  readonly bank: string
  readonly sender: string | null
  readonly sample: string
  readonly rule: string
  readonly rule_source: RuleSource
}

type Template = typeof TemplateRow.Type

export interface TemplateStoreShape {
  readonly listTemplates: (p: Paging & { readonly bank?: string | null | undefined }) => Effect.Effect<PageOf<Template>, SqlError.SqlError>
  readonly addTemplate: (t: NewTemplate) => Effect.Effect<Template, TemplateExists | SqlError.SqlError>
  readonly deleteTemplate: (id: number) => Effect.Effect<{ readonly id: number }, TemplateNotFound | SqlError.SqlError>
}

const templateColumns = "id, bank, sender, sample, rule, rule_source, created_at"

const make = Effect.gen(function*() {
  const { sql, listPage, deleteById } = yield* makeTables

  const listTemplates = Effect.fn("TemplateStore.listTemplates")(function*(p: Paging & { readonly bank?: string | null | undefined }) {
    return yield* listPage(TemplateRow, "shooter_template_recharge", templateColumns, sql.and([
      ...(p.bank != null ? [sql`bank = ${p.bank}`] : [])
    ]), p)
  })

  const addTemplate = Effect.fn("TemplateStore.addTemplate")(function*(t: NewTemplate) {
    const rows = yield* sql`INSERT INTO recon.shooter_template_recharge (bank, sender, sample, rule, rule_source)
      VALUES (${t.bank}, ${t.sender}, ${t.sample}, ${t.rule}, ${t.rule_source})
      ON CONFLICT (bank, md5(rule)) DO NOTHING
      RETURNING ${sql.literal(templateColumns)}`
    // No NOTIFY here: the table's trigger (migration 0017) sends it for every change.
    if (rows.length === 0) return yield* new TemplateExists({ bank: t.bank })
    const [row] = yield* decodeRows(TemplateRow)(rows)
    return row!
  })

  const deleteTemplate = Effect.fn("TemplateStore.deleteTemplate")(function*(id: number) {
    return yield* deleteById("shooter_template_recharge", () => new TemplateNotFound({ id }), id)
  })

  return { listTemplates, addTemplate, deleteTemplate } satisfies TemplateStoreShape
})

export class TemplateStore extends Context.Service<TemplateStore, TemplateStoreShape>()("recon/recon/TemplateStore") {
  static readonly layer = Layer.effect(TemplateStore, make)
}
