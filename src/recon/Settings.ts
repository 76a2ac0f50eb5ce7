// recon_service's own settings (DESIGN section 3): its port, the admin caller's tokens it accepts,
// the LLM gateway that reads what no template does, and the push URL a phone's registration gets.
import { Effect, Option, type Redacted } from "effect"
import { all, port, problem, secret, type Settings, string, stripSlash, url } from "../config/Keys.ts"
import { readTokenPolicy, type TokenPolicy } from "../config/Tokens.ts"

export interface LlmSettings {
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly model: string
  readonly baseUrl: string
}

export const readLlmSettings: Settings<LlmSettings> = all({
  apiKey: secret("SVC_RECON_LLM_API_KEY"),
  model: string("SVC_RECON_LLM_MODEL"),
  baseUrl: url("SVC_RECON_LLM_BASE_URL", ["http", "https"])
}).pipe(Effect.flatMap(({ apiKey, baseUrl, model }) =>
  Option.isSome(apiKey) && Option.isNone(model)
    ? problem("SVC_RECON_LLM_MODEL: required when SVC_RECON_LLM_API_KEY is set")
    : Effect.succeed({
      apiKey: Option.getOrUndefined(apiKey),
      model: Option.getOrElse(model, () => ""),
      baseUrl: Option.getOrElse(baseUrl, () => "https://api.openai.com/v1")
    })
))

export interface ReconSettings {
  readonly port: number
  readonly tokens: TokenPolicy
  readonly llm: LlmSettings
  readonly pushPublicUrl: string
}

export const readReconSettings: Settings<ReconSettings> = all({
  port: port("SVC_RECON_PORT", 8017),
  tokens: readTokenPolicy("admin"),
  llm: readLlmSettings,
  // Where phones reach the worker's push listener; the webhook_url of a registration starts with it.
  pushPublicUrl: all({ publicUrl: url("SVC_PUSH_PUBLIC_URL", ["http", "https"]), pushPort: port("SVC_PUSH_PORT", 8019) }).pipe(
    Effect.map(({ publicUrl, pushPort }) => stripSlash(Option.getOrElse(publicUrl, () => `http://127.0.0.1:${pushPort}`)))
  )
})
