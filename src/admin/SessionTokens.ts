// Operator session tokens: short-lived JWTs (HS256, by jose) carrying the operator's id, account
// and expiry, signed with the key in admin.signing_key so every admin process accepts every other's.
import { Clock, Context, Duration, Effect, Layer, Schema } from "effect"
import { errors, jwtVerify, SignJWT } from "jose"
import { AdminStore } from "./AdminStore.ts"
import { type Session } from "../api/ConsoleRecords.ts"

export const TTL = Duration.minutes(15)

export class TokenRejected extends Schema.TaggedError<TokenRejected>()("TokenRejected", {
  reason: Schema.Literals(["missing", "invalid", "expired"])
}) {}

/** The only algorithm this service signs with or accepts: no `alg` negotiation, so no `none` or key confusion. */
const ALGORITHM = "HS256"

const Claims = Schema.Struct({
  sub: Schema.String.check(Schema.isPattern(/^[1-9]\d{0,15}$/)),
  acc: Schema.String,
  iat: Schema.Int,
  exp: Schema.Int
})
const decodeClaims = Schema.decodeUnknownOption(Claims)

export interface SessionTokensShape {
  readonly issue: (operator: { readonly id: number; readonly account: string }) => Effect.Effect<string>
  readonly verify: (token: string) => Effect.Effect<Session, TokenRejected>
}

/** Tokens signed with `secret`, valid for `ttl` from the moment they are issued (Effect's Clock). */
export const makeSessionTokens = (secret: string, ttl: Duration.Input = TTL): SessionTokensShape => {
  const ttlMillis = Duration.toMillis(ttl)
  const key = new TextEncoder().encode(secret)
  const rejected = (reason: TokenRejected["reason"]) => new TokenRejected({ reason })

  return {
    issue: (operator) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.promise(() =>
          new SignJWT({ acc: operator.account })
            .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
            .setSubject(String(operator.id))
            .setIssuedAt(Math.floor(now / 1000))
            .setExpirationTime(Math.floor((now + ttlMillis) / 1000))
            .sign(key)
        )),

    verify: (token) =>
      Effect.gen(function*() {
        if (token === "") return yield* rejected("missing")
        const now = yield* Clock.currentTimeMillis
        // jose checks the signature first, then `exp` against the Clock's time; any other refusal is "invalid".
        const { payload } = yield* Effect.tryPromise({
          try: () => jwtVerify(token, key, {
            algorithms: [ALGORITHM],
            typ: "JWT",
            currentDate: new Date(now),
            requiredClaims: ["sub", "iat", "exp"]
          }),
          catch: (error) => rejected(error instanceof errors.JWTExpired ? "expired" : "invalid")
        })
        const claims = decodeClaims(payload)
        if (claims._tag === "None") return yield* rejected("invalid")
        return { operatorId: Number(claims.value.sub), account: claims.value.acc, expiresAt: claims.value.exp * 1000 }
      })
  }
}

export class SessionTokens extends Context.Service<SessionTokens, SessionTokensShape>()("recon/admin/SessionTokens") {
  /** Reads (or, on a fresh database, creates) the shared signing key once, at start-up. */
  static readonly layer = Layer.effect(
    SessionTokens,
    Effect.gen(function*() {
      const store = yield* AdminStore
      return makeSessionTokens(yield* Effect.orDie(store.signingKey()))
    })
  )
}
