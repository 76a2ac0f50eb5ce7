// What the recon stores share on the recon tables: a page of a table (newest first), the one row
// a statement returned or the store's not-found error, the NOTIFY on `recon_changes` that tells
// the worker a table changed, and a delete by id that sends it.
import { Effect, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { decodeRows } from "../db/Codecs.ts"
import { type PageOf, paged, type Paging } from "../db/Pages.ts"
import { CHANGES_CHANNEL } from "../db/Sms.ts"

type Decodable = Schema.Top & { readonly DecodingServices: never }

export const makeTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** A page of `recon.<table>` where `where` holds, newest first, rows through `schema`. */
  const listPage = <S extends Decodable>(
    schema: S,
    table: string,
    columns: string,
    where: ReturnType<typeof sql.and>,
    paging: Paging
  ): Effect.Effect<PageOf<S["Type"]>, SqlError.SqlError> => {
    const from = sql.literal(`recon.${table}`)
    return paged(
      paging,
      sql<{ total: bigint }>`SELECT count(*) AS total FROM ${from} WHERE ${where}`,
      (limit, offset) =>
        sql`SELECT ${sql.literal(columns)} FROM ${from} WHERE ${where}
          ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`.pipe(Effect.flatMap(decodeRows(schema)))
    )
  }

  /** The first row through `schema`, or `notFound()` when the statement returned none. */
  const one = <S extends Decodable, E>(schema: S, notFound: () => E) => (rows: ReadonlyArray<unknown>): Effect.Effect<S["Type"], E> =>
    rows.length === 0
      ? Effect.fail(notFound())
      : Effect.map(decodeRows(schema)(rows), (items) => items[0]!)

  const notify = (table: string) => sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${table})`

  const deleteById = <E>(table: string, notFound: () => E, id: number): Effect.Effect<{ readonly id: number }, E | SqlError.SqlError> =>
    sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql`DELETE FROM ${sql.literal(`recon.${table}`)} WHERE id = ${id} RETURNING id`
      if (rows.length === 0) return yield* Effect.fail(notFound())
      yield* notify(table)
      return { id }
    }))

  return { sql, listPage, one, notify, deleteById }
})
