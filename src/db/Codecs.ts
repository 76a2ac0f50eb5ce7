// Rows as the stores read them: decoded by a Schema (the columns' codecs are in domain/PgValues.ts),
// and amounts written as DESIGN section 4 writes them.
import { Effect, Schema } from "effect"

/** Rows as `schema` says; a row that does not decode is a defect (the schema and the table disagree). */
export const decodeRows = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => {
  const decode = Schema.decodeUnknownEffect(Schema.Array(schema))
  return (rows: ReadonlyArray<unknown>) => Effect.orDie(decode(rows)) as Effect.Effect<ReadonlyArray<S["Type"]>>
}

/** An amount as DESIGN section 4 writes it: "50000", "12.50" (no ".00" on whole won). */
export const amountText = (column: string) => `CASE WHEN ${column} = trunc(${column}) THEN trunc(${column})::text ELSE ${column}::text END`
