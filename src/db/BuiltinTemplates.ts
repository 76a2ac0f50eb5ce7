// The built-in templates: versioned data files (src/db/templates/builtin-v<N>.json), each the whole
// list a migration upserts (0007: v1, 0012: v2). A later release that improves them adds a file
// and a migration that upserts it (`builtinUpsert`): rows are keyed by `builtin_key` (unique among
// rule_source 'builtin'), so their ids stay, operator rows (manual, ai) are never touched, and a
// key the new list drops is deleted by that migration. A released file is never edited (the frozen
// migrations test checks what its migration runs).
//
// How the rules are written (RE2 syntax): they read the text as the parse loop gives it to every
// template (`normalizeSmsText`): no `[Web발신]`, no `보낸사람 : …` line, lines trimmed, runs of
// spaces made one, full-width digits folded; line breaks kept where the phone kept them. Every
// separator between two fields is `\s*` when the fields sit on separate lines (forwarders that
// strip line breaks run them together) and a space where the bank prints both on one line. A payer
// name never starts with a digit or a mark (`*`, `-`, `,`, `:`…), so it cannot be cut out of an
// account number, an amount or a masked holder; what a rule reads as the name is checked again by
// the loop (a masked `김*늘님`, an account number, an amount or the 잔액 line is no payer).
import { sourceText } from "./SourceText.ts"

export interface BuiltinTemplate {
  readonly key: string
  readonly bank: string
  readonly sender: string | null
  readonly sample: string
  readonly rule: string
}

const load = (text: string): ReadonlyArray<BuiltinTemplate> =>
  (JSON.parse(text) as ReadonlyArray<BuiltinTemplate>).map(({ key, bank, sender, sample, rule }) => ({ key, bank, sender, sample, rule }))

/** The first release's built-ins (migration 0007). */
export const builtins0007 = load(sourceText(import.meta.url, "./templates/builtin-v1.json"))
/** The built-in reader's release (migration 0012): the guessed layouts replaced or dropped. */
export const builtins0012 = load(sourceText(import.meta.url, "./templates/builtin-v2.json"))

/** The statements that insert or update the built-in rows of `templates` by key, and delete the built-ins it drops. */
export const builtinUpsert = (templates: ReadonlyArray<BuiltinTemplate>): ReadonlyArray<string> => {
  const json = JSON.stringify(templates.map((t, i) => ({ ...t, ord: i })))
  if (json.includes("$builtin$")) throw new Error("a built-in template contains the quoting tag")
  return [
    `DELETE FROM recon.shooter_template_recharge WHERE rule_source = 'builtin'
      AND builtin_key NOT IN (SELECT x.key FROM jsonb_to_recordset($builtin$${json}$builtin$::jsonb) AS x(key text))`,
    `INSERT INTO recon.shooter_template_recharge (bank, sender, sample, rule, rule_source, builtin_key)
      SELECT x.bank, x.sender, x.sample, x.rule, 'builtin', x.key
      FROM jsonb_to_recordset($builtin$${json}$builtin$::jsonb) AS x(key text, bank text, sender text, sample text, rule text, ord int)
      ORDER BY x.ord
      ON CONFLICT (builtin_key) WHERE rule_source = 'builtin'
      DO UPDATE SET bank = excluded.bank, sender = excluded.sender, sample = excluded.sample, rule = excluded.rule`
  ]
}
