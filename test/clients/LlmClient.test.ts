// LlmClient against a local server speaking the OpenAI chat-completions wire format.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Logger, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { LlmClient, RuleGenerationFailed } from "../../src/clients/LlmClient.ts"
import { normalizeSmsText } from "../../src/domain/SmsText.ts"
import { callLog, serveLoopback } from "../support/fakeServer.ts"

const apiKey = "sk-test-5f1e2d3c4b5a69788796a5b4c3d2e1f0"
const model = "gpt-test-mini"

interface ChatRequest {
  readonly method: string | undefined
  readonly path: string | undefined
  readonly authorization: string | undefined
  readonly contentType: string | undefined
  readonly body: {
    readonly model: string
    readonly temperature: number
    readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
  }
}

type Reply =
  | { readonly status?: number; readonly content: string | null }
  | { readonly status: number; readonly raw: string }
  | "hang"

const completion = (content: string | null) =>
  JSON.stringify({
    id: "chatcmpl-test",
    object: "chat.completion",
    created: 1_760_000_000,
    model,
    choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" }],
    usage: { prompt_tokens: 400, completion_tokens: 40, total_tokens: 440 }
  })

/** A chat-completions server on 127.0.0.1: the n-th call (from 0) gets `reply(n)`; every request is recorded. */
const gateway = (reply: (call: number) => Reply) =>
  Effect.gen(function*() {
    const log = callLog<ChatRequest>()
    const origin = yield* serveLoopback((req, res, text) => {
      const call = log.calls.length
      log.record({
        method: req.method,
        path: req.url,
        authorization: req.headers.authorization,
        contentType: req.headers["content-type"],
        body: JSON.parse(text)
      })
      const answer = reply(call)
      if (answer === "hang") return
      const status = answer.status ?? 200
      const body = "raw" in answer ? answer.raw : completion(answer.content)
      res.writeHead(status, { "content-type": "raw" in answer ? "text/html" : "application/json" }).end(body)
    })
    return { baseUrl: `${origin}/v1/`, requests: log.calls, arrived: log.arrived }
  })

const clientLayer = (baseUrl: string) =>
  LlmClient.layer({ apiKey: Redacted.make(apiKey), model, baseUrl }).pipe(Layer.provide(FetchHttpClient.layer))

const generate = (baseUrl: string, input: { readonly bank: string; readonly sample: string; readonly sender?: string }) =>
  Effect.gen(function*() {
    const llm = yield* LlmClient
    return yield* llm.generateRule(input)
  }).pipe(Effect.provide(clientLayer(baseUrl)))

/** Every log line of the test, rendered, to check that the key never appears. */
const captureLogs = (lines: Array<string>) =>
  Logger.layer([Logger.make((options) => lines.push(`${options.logLevel} ${JSON.stringify(options.message)}`))])

const kbSample = "[Web발신]\n[KB]01/20 10:13\n971372**874\n박희자\n입금\n141,000\n잔액1,033,072"
const kbGood =
  "\\[KB\\](?P<time>\\d{2}/\\d{2} \\d{2}:\\d{2})\\n(?P<account>\\S+)\\n(?P<name>[^\\n]+)\\n입금\\n(?P<amount>[\\d,]+)(?:\\n잔액(?P<balance>[\\d,]+))?"
// Matches the sample, but also every KB withdrawal of the same layout.
const kbLax = "\\[KB\\]\\S+ \\S+\\n\\S+\\n(?P<name>[^\\n]+)\\n(?:입금|출금)\\n(?P<amount>[\\d,]+)"
// Compiles and has its groups, but fits another bank's format.
const shinhanOnly = "신한(?P<time>\\S+ \\S+)\\n\\S+\\n입금\\s+(?P<amount>[\\d,]+)\\n잔액\\s+[\\d,]+\\n\\s*(?P<name>[^\\n]+)"

const json = (rule: string) => JSON.stringify({ rule })

const failure = <A>(exit: Exit.Exit<A, RuleGenerationFailed>): RuleGenerationFailed => {
  if (Exit.isSuccess(exit)) return assert.fail("expected RuleGenerationFailed")
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (error === undefined || error._tag !== "Fail") return assert.fail(`expected a typed failure, got ${String(exit.cause)}`)
  assert.instanceOf(error.error, RuleGenerationFailed)
  return error.error
}

