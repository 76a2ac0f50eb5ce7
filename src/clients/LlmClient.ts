// AI rule generation: asks an OpenAI-compatible chat-completions gateway for an RE2 template rule
// and accepts only a rule that validates on the sample and matches no known non-deposit message.
import { Context, Data, Duration, Effect, flow, Layer, Option, Redacted, Result, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { type CompiledRule, validateRule } from "../parse/TemplateRule.ts"
import { normalizeSmsText } from "../domain/SmsText.ts"
import { callJson, clip, scrubber } from "./Upstream.ts"

export class RuleGenerationFailed extends Schema.TaggedError<RuleGenerationFailed>()("RuleGenerationFailed", {
  detail: Schema.String
}) {}

export interface GenerateRuleInput {
  readonly bank: string
  readonly sample: string
  readonly sender?: string | undefined
}

export interface LlmClientConfig {
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly model: string
  readonly baseUrl: string
}

const maxAttempts = 3
const callTimeout = Duration.seconds(30)
/** Backoff after a failed gateway call: 250 ms, then 500 ms. An invalid rule is re-asked at once. */
const backoff = (attempt: number) => Duration.millis(250 * 2 ** (attempt - 1))

const systemPrompt = [
  "You write one regular expression that extracts a deposit from Korean bank SMS / app-push notifications.",
  "You get the bank, maybe the sender number, and one sample deposit message. Write a rule for messages of exactly that format.",
  "",
  "Dialect: RE2 (Go regexp syntax), unicode mode, no flags. Not available: backreferences (\\1), lookahead/lookbehind ((?=, (?!, (?<=, (?<!), atomic groups, possessive quantifiers.",
  "\\d and \\s are ASCII only. Messages contain real line breaks: match them with \\n or \\s+; '.' does not match a line break.",
  "The message is given as the parser reads it: without [Web발신] and the 보낸사람 line, lines trimmed, runs of spaces made one,",
  "full-width digits folded to ASCII. Some phones remove the line breaks between fields: prefer \\s* between fields on separate lines.",
  "",
  "Named groups, written (?P<name>...):",
  "- name (required): the depositor as printed, without a trailing 님;",
  "- amount (required): the deposited amount, digits with optional thousands commas, without 원;",
  "- time, balance, account (optional): transaction time, balance after the deposit, account number.",
  "The rule is searched anywhere in the message (no implicit anchors).",
  "",
  "Safety: a withdrawal read as a deposit credits money that never arrived. The rule must never match withdrawals or outgoing money",
  "(출금, 지급, 이체출금, 체크카드출금, 자동이체, 보냈어요), card approvals or cancellations (승인, 취소), deposit reversals (입금취소),",
  "OTPs, notices, advertisements or templates. Require the deposit word (입금, 이체입금, ...) literally, and keep the bank's fixed text;",
  "never make the transaction word optional or a wildcard.",
  "",
  "Answer with JSON only, exactly {\"rule\": \"...\"} (backslashes escaped for JSON), no prose, no code fence."
].join("\n")

const userPrompt = (input: GenerateRuleInput): string =>
  [
    `Bank: ${input.bank}`,
    ...(input.sender === undefined || input.sender === "" ? [] : [`Sender: ${input.sender}`]),
    "Sample deposit message (between the markers; line breaks are real):",
    "<<<",
    normalizeSmsText(input.sample),
    ">>>"
  ].join("\n")

const feedbackPrompt = (reason: string): string =>
  `Your previous rule was rejected: ${reason}\nWrite a corrected rule. Answer with JSON {"rule": "..."} only.`

interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

const ChatCompletion = Schema.Struct({
  choices: Schema.NonEmptyArray(Schema.Struct({
    message: Schema.Struct({ content: Schema.optional(Schema.NullOr(Schema.String)) })
  }))
})
const ChatCompletionBody = Schema.fromJsonString(ChatCompletion)

const decodeRuleAnswer = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({ rule: Schema.String })))

const excerpt = (body: string): string => clip(body.replace(/\s+/g, " ").trim(), 160)

/** The rule in a model answer: JSON (bare, fenced or embedded), loosely escaped JSON, or a bare line. */
const ruleFromAnswer = (content: string): string | undefined => {
  const text = content.slice(0, 20_000).trim() // a rule is at most 2,000 characters; bound the scanning
  const fenced = /```[A-Za-z0-9_-]*[ \t]*\r?\n?([\s\S]*?)```/.exec(text)?.[1]?.trim()
  const candidates = fenced === undefined ? [text] : [fenced, text]
  for (const candidate of candidates) {
    const first = candidate.indexOf("{")
    const last = candidate.lastIndexOf("}")
    const embedded = first >= 0 && last > first ? candidate.slice(first, last + 1) : undefined
    for (const json of embedded === undefined || embedded === candidate ? [candidate] : [candidate, embedded]) {
      const decoded = decodeRuleAnswer(json)
      if (Option.isSome(decoded)) return decoded.value.rule
    }
    // Models often forget to double the backslashes of a regex inside JSON ("\d" is no JSON escape).
    const loose = embedded === undefined ? null : /^\{\s*"rule"\s*:\s*"([\s\S]*)"\s*\}$/.exec(embedded)
    if (loose?.[1] !== undefined) return loose[1].replaceAll("\\\"", "\"")
  }
  const lines = (fenced ?? text).split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "")
  const bare = lines.length === 1 ? lines[0] : lines.find((line) => /\(\?P?<amount>/.test(line))
  if (bare === undefined) return undefined
  return bare.replace(/^`(.*)`$/, "$1")
}

