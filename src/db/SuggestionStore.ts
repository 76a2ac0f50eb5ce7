// The pending deposits worth suggesting for SMS that wait for a person (DESIGN section 11): two
// statements for any number of SMS, each search an index range bounded by a LIMIT (the pending
// deposits may be many), then domain/Suggestions.ts ranks them. sms/get shows them as
// match.suggestions; the console can ask for a page of review items at once (forSms).
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import type { SmsDetail } from "../domain/Records.ts"
import { MAX_SIBLINGS, searchKeys, suggest, type Suggestion } from "../domain/Suggestions.ts"
import { decodeRows } from "./Codecs.ts"
import { DbId } from "../domain/PgValues.ts"
import { sourceText } from "./SourceText.ts"

type Detail = typeof SmsDetail.Type

/** The statuses whose SMS get suggestions. */
export const SUGGESTED_STATUSES: ReadonlyArray<string> = ["unmatched", "manual_review"]
/** Deposits read per search (name, truncated, masked): a common name can have many pending deposits. */
const PER_SEARCH = 100
/** Above every character: `key >= p AND key < p || TOP` is "starts with p" in C collation. */
const TOP = "\u{10FFFF}"

const SubjectRow = Schema.Struct({
  id: DbId,
  payer_name: Schema.NullOr(Schema.String),
  payer_key: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String),
  siblings: Schema.Array(Schema.Struct({ sms_id: DbId, amount: Schema.String }))
})
const DepositRow = Schema.Struct({
  sms_id: DbId,
  deposit_id: DbId,
  player_id: DbId,
  from_bank_owner: Schema.String,
  amount: Schema.String,
  owner_key: Schema.String,
  owner_loose_key: Schema.String
})
const SUBJECTS = sourceText(import.meta.url, "./SuggestionStore.subjects.sql")
const DEPOSITS = sourceText(import.meta.url, "./SuggestionStore.deposits.sql")
const decodeSubjects = decodeRows(SubjectRow)
const decodeDeposits = decodeRows(DepositRow)

export interface SuggestionStoreShape {
  /** The suggestions of each SMS (by id) that is unmatched or in manual review; others are absent. */
  readonly forSms: (ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, ReadonlyArray<Suggestion>>, SqlError.SqlError>
  /** sms/get's record with `match.suggestions` when it waits for a person (unmatched, manual_review). */
  readonly attach: (detail: Detail) => Effect.Effect<Detail, SqlError.SqlError>
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const forSms = Effect.fn("SuggestionStore.forSms")(function*(ids: ReadonlyArray<number>) {
    if (ids.length === 0) return new Map<number, ReadonlyArray<Suggestion>>()
    const subjects = yield* sql.unsafe(SUBJECTS, [MAX_SIBLINGS, JSON.stringify(ids), JSON.stringify(SUGGESTED_STATUSES)])
      .pipe(Effect.flatMap(decodeSubjects))
    const searches = subjects.flatMap((s) => {
      if (s.payer_name === null || s.amount === null) return []
      const keys = searchKeys(s.payer_name)
      return [{
        sms_id: s.id,
        keys: keys.keys,
        truncated: keys.truncated,
        masked_prefix: keys.masked?.prefix ?? null,
        masked_reversed: keys.masked?.reversedSuffix ?? null,
        pattern: keys.masked?.pattern ?? null
      }]
    })
    const deposits = searches.length === 0 ? [] : yield* sql.unsafe(DEPOSITS, [JSON.stringify(searches), PER_SEARCH, TOP])
      .pipe(Effect.flatMap(decodeDeposits))
    const bySms = new Map<number, Array<typeof DepositRow.Type>>()
    for (const d of deposits) bySms.set(d.sms_id, [...(bySms.get(d.sms_id) ?? []), d])
    return new Map(subjects.map((s) => [s.id, suggest({
      smsId: s.id,
      payerName: s.payer_name,
      payerKey: s.payer_key,
      amount: s.amount,
      siblings: s.siblings.map((o) => ({ smsId: o.sms_id, amount: o.amount }))
    }, bySms.get(s.id) ?? [])]))
  })

  const attach = Effect.fn("SuggestionStore.attach")(function*(detail: Detail) {
    if (!SUGGESTED_STATUSES.includes(detail.status)) return detail
    const found = yield* forSms([detail.id])
    const match = detail.match === null ? {} : typeof detail.match === "object" && !Array.isArray(detail.match) ? detail.match : { detail: detail.match }
    return { ...detail, match: { ...match, suggestions: found.get(detail.id) ?? [] } }
  })

  return { forSms, attach } satisfies SuggestionStoreShape
})

export class SuggestionStore extends Context.Service<SuggestionStore, SuggestionStoreShape>()("recon/db/SuggestionStore") {
  static readonly layer = Layer.effect(SuggestionStore, make)
}
