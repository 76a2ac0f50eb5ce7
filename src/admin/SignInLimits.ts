// Sign-in attempts per account and per client address: past a limit within a window, the next
// attempts are refused until the window ends, without hashing anything (admin's edge answers a
// Refusal with 429 and Retry-After: `signInRefused` in Failures.ts). The first refusal of each
// lockout is logged, the rest are not.
import { Clock, Context, Effect, Layer, Schema } from "effect"

export interface SignInLimitSettings {
  /** Attempts one account may get within the window (a successful sign-in clears its count). */
  readonly perAccount: number
  /** Attempts one client address may make within the window. */
  readonly perAddress: number
  readonly windowMs: number
  /** Sign-ins allowed to wait for the password hashing at once; more are refused at once. */
  readonly maxWaiting: number
}

export const defaultSignInLimits: SignInLimitSettings = { perAccount: 10, perAddress: 30, windowMs: 15 * 60_000, maxWaiting: 64 }

/** Counters kept at most; past it the oldest windows are dropped (an attacker's many names cannot grow memory). */
const MAX_TRACKED = 10_000

/**
 * A sign-in refused before its password is checked: too many `attempts` for its account or address
 * within the window, or too many sign-ins `waiting` at once; the caller may try again in `retryAfterS`.
 */
export class Refusal extends Schema.TaggedError<Refusal>()("SignInRefused", {
  reason: Schema.Literals(["attempts", "waiting"]),
  retryAfterS: Schema.Int
}) {}

interface Window {
  readonly start: number
  count: number
  logged: boolean
}

export class SignInLimits extends Context.Service<SignInLimits, {
  /** Counts an attempt of `account` from `address`; a Refusal when either is over its limit. */
  readonly attempt: (account: string, address: string) => Effect.Effect<void, Refusal>
  /** The account signed in: its count starts again. */
  readonly succeeded: (account: string) => Effect.Effect<void>
  /** Runs a hash-bound step unless too many are waiting already (then a Refusal). */
  readonly queued: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Refusal, R>
}>()("recon/admin/SignInLimits") {
  static readonly layer = (settings: SignInLimitSettings = defaultSignInLimits) => Layer.sync(SignInLimits, () => make(settings))
}

const make = (settings: SignInLimitSettings): SignInLimits["Service"] => {
  const windows = new Map<string, Window>()
  let waiting = 0

  const current = (key: string, now: number): Window => {
    const found = windows.get(key)
    if (found !== undefined && now - found.start < settings.windowMs) return found
    windows.delete(key)
    if (windows.size >= MAX_TRACKED) {
      for (const [old, window] of windows) if (now - window.start >= settings.windowMs) windows.delete(old)
      for (const old of windows.keys()) {
        if (windows.size < MAX_TRACKED) break
        windows.delete(old)
      }
    }
    const fresh = { start: now, count: 0, logged: false }
    windows.set(key, fresh)
    return fresh
  }

  const refuse = (what: string, annotations: Record<string, string>, window: Window, now: number) =>
    Effect.gen(function*() {
      const retryAfterS = Math.max(1, Math.ceil((window.start + settings.windowMs - now) / 1000))
      if (!window.logged) {
        window.logged = true
        yield* Effect.logWarning(`sign-in attempts limited: too many for this ${what}; refused for ${retryAfterS} s`).pipe(Effect.annotateLogs(annotations))
      }
      return yield* new Refusal({ reason: "attempts", retryAfterS })
    })

  return {
    attempt: (account, address) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const byAddress = current(`address ${address}`, now)
        if (byAddress.count >= settings.perAddress) return yield* refuse("address", { address }, byAddress, now)
        const byAccount = current(`account ${account}`, now)
        if (byAccount.count >= settings.perAccount) return yield* refuse("account", { account }, byAccount, now)
        byAddress.count++
        byAccount.count++
      }),
    succeeded: (account) => Effect.sync(() => void windows.delete(`account ${account}`)),
    queued: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.suspend((): Effect.Effect<A, E | Refusal, R> => {
        if (waiting >= settings.maxWaiting) {
          return Effect.fail(new Refusal({ reason: "waiting", retryAfterS: 1 }))
        }
        waiting++
        return Effect.ensuring(effect, Effect.sync(() => void waiting--))
      })
  }
}