describe("LlmClient", () => {
  it.effect("asks for a rule once when the first answer is good, with the expected request", () =>
    Effect.gen(function*() {
      const server = yield* gateway(() => ({ content: json(kbGood) }))
      const logs: Array<string> = []
      const rule = yield* generate(server.baseUrl, { bank: "KB국민", sample: kbSample, sender: "16449999" }).pipe(
        Effect.provide(captureLogs(logs))
      )
      assert.strictEqual(rule.source, kbGood)
      assert.deepStrictEqual(rule.extract(kbSample), {
        name: "박희자",
        amount: "141000",
        time: "01/20 10:13",
        account: "971372**874",
        balance: "1033072"
      })

      assert.strictEqual(server.requests.length, 1)
      const [request] = server.requests
      assert.isDefined(request)
      assert.strictEqual(request.method, "POST")
      assert.strictEqual(request.path, "/v1/chat/completions") // base URL with a trailing slash: no "//"
      assert.strictEqual(request.authorization, `Bearer ${apiKey}`)
      assert.match(request.contentType ?? "", /^application\/json/)
      assert.strictEqual(request.body.model, model)
      assert.strictEqual(request.body.temperature, 0)
      assert.deepStrictEqual(request.body.messages.map((m) => m.role), ["system", "user"])
      const [system, user] = request.body.messages
      assert.include(system?.content, "RE2")
      assert.include(system?.content, "(?P<name>")
      assert.include(system?.content, "amount")
      assert.include(system?.content, "{\"rule\": \"...\"}")
      assert.include(system?.content, "출금")
      assert.include(user?.content, "KB국민")
      assert.include(user?.content, "16449999")
      assert.include(user?.content, normalizeSmsText(kbSample))

      assert.isTrue(logs.some((line) => line.includes("accepted")), logs.join("\n"))
      assert.isFalse(logs.some((line) => line.includes(apiKey)))
    }))

  it.effect("tells the model why its rule was rejected and accepts the corrected one", () =>
    Effect.gen(function*() {
      const server = yield* gateway((call) => ({ content: json(call === 0 ? shinhanOnly : kbGood) }))
      const rule = yield* generate(server.baseUrl, { bank: "KB국민", sample: kbSample })
      assert.strictEqual(rule.source, kbGood)
      assert.strictEqual(server.requests.length, 2)
      const second = server.requests[1]?.body.messages ?? []
      assert.deepStrictEqual(second.map((m) => m.role), ["system", "user", "assistant", "user"])
      assert.strictEqual(second[2]?.content, json(shinhanOnly))
      assert.include(second[3]?.content, "rejected")
      assert.include(second[3]?.content, "rule does not extract name and amount from the sample")
      // The first two messages are the same as in the first call.
      assert.deepStrictEqual(second.slice(0, 2), server.requests[0]?.body.messages)
    }))

  it.effect("rejects a rule that also reads a withdrawal as a deposit, and says so to the model", () =>
    Effect.gen(function*() {
      const server = yield* gateway((call) => ({ content: json(call === 0 ? kbLax : kbGood) }))
      const rule = yield* generate(server.baseUrl, { bank: "KB국민", sample: kbSample })
      assert.strictEqual(rule.source, kbGood)
      assert.strictEqual(server.requests.length, 2)
      const feedback = server.requests[1]?.body.messages[3]?.content ?? ""
      assert.include(feedback, "known withdrawal")
    }))

  it.effect("gives up after exactly 3 bad rules with RuleGenerationFailed", () =>
    Effect.gen(function*() {
      const server = yield* gateway(() => ({ content: json(kbLax) }))
      const logs: Array<string> = []
      const exit = yield* Effect.exit(
        generate(server.baseUrl, { bank: "KB국민", sample: kbSample }).pipe(Effect.provide(captureLogs(logs)))
      )
      const error = failure(exit)
      assert.strictEqual(server.requests.length, 3)
      assert.include(error.detail, "3 attempts")
      assert.include(error.detail, "known withdrawal")
      // Each retry carries the whole conversation so far.
      assert.deepStrictEqual(server.requests.map((r) => r.body.messages.length), [2, 4, 6])
      assert.strictEqual(logs.filter((line) => line.includes("rejected")).length, 3)
      assert.isFalse(logs.some((line) => line.includes(apiKey)))
    }))

  it.effect("finds the rule in a fenced block, in a bare line, and in JSON with unescaped backslashes", () =>
    Effect.gen(function*() {
      const answers = [
        `Here you go:\n\`\`\`json\n${json(kbGood)}\n\`\`\``,
        kbGood,
        `{"rule": "${kbGood}"}` // "\[" is no JSON escape: a model that forgot to double its backslashes
      ]
      for (const content of answers) {
        const server = yield* gateway(() => ({ content }))
        const rule = yield* generate(server.baseUrl, { bank: "KB국민", sample: kbSample })
        assert.strictEqual(rule.extract(kbSample)?.name, "박희자", content)
        assert.strictEqual(server.requests.length, 1, content)
      }
    }))

  it.effect("counts an answer without a rule as a failed attempt", () =>
    Effect.gen(function*() {
      const server = yield* gateway((call) => ({ content: call === 0 ? null : json(kbGood) }))
      const rule = yield* generate(server.baseUrl, { bank: "KB국민", sample: kbSample })
      assert.strictEqual(rule.source, kbGood)
      assert.strictEqual(server.requests.length, 2)
      assert.include(server.requests[1]?.body.messages[3]?.content, "no rule")
    }))

  it.live("fails after 3 HTTP 500 answers, without the key or the raw body in the detail", () =>
    Effect.gen(function*() {
      const echo = `{"error":{"message":"upstream exploded for key ${apiKey}","trace":"${"x".repeat(5_000)}"}}`
      const server = yield* gateway(() => ({ status: 500, raw: echo }))
      const logs: Array<string> = []
      const exit = yield* Effect.exit(
        generate(server.baseUrl, { bank: "KB국민", sample: kbSample }).pipe(Effect.provide(captureLogs(logs)))
      )
      const error = failure(exit)
      assert.strictEqual(server.requests.length, 3)
      assert.include(error.detail, "HTTP 500")
      assert.notInclude(error.detail, apiKey)
      assert.notInclude(error.detail, "x".repeat(200))
      assert.isAtMost(error.detail.length, 401)
      assert.notInclude(JSON.stringify(error), apiKey)
      assert.notInclude(String(error), apiKey)
      assert.strictEqual(logs.filter((line) => line.includes("HTTP 500")).length, 3)
      assert.isFalse(logs.some((line) => line.includes(apiKey)))
    }))

  it.live("fails on a body that is not a chat completion, and recovers when the next one is", () =>
    Effect.gen(function*() {
      const garbage = yield* gateway(() => ({ status: 200, raw: `<html>${"<p>busy</p>".repeat(500)}</html>` }))
      const error = failure(yield* Effect.exit(generate(garbage.baseUrl, { bank: "KB국민", sample: kbSample })))
      assert.strictEqual(garbage.requests.length, 3)
      assert.include(error.detail, "not a chat completion")
      assert.notInclude(error.detail, "<p>busy</p>".repeat(30))

      const flaky = yield* gateway((call) =>
        call === 0 ? { status: 502, raw: "Bad Gateway" } : call === 1 ? { status: 200, raw: "{\"choices\":[]}" } : { content: json(kbGood) }
      )
      const rule = yield* generate(flaky.baseUrl, { bank: "KB국민", sample: kbSample })
      assert.strictEqual(rule.source, kbGood)
      assert.strictEqual(flaky.requests.length, 3)
      // Failed calls got no answer to discuss: the conversation is sent again unchanged.
      assert.deepStrictEqual(flaky.requests.map((r) => r.body.messages.length), [2, 2, 2])
    }))

  it.live("fails when the gateway cannot be reached", () =>
    Effect.gen(function*() {
      // Its scope closes at once: the address no longer answers.
      const server = yield* Effect.scoped(gateway(() => ({ content: json(kbGood) })))
      const error = failure(yield* Effect.exit(generate(server.baseUrl, { bank: "KB국민", sample: kbSample })))
      assert.include(error.detail, "gateway unreachable")
      assert.strictEqual(server.requests.length, 0)
    }))

  it.effect("abandons a call after 30 s and tries again", () =>
    Effect.gen(function*() {
      const server = yield* gateway((call) => call === 0 ? "hang" : { content: json(kbGood) })
      const fiber = yield* Effect.forkChild(generate(server.baseUrl, { bank: "KB국민", sample: kbSample }))
      yield* server.arrived(1)
      yield* TestClock.adjust("29 seconds")
      assert.strictEqual(server.requests.length, 1)
      yield* TestClock.adjust("2 seconds") // past 30 s, and past the short backoff
      const rule = yield* Fiber.join(fiber)
      assert.strictEqual(rule.source, kbGood)
      assert.strictEqual(server.requests.length, 2)
    }))

  it.effect("is off without an API key and then never calls the gateway", () =>
    Effect.gen(function*() {
      const server = yield* gateway(() => ({ content: json(kbGood) }))
      for (const key of [undefined, Redacted.make("")]) {
        const exit = yield* Effect.gen(function*() {
          const llm = yield* LlmClient
          assert.isFalse(llm.enabled)
          return yield* llm.generateRule({ bank: "KB국민", sample: kbSample })
        }).pipe(Effect.provide(LlmClient.layer({ apiKey: key, model, baseUrl: server.baseUrl }).pipe(Layer.provide(FetchHttpClient.layer))), Effect.exit)
        assert.strictEqual(failure(exit).detail, "AI rule generation is off")
      }
      assert.strictEqual(server.requests.length, 0)
      const llm = yield* Effect.provide(LlmClient, clientLayer(server.baseUrl))
      assert.isTrue(llm.enabled)
    }))
})