/** The validated rule of an answer, or why it was rejected (told to the model on the next attempt). */
const judgeAnswer = (content: string, sample: string): Result.Result<CompiledRule, string> => {
  const rule = ruleFromAnswer(content)
  if (rule === undefined) return Result.fail("the answer contains no rule")
  return Result.mapError(validateRule(rule, sample, { rejectNonDeposits: true }), (rejected) => rejected.detail)
}

/** A failed gateway call (transport, timeout, status, body); its reason is safe to log and return. */
class GatewayFailed extends Data.TaggedError("GatewayFailed")<{ readonly reason: string }> {}

const chatCompletionsUrl = (baseUrl: string): string => `${baseUrl.replace(/\/+$/, "")}/chat/completions`

export class LlmClient extends Context.Service<LlmClient, {
  readonly enabled: boolean
  readonly generateRule: (input: GenerateRuleInput) => Effect.Effect<CompiledRule, RuleGenerationFailed>
}>()("recon/clients/LlmClient") {
  /** Enabled when `apiKey` is set (and not empty), on the HttpClient of the layer graph. */
  static readonly layer = (config: LlmClientConfig): Layer.Layer<LlmClient, never, HttpClient.HttpClient> =>
    Layer.effect(
      LlmClient,
      Effect.gen(function*() {
        const apiKey = config.apiKey
        if (apiKey === undefined || Redacted.value(apiKey) === "") {
          return LlmClient.of({
            enabled: false,
            generateRule: () => Effect.fail(new RuleGenerationFailed({ detail: "AI rule generation is off" }))
          })
        }
        const client = (yield* HttpClient.HttpClient).pipe(
          HttpClient.mapRequest(flow(HttpClientRequest.bearerToken(apiKey), HttpClientRequest.acceptJson)),
          HttpClient.filterStatusOk
        )
        const url = chatCompletionsUrl(config.baseUrl)
        // Belt and braces: a gateway may echo the key back in an error body.
        const scrub = scrubber(Redacted.value(apiKey))

        const complete = (messages: ReadonlyArray<ChatMessage>): Effect.Effect<string, GatewayFailed> =>
          HttpClientRequest.post(url).pipe(
            HttpClientRequest.bodyJsonUnsafe({ model: config.model, messages, temperature: 0 }),
            (request) => callJson(client, request, { body: ChatCompletionBody, timeout: callTimeout }),
            Effect.map(({ body }) => body.choices[0].message.content ?? ""),
            Effect.mapError((failure) =>
              new GatewayFailed({
                reason: failure._tag === "UpstreamTimeout"
                  ? "gateway did not answer within 30 s"
                  : failure._tag === "UpstreamUnreachable"
                  ? `gateway unreachable (${failure.kind})`
                  : failure._tag === "UpstreamStatus"
                  ? `gateway answered HTTP ${failure.status}: ${scrub(excerpt(failure.body))}`
                  : `gateway answer is not a chat completion: ${scrub(excerpt(failure.body))}`
              })
            )
          )

        const generateRule = Effect.fn("LlmClient.generateRule")(
          function*(input: GenerateRuleInput): Effect.fn.Return<CompiledRule, RuleGenerationFailed> {
            const messages: Array<ChatMessage> = [
              { role: "system", content: systemPrompt },
              { role: "user", content: userPrompt(input) }
            ]
            let lastReason = "no attempt made"
            for (let attempt = 1; attempt <= maxAttempts; attempt++) {
              const answer = yield* Effect.result(complete(messages))
              if (answer._tag === "Failure") {
                lastReason = answer.failure.reason
                yield* Effect.logWarning(`AI rule attempt ${attempt}/${maxAttempts} failed: ${lastReason}`)
                if (attempt < maxAttempts) yield* Effect.sleep(backoff(attempt))
                continue
              }
              const content = answer.success
              const verdict = judgeAnswer(content, input.sample)
              if (verdict._tag === "Success") {
                yield* Effect.logInfo(`AI rule attempt ${attempt}/${maxAttempts} accepted`)
                return verdict.success
              }
              lastReason = `model rule rejected: ${verdict.failure}`
              yield* Effect.logWarning(`AI rule attempt ${attempt}/${maxAttempts} rejected: ${verdict.failure}`)
              messages.push(
                { role: "assistant", content: clip(content, 2_000) },
                { role: "user", content: feedbackPrompt(verdict.failure) }
              )
            }
            return yield* new RuleGenerationFailed({
              detail: scrub(clip(`no valid rule after ${maxAttempts} attempts; last: ${lastReason}`, 400))
            })
          },
          (effect, input) => Effect.annotateLogs(effect, { bank: input.bank, model: config.model })
        )

        return LlmClient.of({ enabled: true, generateRule })
      })
    )
}
