// A page of a list, as every list route of DESIGN section 4 asks for it and answers it.
import { Effect } from "effect"

export interface Paging {
  readonly page?: number | null | undefined
  readonly page_size?: number | null | undefined
}

export interface PageOf<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly page: number
  readonly page_size: number
}

/** The rows a page asks for: page 1 of 20 unless the request says otherwise. */
export const pageWindow = (paging: Paging) => {
  const page = paging.page ?? 1
  const size = paging.page_size ?? 20
  return { page, size, offset: (page - 1) * size }
}

/**
 * A page: `count` (a `count(*) AS total` query) finds how many rows the filter matches, then
 * `rows(limit, offset)` reads the page's own.
 */
export const paged = <A, E, R>(
  paging: Paging,
  count: Effect.Effect<ReadonlyArray<{ readonly total: bigint }>, E, R>,
  rows: (limit: number, offset: number) => Effect.Effect<ReadonlyArray<A>, E, R>
): Effect.Effect<PageOf<A>, E, R> =>
  Effect.gen(function*() {
    const { page, size, offset } = pageWindow(paging)
    const [counted] = yield* count
    const items = yield* rows(size, offset)
    return { items, total: Number(counted?.total ?? 0), page, page_size: size }
  })
