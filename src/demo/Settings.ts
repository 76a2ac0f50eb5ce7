// The demo's own settings (`all --demo`, DESIGN section 3).
import { Effect, Option, Redacted, Result } from "effect"
import { all, int, key, problem, read, secret, type Settings } from "../config/Keys.ts"
import { checkWebhookUrl } from "../domain/Webhooks.ts"

/** `all --demo`'s own keys: a webhook of the person trying the demo, to watch the signed events arrive; the phone's pace. */
export interface DemoSettings {
  readonly webhook: { readonly url: string; readonly secret: Redacted.Redacted<string> | undefined } | undefined
  /** DEMO_SMS_EVERY_MS: about how often the simulated phone sends (±20 %); undefined: every second. */
  readonly smsEveryMs?: number | undefined
}

/** DEMO_SMS_EVERY_MS's default: about one SMS a second. */
export const DEMO_SMS_EVERY_MS = 1000

const parseWebhookUrl = (raw: string): Result.Result<string, string> =>
  Result.mapError(checkWebhookUrl(raw), (refused) => `${refused.detail}, got "${raw}"`)

/** DEMO_WEBHOOK_URL, and DEMO_WEBHOOK_SECRET (16 to 256 characters; the demo makes one when unset); DEMO_SMS_EVERY_MS (100 to 60,000). */
export const readDemoSettings: Settings<DemoSettings> = all({
  url: read(key("DEMO_WEBHOOK_URL", parseWebhookUrl)),
  secret: secret("DEMO_WEBHOOK_SECRET"),
  smsEveryMs: int("DEMO_SMS_EVERY_MS", DEMO_SMS_EVERY_MS, 100, 60_000)
}).pipe(Effect.flatMap(({ secret, smsEveryMs, url }): Settings<DemoSettings> => {
  if (Option.isSome(secret) && (Redacted.value(secret.value).length < 16 || Redacted.value(secret.value).length > 256)) {
    return problem("DEMO_WEBHOOK_SECRET: expected 16 to 256 characters (the receiver verifies X-Recon-Signature with it)")
  }
  if (Option.isNone(url)) {
    return Option.isSome(secret) ? problem("DEMO_WEBHOOK_SECRET: set DEMO_WEBHOOK_URL too (where the signed events go)") : Effect.succeed({ webhook: undefined, smsEveryMs })
  }
  return Effect.succeed({ webhook: { url: url.value, secret: Option.getOrUndefined(secret) }, smsEveryMs })
}))
