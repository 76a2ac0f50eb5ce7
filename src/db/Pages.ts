// A page of a list, as every list route of DESIGN section 4 asks for it and answers it.

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
