// Rows as the stores read them: decoded by a Schema (the columns' codecs are in domain/PgValues.ts),
// and amounts written as DESIGN section 4 writes them.
import { Effect, Schema } from "effect"
import { SqlError } from "effect/sql"

/** Rows as `schema` says; a row that does not decode is a defect (the schema and the table disagree). */
export const decodeRows = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => {
  const decode = Schema.decodeUnknownEffect(Schema.Array(schema))
  return (rows: ReadonlyArray<unknown>) => Effect.orDie(decode(rows)) as Effect.Effect<ReadonlyArray<S["Type"]>>
}

/**
 * A store query as its caller sees it: the SqlError stays the failure it is (the database away is
 * the caller's to handle, see `isDatabaseAway`); a row that does not decode (SchemaError), or no row
 * from a query that always answers one, is a defect: the schema and the table disagree.
 */
export const sqlFailures = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Extract<E, SqlError.SqlError>, R> =>
  Effect.catch(effect, (error) => SqlError.isSqlError(error) ? Effect.fail(error as Extract<E, SqlError.SqlError>) : Effect.die(error))

/** An amount as DESIGN section 4 writes it: "50000", "12.50" (no ".00" on whole won). */
export const amountText = (column: string) => `CASE WHEN ${column} = trunc(${column}) THEN trunc(${column})::text ELSE ${column}::text END`
