// Operator password hashes (admin's sign-in and `admin --create-user`, the demo's operator): scrypt
// with a random salt, stored as `scrypt$N$r$p$salt$hash` (base64url) so a hash keeps verifying
// after the defaults change.
import { Effect, Semaphore } from "effect"
import { randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from "node:crypto"
import { availableParallelism } from "node:os"

/** 2^15 × 8 × 128 bytes = 32 MiB and about 0.1 s per hash: costly to guess, cheap enough per login. */
const defaults = { N: 32_768, r: 8, p: 1 } as const
const KEY_BYTES = 32
const SALT_BYTES = 16

export const MIN_PASSWORD_LENGTH = 10
export const MAX_PASSWORD_LENGTH = 1024

/** Why a password is refused, or undefined when it is acceptable. */
export const passwordProblem = (password: string): string | undefined =>
  password.length === 0
    ? "the password is empty"
    : password.length < MIN_PASSWORD_LENGTH
    ? `the password is too short (at least ${MIN_PASSWORD_LENGTH} characters)`
    : password.length > MAX_PASSWORD_LENGTH
    ? `the password is too long (at most ${MAX_PASSWORD_LENGTH} characters)`
    : undefined

/**
 * Hashes running at once in this process. scrypt runs on libuv's thread pool (4 threads), which
 * the file writes (the worker's heartbeat under `all`), DNS and other crypto share: an
 * unauthenticated caller may fill at most two of them, never the pool, and on a machine of two
 * cores one, so a core stays free for the event loop.
 */
export const MAX_CONCURRENT_HASHES = Math.max(1, Math.min(2, availableParallelism() - 1))
const hashing = Semaphore.makeUnsafe(MAX_CONCURRENT_HASHES)
let running = 0
let peak = 0
let derived = 0
let work = 0

/** The most hashes that ran at once since the process started (the benchmark and tests watch it). */
export const peakConcurrentHashes = (): number => peak

/**
 * The scrypt derivations begun since the process started, and their summed cost N·r·p (what a
 * derivation's time and memory grow with): the tests see through it that a sign-in hashes once at
 * full cost whether the account exists or not.
 */
export const hashingDone = (): { readonly derivations: number; readonly cost: number } => ({ derivations: derived, cost: work })

const derive = (password: string, salt: Buffer, keyBytes: number, params: { readonly N: number; readonly r: number; readonly p: number }) =>
  Effect.callback<Buffer, Error>((resume) => {
    // Runs on libuv's thread pool, so a login does not block the event loop.
    const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 }
    peak = Math.max(peak, ++running)
    derived++
    work += params.N * params.r * params.p
    scrypt(password.normalize("NFC"), salt, keyBytes, options, (error, key) => {
      running--
      resume(error === null ? Effect.succeed(key) : Effect.fail(error))
    })
  }).pipe(
    // A caller that goes away does not free its thread: the permit stays taken until the hash ends.
    Effect.uninterruptible,
    Semaphore.withPermits(hashing, 1)
  )

export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.suspend(() => {
    const salt = randomBytes(SALT_BYTES)
    return derive(password, salt, KEY_BYTES, defaults).pipe(
      Effect.map((key) => ["scrypt", defaults.N, defaults.r, defaults.p, salt.toString("base64url"), key.toString("base64url")].join("$")),
      Effect.orDie
    )
  })

const parse = (encoded: string) => {
  const [scheme, n, r, p, salt, key] = encoded.split("$")
  const params = { N: Number(n), r: Number(r), p: Number(p) }
  if (scheme !== "scrypt" || salt === undefined || key === undefined || key.length === 0 || !Object.values(params).every(Number.isSafeInteger)) {
    return undefined
  }
  return { params, salt: Buffer.from(salt, "base64url"), key: Buffer.from(key, "base64url") }
}

/** True when `password` matches `encoded`; a malformed stored hash matches nothing. */
export const verifyPassword = (password: string, encoded: string): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const stored = parse(encoded)
    if (stored === undefined) return Effect.succeed(false)
    return derive(password, stored.salt, stored.key.length, stored.params).pipe(
      Effect.map((key) => timingSafeEqual(key, stored.key)),
      Effect.orElseSucceed(() => false)
    )
  })
