// Operator session tokens: short-lived JWTs (HS256) carrying the operator's id, account and
// expiry, signed with the key in admin.signing_key so every admin process accepts every other's.
import { Clock, Context, Duration, Effect, Layer, Schema } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { AdminStore } from "../db/AdminStore.ts"

export const TTL = Duration.minutes(15)

export interface Session {
  readonly operatorId: number
  readonly account: string
  /** Epoch milliseconds. */
  readonly expiresAt: number
}

export class TokenRejected extends Schema.TaggedError<TokenRejected>()("TokenRejected", {
  reason: Schema.Literals(["missing", "invalid", "expired"])
}) {}

/** The only header this service writes or accepts: no `alg` negotiation, so no `none` or key confusion. */
const HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url")

const Claims = Schema.Struct({
  sub: Schema.String.check(Schema.isPattern(/^[1-9]\d{0,15}$/)),
  acc: Schema.String,
  iat: Schema.Int,
  exp: Schema.Int
})
const decodeClaims = Schema.decodeUnknownOption(Schema.fromJsonString(Claims))

export interface SessionTokensShape {
  readonly issue: (operator: { readonly id: number; readonly account: string }) => Effect.Effect<string>
  readonly verify: (token: string) => Effect.Effect<Session, TokenRejected>
}

/** Tokens signed with `secret`, valid for `ttl` from the moment they are issued (Effect's Clock). */
export const makeSessionTokens = (secret: string, ttl: Duration.Input = TTL): SessionTokensShape => {
  const ttlMillis = Duration.toMillis(ttl)
  const sign = (input: string) => createHmac("sha256", secret).update(input).digest()

  return {
    issue: (operator) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const claims = {
          sub: String(operator.id),
          acc: operator.account,
          iat: Math.floor(now / 1000),
          exp: Math.floor((now + ttlMillis) / 1000)
        }
        const body = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`
        return `${body}.${sign(body).toString("base64url")}`
      }),

    verify: (token) =>
      Effect.gen(function*() {
        if (token === "") return yield* new TokenRejected({ reason: "missing" })
        const [header, payload, signature, ...rest] = token.split(".")
        if (header !== HEADER || payload === undefined || signature === undefined || rest.length > 0) {
          return yield* new TokenRejected({ reason: "invalid" })
        }
        const expected = sign(`${header}.${payload}`)
        const presented = Buffer.from(signature, "base64url")
        if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
          return yield* new TokenRejected({ reason: "invalid" })
        }
        const claims = decodeClaims(Buffer.from(payload, "base64url").toString("utf8"))
        if (claims._tag === "None") return yield* new TokenRejected({ reason: "invalid" })
        const now = yield* Clock.currentTimeMillis
        const expiresAt = claims.value.exp * 1000
        if (now >= expiresAt) return yield* new TokenRejected({ reason: "expired" })
        return { operatorId: Number(claims.value.sub), account: claims.value.acc, expiresAt }
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
