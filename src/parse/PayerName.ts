// The payer's name as the readers give it (a template's group or the built-in reader's
// counterpart): what is no part of a name is cut, what is no name at all is refused, and a name
// that stands only where the message names the account holder is doubt (issue 39). Pure.
/**
 * The payer name as printed, or why the captured text is no payer: a masked account-holder name
 * (`김*늘님`, `장영*(0276)`), an account number, an amount, a time, the balance line.
 */
export const payerName = (captured: string): { readonly name: string } | { readonly rejected: string } => {
  // `김신혁 → 내 입출금통장(2856)`: the arrow and the holder's own account after it are no part of the name
  // (a template's group that ran past a line break takes them along).
  let name = captured.replace(/\s+/gu, " ").replace(/\s*(?:→|->|➡|⇒|▶|=>)\s*(?:내\s?.*|[가-힣A-Za-z]*(?:통장|계좌)\s?(?:\([\d*-]+\))?)$/u, "").trim()
  // `김철수님`: the honorific is no part of the name.
  if (name.length > 2 && name.endsWith("님")) name = name.slice(0, -1).trim()
  if (name === "") return { rejected: "the name is empty" }
  if (name.includes("*")) return { rejected: `${JSON.stringify(name)} is a masked account-holder name, not the payer` }
  // `홍길동 입금`, `잔액 1,000`: a word of the transaction line came with the name. A name that only
  // contains such a syllable pair (김출금) is a name.
  if (/잔액|(?:^|\s)(?:입금|출금)|(?:입금|출금)(?:\s|$)/u.test(name) && !/^[가-힣]{2,4}$/u.test(name)) {
    return { rejected: `${JSON.stringify(name)} is part of the transaction line, not a name` }
  }
  if (/\d{1,2}:\d{2}/u.test(name)) return { rejected: `${JSON.stringify(name)} holds a time, not only a name` }
  if (/계좌\s*[\d*#-]{3,}/u.test(name)) return { rejected: `${JSON.stringify(name)} holds an account, not only a name` }
  if (/^[\d\s,.:/#()\-+]*원?$/u.test(name)) return { rejected: `${JSON.stringify(name)} is a number (account, amount or time), not a name` }
  if (/^\(?[가-힣A-Za-z]*은행\)?$/u.test(name)) return { rejected: `${JSON.stringify(name)} is a bank, not a name` }
  if (name.length > 60) return { rejected: "the name is longer than 60 characters" }
  return { name }
}

/**
 * The account holder's slots the message prints (issue 39), as spans of the text: a masked or
 * plain name followed by the account's digits (`[카카오뱅크] 홍*동(1234)`, `홍길동(3333-**-1234)`), not
 * an account's own name (`입출금통장(2856)`); a `…님` greeting (`홍길동님,`, `홍길동님 안녕하세요`, `홍길동님의 입출금통장`; a line `홍길동님` alone
 * is the payer in some layouts);
 * the holder's own account an arrow points to (`→ 내 입출금통장(2856)`).
 */
export const holderSlots = (text: string): ReadonlyArray<readonly [number, number]> => {
  const slots: Array<readonly [number, number]> = []
  for (const m of text.matchAll(/(?<=^|[\s\]>)])([가-힣A-Za-z*]{2,8})\s?\(\s*[\d*#-]{3,}\s*\)/gu)) {
    if (!/(?:통장|계좌|예금|적금|카드|은행|뱅크|머니|저축|체크|입출금|잔액|입금|출금)$/u.test(m[1]!)) slots.push([m.index, m.index + m[0].length])
  }
  for (const m of text.matchAll(/(?<=^|[\s\]])[가-힣*]{2,5}님(?=\s?,|\s*안녕|의\s?[가-힣]*(?:계좌|통장))/gu)) slots.push([m.index, m.index + m[0].length])
  for (const m of text.matchAll(/(?:→|->|➡|⇒|▶|=>)\s*(?:내\s?[^\n]*|[가-힣A-Za-z]*(?:통장|계좌)\s?(?:\([\d*-]+\))?)/gu)) slots.push([m.index, m.index + m[0].length])
  return slots
}

/**
 * Why the payer read cannot be told from the account holder, or nothing: every place the name
 * stands in the text is a holder slot (a name printed elsewhere too, as in a transfer to oneself
 * `김*늘님 … 김하늘 전자금융입금`, is the payer's own slot).
 */
export const holderDoubt = (text: string, payer: string): string | undefined => {
  const slots = holderSlots(text)
  if (slots.length === 0) return undefined
  const forms = [payer, payer.replace(/^[가-힣A-Za-z]+\s/u, "")]
  const places = forms.flatMap((form) => [...text.matchAll(new RegExp(form.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&"), "gu"))].map((m) => [m.index, m.index + form.length] as const))
  if (places.length === 0) return undefined
  const inHolder = (at: readonly [number, number]) => slots.some(([start, end]) => at[0] >= start && at[1] <= end)
  return places.every(inHolder) ? `the payer read (${JSON.stringify(payer)}) stands only where the message names the account holder` : undefined
}
