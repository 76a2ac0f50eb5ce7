// Webhooks to the merchant's platform (DESIGN section 11; the event names, EVENT_TYPES, are in
// Records.ts beside the webhook's record, for the API definitions): the body and the signature a
// receiver gets, what an attempt's answer means, the retry schedule, and which URLs are accepted.
// Pure: webhook_delivery_loop and the routes use it.
import { Result } from "effect"
import { createHmac } from "node:crypto"
import { isIP } from "node:net"

export interface WebhookEvent {
  readonly id: number
  readonly type: string
  /** ISO-8601, when the event was written (in the transaction of the change it reports). */
  readonly created_at: string
  readonly data: unknown
}

/** The body POSTed for an event: the same bytes on every attempt. */
export const eventBody = (event: WebhookEvent): string =>
  JSON.stringify({ id: event.id, type: event.type, created_at: event.created_at, data: event.data })

/** `X-Recon-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>`. */
export const signature = (secret: string, unixSeconds: number, body: string): string =>
  `t=${unixSeconds},v1=${createHmac("sha256", secret).update(`${unixSeconds}.${body}`, "utf8").digest("hex")}`

/** The first retry waits this long, each next one twice as long, never more than RETRY_CAP_MS. */
export const RETRY_FIRST_MS = 10_000
export const RETRY_CAP_MS = 3_600_000
/** A delivery is retried for this long after its first attempt, then it is `failed`. */
export const RETRY_FOR_MS = 24 * 3_600_000

/** The wait after the `attempt`-th failed attempt (1-based): 10 s, 20 s, 40 s … 1 h. */
export const retryDelayMillis = (attempt: number): number =>
  Math.min(RETRY_FIRST_MS * 2 ** Math.max(0, attempt - 1), RETRY_CAP_MS)

/** An attempt's outcome: delivered (2xx), or retried (anything else) until 24 h after the first attempt. */
export type AttemptStatus = "delivered" | "retrying" | "failed"

export const afterAttempt = (input: {
  readonly delivered: boolean
  readonly attempt: number
  readonly firstAttemptAt: number
  readonly now: number
}): { readonly status: AttemptStatus; readonly nextAt: number | null } => {
  if (input.delivered) return { status: "delivered", nextAt: null }
  const end = input.firstAttemptAt + RETRY_FOR_MS
  if (input.now >= end) return { status: "failed", nextAt: null }
  return { status: "retrying", nextAt: Math.min(input.now + retryDelayMillis(input.attempt), end) }
}

/** Why a URL is refused: 400 not an http(s) URL we can use, 422 a target that is never a receiver. */
export interface UrlRefused {
  readonly status: 400 | 422
  readonly detail: string
}

const ipv4Parts = (host: string): ReadonlyArray<number> | undefined =>
  isIP(host) === 4 ? host.split(".").map(Number) : undefined

/** IPv4 addresses no receiver has: "this network", link-local (cloud metadata at 169.254.169.254), multicast and broadcast. */
const refusedIpv4 = ([a, b]: ReadonlyArray<number>) => a === 0 || (a === 169 && b === 254) || a! >= 224

const refusedIpv6 = (host: string) => {
  const h = host.toLowerCase()
  // An IPv4 address mapped into IPv6, as the URL parser writes it (::ffff:a9fe:a9fe) or dotted.
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h)
  if (dotted !== null) return refusedIpv4(ipv4Parts(dotted[1]!)!)
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(h)
  if (hex !== null) return refusedIpv4([parseInt(hex[1]!, 16) >> 8, parseInt(hex[1]!, 16) & 255])
  return h === "::" || /^fe[89ab]/.test(h) || h.startsWith("ff")
}

/** Names of cloud metadata services, reachable only from inside their clouds. */
const metadataHosts = new Set(["metadata", "metadata.google.internal", "metadata.goog"])

/**
 * A webhook URL as stored: http or https, no `user:password@` (the signature is how a receiver
 * knows recon), never a link-local, unspecified, multicast or metadata address. Loopback and
 * private addresses are accepted: a merchant's receiver often lives on the same private network,
 * and only an operator holding the admin token configures webhooks (docs/WEBHOOKS.md).
 */
export const checkWebhookUrl = (raw: string): Result.Result<string, UrlRefused> => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Result.fail({ status: 400, detail: "url is not a valid URL" })
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return Result.fail({ status: 400, detail: "url must be an http:// or https:// URL" })
  if (url.username !== "" || url.password !== "") {
    return Result.fail({ status: 400, detail: "url must not carry user:password@; receivers verify X-Recon-Signature instead" })
  }
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "")
  const v4 = ipv4Parts(host)
  if ((v4 !== undefined && refusedIpv4(v4)) || (isIP(host) === 6 && refusedIpv6(host)) || metadataHosts.has(host.toLowerCase())) {
    return Result.fail({ status: 422, detail: `url points at ${host}: link-local, unspecified, multicast and cloud metadata addresses are refused` })
  }
  return Result.succeed(url.href)
}
