// Learning from the person (DESIGN section 11): after an SMS was read by eye, a template drafted
// from that very message (parse/TemplateDraft.ts), tried on the other parse_failed SMS of its
// sender so the operator sees how many it would read, and, once the operator saves it, added
// through recon's /shooter/template/recharge/add (which validates it again) with that sender, so
// the next message of the layout is read without anyone. The SMS it reads can be read again at once.
import { Context, Effect, Layer, Result } from "effect"
import type { SqlError } from "effect/sql"
import { ReconClient, type ReconRefused, type ReconUnavailable } from "../clients/ReconClient.ts"
import { ReviewStore } from "./ReviewStore.ts"
import { normalizeSmsText } from "../domain/SmsText.ts"
import { draftTemplate } from "../parse/TemplateDraft.ts"
import type { RuleExtraction } from "../parse/TemplateRule.ts"
import { compileRule } from "../parse/TemplateRule.ts"
import { type ApiFailure, fail } from "../api/Envelope.ts"
import type { Template } from "../domain/Records.ts"

/** The sender's parse_failed SMS a draft is tried on (the newest). */
export const TRIED = 500
/** Examples of what the draft reads, shown with it. */
const EXAMPLES = 5

type LearningError = ReconRefused | ReconUnavailable | SqlError.SqlError | ApiFailure<404 | 422>

const smsOf = (store: ReviewStore["Service"], id: number) =>
  Effect.flatMap(store.sample(id), (sms) => sms === undefined ? fail(404, `sms ${id} not found`) : Effect.succeed(sms))

/** The other parse_failed SMS of the sender that `extract` reads. */
const readsOf = (store: ReviewStore["Service"], sender: string, except: number, extract: (text: string) => RuleExtraction | undefined) =>
  Effect.map(store.failedFrom(sender, except, TRIED), (failed) => ({
    tried: failed.length,
    read: failed.flatMap((sms) => {
      const found = extract(normalizeSmsText(sms.body))
      return found === undefined ? [] : [{ sms_id: sms.id, payer_name: found.name.trim(), amount: found.amount }]
    })
  }))

export class TemplateLearning extends Context.Service<TemplateLearning, {
  readonly draft: (p: { readonly sms_id: number; readonly payer_name: string; readonly amount: string }) => Effect.Effect<{
    readonly sms_id: number
    readonly bank: string | null
    readonly sender: string
    readonly sample: string
    readonly rule: string
    readonly tried: number
    readonly reads: number
    readonly examples: ReadonlyArray<{ readonly sms_id: number; readonly payer_name: string; readonly amount: string }>
  }, LearningError>
  readonly add: (p: { readonly sms_id: number; readonly bank: string; readonly rule: string; readonly reread?: boolean | null | undefined }) => Effect.Effect<{
    readonly template: typeof Template.Type
    readonly reread: ReadonlyArray<number>
  }, LearningError>
}>()("recon/admin/TemplateLearning") {
  static readonly layer = Layer.effect(
    TemplateLearning,
    Effect.gen(function*() {
      const store = yield* ReviewStore
      const recon = yield* ReconClient
      return {
        draft: (p) =>
          Effect.gen(function*() {
            const sms = yield* smsOf(store, p.sms_id)
            const drafted = draftTemplate(sms.body, p.payer_name, p.amount)
            if (Result.isFailure(drafted)) return yield* fail(422, `no template can be made from sms ${sms.id}: ${drafted.failure}`)
            const { read, tried } = yield* readsOf(store, sms.sender, sms.id, drafted.success.extract)
            return {
              sms_id: sms.id,
              bank: sms.bank,
              sender: sms.sender,
              sample: sms.body,
              rule: drafted.success.rule,
              tried,
              reads: read.length,
              examples: read.slice(0, EXAMPLES)
            }
          }),
        add: (p) =>
          Effect.gen(function*() {
            const sms = yield* smsOf(store, p.sms_id)
            const template = yield* recon.call((c) =>
              c.template.add({ payload: { bank: p.bank, sample: sms.body, sender: sms.sender, rule: p.rule } })
            )
            if (p.reread !== true) return { template, reread: [] }
            const compiled = compileRule(template.rule)
            if (Result.isFailure(compiled)) return { template, reread: [] }
            const { read } = yield* readsOf(store, sms.sender, sms.id, compiled.success.extract)
            // Back to received, one by one: parse_loop reads them with the new template within seconds.
            const reread = yield* Effect.forEach(read, ({ sms_id }) =>
              recon.call((c) => c.sms.reset({ payload: { id: sms_id, if_status: "parse_failed" } })).pipe(
                Effect.as([sms_id]),
                // One changed meanwhile (read, assigned): it is simply not read again.
                Effect.catchTag("ReconRefused", () => Effect.succeed([]))
              ), { concurrency: 4 })
            return { template, reread: reread.flat() }
          })
      }
    })
  )
}
