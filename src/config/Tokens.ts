// The internal service tokens and their migration stages (DESIGN section 3): which tokens a
// receiver accepts from its caller, which one a caller presents, and the dev tokens of `all`.
import { Effect, Option, Redacted, Result } from "effect"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { type Env, flagConfig, fromEnv, problems, read, secret, type Settings } from "./Keys.ts"

export type Caller = "admin" | "recon"

export const tokenKeys: Record<Caller, string> = {
  admin: "SVC_INTERNAL_SERVICE_TOKEN_ADMIN",
  recon: "SVC_INTERNAL_SERVICE_TOKEN_RECON"
}
export const SHARED_TOKEN_KEY = "SVC_INTERNAL_SERVICE_TOKEN"
export const STAGE_KEY = "SVC_PER_CALLER_TOKEN_REQUIRED"

export interface TokenPolicy {
  /** Whose token the receiver takes. */
  readonly caller: Caller
  readonly stage: "A" | "B" | "C"
  /** The tokens a receiver accepts from its caller: the caller's own, and the shared one before stage C. */
  readonly accepted: ReadonlyArray<Redacted.Redacted<string>>
}

/** The stage key, read by one Config everywhere: a receiver and a caller of the same token agree on it. */
export const stageCConfig = flagConfig(STAGE_KEY)

/** `value`, or every line of `found` when there is one. */
const unlessProblems = <A>(found: ReadonlyArray<string>, value: A): Settings<A> =>
  found.length > 0 ? Effect.fail(problems(found)) : Effect.succeed(value)

/**
 * The migration stage as a caller and a receiver both need it: stage C, the shared token (which
 * stage C forbids), and the problems found so far. A bad stage value counts as off, so that the
 * problems of the keys it governs are reported with it.
 */
const tokenStage = Effect.gen(function*() {
  const stage = yield* Effect.result(read(stageCConfig))
  const shared = yield* secret(SHARED_TOKEN_KEY)
  const stageC = Result.getOrElse(stage, () => false)
  const found = [
    ...(Result.isFailure(stage) ? stage.failure.problems : []),
    ...(stageC && Option.isSome(shared) ? [`${SHARED_TOKEN_KEY}: must be empty once ${STAGE_KEY}=on (stage C accepts only per-caller tokens)`] : [])
  ]
  return { stageC, shared, found }
})

/** The tokens a receiver for `caller` accepts, by the migration stages of DESIGN section 3. */
export const readTokenPolicy = (caller: Caller): Settings<TokenPolicy> =>
  Effect.gen(function*() {
    const { found, shared, stageC } = yield* tokenStage
    const own = yield* secret(tokenKeys[caller])
    if (stageC) {
      return yield* Option.isNone(own)
        ? Effect.fail(problems([...found, `${tokenKeys[caller]}: required when ${STAGE_KEY}=on`]))
        : unlessProblems<TokenPolicy>(found, { caller, stage: "C", accepted: [own.value] })
    }
    const accepted = [own, shared].flatMap((t) => Option.isSome(t) ? [t.value] : [])
    if (accepted.length === 0) {
      found.push(`${tokenKeys[caller]}: not set (set it, or the shared ${SHARED_TOKEN_KEY} during migration stages A/B)`)
    }
    return yield* unlessProblems<TokenPolicy>(found, { caller, stage: Option.isSome(own) && Option.isSome(shared) ? "B" : "A", accepted })
  })

/** The token a caller presents: its own key, or the shared one before stage C. */
export const readCallerToken = (caller: Caller): Settings<Redacted.Redacted<string>> =>
  Effect.gen(function*() {
    const { found, shared, stageC } = yield* tokenStage
    const own = yield* secret(tokenKeys[caller])
    const token = stageC ? own : Option.orElse(own, () => shared)
    if (Option.isNone(token)) {
      return yield* Effect.fail(problems([
        ...found,
        stageC ? `${tokenKeys[caller]}: required when ${STAGE_KEY}=on` : `${tokenKeys[caller]}: not set (nor the shared ${SHARED_TOKEN_KEY})`
      ]))
    }
    return yield* unlessProblems(found, token.value)
  })

/**
 * Dev tokens for `all` when none are configured: made at the first start and kept in `file`
 * (mode 0600, beside the embedded database's data), so a token a user exported keeps working
 * after a restart. `file` is absent when tokens were configured.
 */
export const withDevTokens = (env: Env, file: string): { readonly env: Env; readonly generated: Record<string, string>; readonly file?: string } => {
  const has = (key: string) => (env[key] ?? "").trim() !== ""
  // Not in stage C: whoever turned it on configures real per-caller tokens.
  const stageC = Effect.runSync(fromEnv(env, read(stageCConfig)).pipe(Effect.orElseSucceed(() => false)))
  if (stageC || has(SHARED_TOKEN_KEY) || has(tokenKeys.admin) || has(tokenKeys.recon)) return { env, generated: {} }
  const kept: Record<string, string> = {}
  if (existsSync(file)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const found = /^\s*(SVC_INTERNAL_SERVICE_TOKEN_(?:ADMIN|RECON))=(\S+)\s*$/.exec(line)
      if (found !== null) kept[found[1]!] = found[2]!
    }
  }
  const generated = {
    [tokenKeys.admin]: kept[tokenKeys.admin] ?? `dev-admin-${randomBytes(18).toString("base64url")}`,
    [tokenKeys.recon]: kept[tokenKeys.recon] ?? `dev-recon-${randomBytes(18).toString("base64url")}`
  }
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, Object.entries(generated).map(([key, value]) => `${key}=${value}\n`).join(""), { mode: 0o600 })
  chmodSync(file, 0o600)
  return { env: { ...env, ...generated }, generated, file }
}
