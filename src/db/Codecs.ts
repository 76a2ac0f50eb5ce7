// Row codecs: PostgreSQL bigint ids arrive as JS bigint and timestamptz as Date; the API speaks
// plain integers and ISO-8601 strings.
import { Effect, Schema, SchemaTransformation } from "effect"

/** A bigint/bigserial column as a plain integer. */
export const DbId = Schema.Union([Schema.BigInt, Schema.Number]).pipe(
  Schema.decodeTo(Schema.Int, SchemaTransformation.transform({ decode: (n) => Number(n), encode: (n) => n }))
)

/** A timestamptz column as an ISO-8601 string (UTC, with its `Z` offset). */
export const DbTime = Schema.Date.pipe(
  Schema.decodeTo(Schema.String, SchemaTransformation.transform({
    decode: (date) => date.toISOString(),
    encode: (iso) => new Date(iso)
  }))
)

export const DbTimeOrNull = Schema.NullOr(DbTime)

/** Rows as `schema` says; a row that does not decode is a defect (the schema and the table disagree). */
export const decodeRows = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => {
  const decode = Schema.decodeUnknownEffect(Schema.Array(schema))
  return (rows: ReadonlyArray<unknown>) => Effect.orDie(decode(rows)) as Effect.Effect<ReadonlyArray<S["Type"]>>
}

/** An amount as DESIGN section 4 writes it: "50000", "12.50" (no ".00" on whole won). */
export const amountText = (column: string) => `CASE WHEN ${column} = trunc(${column}) THEN trunc(${column})::text ELSE ${column}::text END`
