// Bank SMS as Korean banks write them (the layouts of shared/corpus/sms-dev.tsv: KB국민, NH농협,
// 신한; and two layouts nobody reads yet, and a sender nobody whitelisted), for the demo's simulated
// phone. Times are Seoul wall-clock time, as on the phone.

export type Bank = "KB" | "NH" | "SHINHAN"

/** The number each bank sends its notices from, and its display name. */
export const banks: Record<Bank, { readonly sender: string; readonly name: string }> = {
  KB: { sender: "16449999", name: "KB국민" },
  NH: { sender: "15882100", name: "NH농협" },
  SHINHAN: { sender: "15778000", name: "신한" }
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
      return `[Web발신]\n[KB]${stamp}\n834702**717\n${name}\n입금\n${grouped(amount)}\n잔액${grouped(balance)}`
    case "NH":
      return `[Web발신]\n농협 입금${grouped(amount)}원\n${stamp} 352-****-4273-63 ${name} 잔액${grouped(balance)}원`
    case "SHINHAN":
      return `[Web발신]\n신한${stamp}\n110-496-922482\n입금     ${grouped(amount)}\n잔액    ${grouped(balance)}\n ${name}`
  }
}

/** A withdrawal notice (KB): money that went out, never a deposit. */
export const withdrawalSms = (payee: string, amount: number, balance: number, at: Date): string =>
  `[Web발신]\n[KB]${seoulStamp(at)}\n834702**717\n${payee}\n출금\n${grouped(amount)}\n잔액${grouped(balance)}`

/** A bank whose notices no template reads yet (a person reads them, and can teach recon the layout). */
export const unreadBank = { sender: "15666000", name: "신협" } as const

/** Two layouts neither a built-in template nor the reader reads (the amount alone on its line, two names): the console's parse_failed queue, and what "learn from the person" is for. */
export const unreadableSms = (layout: 0 | 1, name: string, amount: number, balance: number, at: Date): string =>
  layout === 0
    ? `[Web발신]\n신협 ${seoulStamp(at)}\n이체입금\n의뢰인 ${name} 수취인 한빛상사\n${grouped(amount)}\n잔고 ${grouped(balance)}`
    : `[Web발신]\n[신협] ${seoulStamp(at)}\n이체입금\n의뢰인:${name} 수취인:한빛상사\n${grouped(amount)}\n잔고:${grouped(balance)}`

/** A bank sender nobody whitelisted: its SMS are held for a check (need_check). */
export const unknownSender = { sender: "15881111", name: "IBK기업" } as const

/** A deposit notice from the sender nobody whitelisted. */
export const unknownSenderSms = (name: string, amount: number, balance: number, at: Date): string =>
  `[Web발신]\n[IBK]${seoulStamp(at)} 입금 ${grouped(amount)}원 ${name} 잔액 ${grouped(balance)}원 123-456789-01-012`
