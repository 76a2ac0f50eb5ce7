// Bank SMS as Korean banks write them (the layouts of test/corpus/sms-dev.tsv: KB국민, NH농협,
// 신한; a 신협 layout nobody reads yet, and a sender nobody whitelisted), for the demo's simulated
// phone: each account keeps a running balance that every message prints, so balance continuity
// has real sequences to check; and the near misses depositors type (a code before the name, a dot
// in it, a bank glued to it, a name cut short, a few hundred won more). Times are Seoul wall-clock
// time, as on the phone.

export type Bank = "KB" | "NH" | "SHINHAN"

/** The number each bank sends its notices from, and its display name. */
export const banks: Record<Bank, { readonly sender: string; readonly name: string }> = {
  KB: { sender: "16449999", name: "KB국민" },
  NH: { sender: "15882100", name: "NH농협" },
  SHINHAN: { sender: "15778000", name: "신한" }
}

/** A bank whose notices no template reads yet (a person reads them, and can teach recon the layout). */
export const unreadBank = { sender: "15666000", name: "신협" } as const

/** A bank sender nobody whitelisted: its SMS are held for a check (need_check). */
export const unknownSender = { sender: "15881111", name: "IBK기업" } as const

/** Every account the demo's phones forward the notices of. */
export type Account = Bank | "SHINHYUP" | "IBK"
export const ACCOUNTS: ReadonlyArray<Account> = ["KB", "NH", "SHINHAN", "SHINHYUP", "IBK"]

/** Who sends each account's notices (one account per sender in the demo). */
export const accountSender: Record<Account, string> = {
  KB: banks.KB.sender,
  NH: banks.NH.sender,
  SHINHAN: banks.SHINHAN.sender,
  SHINHYUP: unreadBank.sender,
  IBK: unknownSender.sender
}

/** Each account's number as its notices print it (신협's print none: its account is the phone's and the sender's). */
export const accountShown: Record<Account, string | null> = {
  KB: "834702**717",
  NH: "352-****-4273-63",
  SHINHAN: "110-496-922482",
  SHINHYUP: null,
  IBK: "123-456789-01-012"
}

const seoul = new Intl.DateTimeFormat("en-GB", {
  timeZone: "Asia/Seoul", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23"
})

/** `MM/DD HH:mm` in Seoul. */
export const seoulStamp = (at: Date): string => {
  const part = (type: string) => seoul.formatToParts(at).find((p) => p.type === type)?.value ?? "00"
  return `${part("month")}/${part("day")} ${part("hour")}:${part("minute")}`
}

const seoulFull = new Intl.DateTimeFormat("sv-SE", { timeZone: "Asia/Seoul", dateStyle: "short", timeStyle: "medium" })

/** `YYYY-MM-DD HH:mm:ss` in Seoul: the receive time a Korean phone's forwarder app writes. */
export const seoulDateTime = (at: Date): string => seoulFull.format(at)

/** 1234567 → "1,234,567". */
export const grouped = (won: number): string => won.toLocaleString("en-US")

/** A deposit notice: `name` sent `amount` won; the account's balance is now `balance`. */
export const depositSms = (bank: Bank, name: string, amount: number, balance: number, at: Date): string => {
  const stamp = seoulStamp(at)
  switch (bank) {
    case "KB":
      return `[Web발신]\n[KB]${stamp}\n${accountShown.KB}\n${name}\n입금\n${grouped(amount)}\n잔액${grouped(balance)}`
    case "NH":
      return `[Web발신]\n농협 입금${grouped(amount)}원\n${stamp} ${accountShown.NH} ${name} 잔액${grouped(balance)}원`
    case "SHINHAN":
      return `[Web발신]\n신한${stamp}\n${accountShown.SHINHAN}\n입금     ${grouped(amount)}\n잔액    ${grouped(balance)}\n ${name}`
  }
}

/** A withdrawal notice (KB): money that went out, never a deposit. */
export const withdrawalSms = (payee: string, amount: number, balance: number, at: Date): string =>
  `[Web발신]\n[KB]${seoulStamp(at)}\n${accountShown.KB}\n${payee}\n출금\n${grouped(amount)}\n잔액${grouped(balance)}`

/**
 * Two 신협 layouts neither a built-in template nor the reader reads (two names on the line after the
 * deposit word, the amount alone on the next): the console's parse_failed queue, and what "learn
 * from the person" is for.
 */
export const unreadableSms = (layout: 0 | 1, name: string, amount: number, balance: number, at: Date): string =>
  layout === 0
    ? `[Web발신]\n신협 ${seoulStamp(at)}\n이체입금\n의뢰인 ${name} 수취인 한빛상사\n${grouped(amount)}\n잔고 ${grouped(balance)}`
    : `[Web발신]\n[신협] ${seoulStamp(at)}\n이체입금\n의뢰인:${name} 수취인:한빛상사\n${grouped(amount)}\n잔고:${grouped(balance)}`

/** A deposit notice from the sender nobody whitelisted. */
export const unknownSenderSms = (name: string, amount: number, balance: number, at: Date): string =>
  `[Web발신]\n[IBK]${seoulStamp(at)} 입금 ${grouped(amount)}원 ${name} 잔액 ${grouped(balance)}원 ${accountShown.IBK}`

/** The balance a notice of these layouts prints (`잔액`, or 신협's `잔고`), to continue an account from its last notice. */
export const balanceShown = (text: string): number | undefined => {
  const printed = [...text.matchAll(/(?:잔액|잔고)[:\s]*(\d[\d,]*)/g)].at(-1)?.[1]
  return printed === undefined ? undefined : Number(printed.replaceAll(",", ""))
}

/**
 * Each account's running balance. A transaction moves it whether or not its notice is ever
 * forwarded: a notice the phone withholds leaves the next one's balance unexplained (a gap), until
 * it arrives late.
 */
export class Ledger {
  private readonly balances: Record<Account, number>
  constructor(opening: Readonly<Record<Account, number>>) {
    this.balances = { ...opening }
  }
  /** Money in (`amount` > 0) or out (< 0); answers the balance after it. */
  move(account: Account, amount: number): number {
    this.balances[account] += amount
    return this.balances[account]
  }
}

/** The ways a depositor's notice misses the exact name or amount of their deposit request, each a suggestion's reason. */
export const NEAR_MISSES = ["code_prefix", "amount_differs", "separators", "truncated", "bank_prefix"] as const
export type NearMiss = (typeof NEAR_MISSES)[number]

/** A company whose name is longer than banks print: its notices show it cut short. */
export const COMPANY = "(주)한빛엔터테인먼트"

/** The payer and amount a notice shows for a deposit of `name` and `amount`, missed in the way `kind` says (`seed` varies the code). */
export const nearMiss = (kind: NearMiss, name: string, amount: number, seed: number): { readonly payer: string; readonly amount: number } => {
  switch (kind) {
    case "code_prefix":
      // An order code typed into the name field: `coin1147 박석호`.
      return { payer: `${["coin", "shop", "game"][seed % 3]}${1000 + (seed % 9000)} ${name}`, amount }
    case "separators":
      return { payer: `${name.slice(0, 1)}.${name.slice(1)}`, amount }
    case "bank_prefix":
      return { payer: `국민${name}`, amount }
    case "truncated":
      // Banks print about 7 characters of a name.
      return { payer: name.slice(0, 7), amount }
    case "amount_differs":
      // A fee added by hand: 50,500 for a 50,000 request.
      return { payer: name, amount: amount + 500 }
  }
}
