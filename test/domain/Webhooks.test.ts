// Webhooks' pure rules: the body and its signature (a known answer computed elsewhere), the retry
// schedule over a whole day, and which URLs are accepted.
import { assert, describe, it } from "@effect/vitest"
import { inject } from "vitest"
import { Result } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAttempt, checkWebhookUrl, eventBody, retryDelayMillis, RETRY_FOR_MS, signature } from "../../src/domain/Webhooks.ts"

describe("the body and its signature", () => {
  it("{id, type, created_at, data} in that order; t=<seconds>,v1=<hex HMAC-SHA256(secret, t.body)>", () => {
    const body = eventBody({ id: 7, type: "sms.rejected", created_at: "2026-07-09T01:02:03.004Z", data: { sms_id: 5 } })
    assert.strictEqual(body, `{"id":7,"type":"sms.rejected","created_at":"2026-07-09T01:02:03.004Z","data":{"sms_id":5}}`)
    // Python: hmac.new(secret, b"1752000000." + body, sha256).hexdigest()
    assert.strictEqual(signature("whsec-0123456789abcdef", 1752000000, body),
      "t=1752000000,v1=6f8f4786164548ea47831ae6fb6ed0ce08e6dc185f5d70f203f7a48b3b8c562d")
  })
})

describe("the receiver snippet of docs/WEBHOOKS.md", () => {
  it("accepts a delivery as signed, refuses another body, another secret and a stale time", async () => {
    const page = readFileSync(new URL("../../docs/WEBHOOKS.md", import.meta.url), "utf8")
    const snippet = /\*\*Verifying a delivery\*\*[^`]*```js\n([\s\S]*?)```/.exec(page)?.[1]
    assert.isDefined(snippet)
    const file = join(mkdtempSync(join(inject("scratchDir"), "readme-")), "verify.mjs")
    writeFileSync(file, snippet!)
    const { verifyRecon } = await import(pathToFileURL(file).href)
    const body = eventBody({ id: 3, type: "balance.gap", created_at: "2026-07-09T01:02:03.004Z", data: { unexplained: "50000" } })
    const now = Math.floor(Date.now() / 1000)
    const header = signature("whsec-0123456789abcdef", now, body)
    assert.isTrue(verifyRecon("whsec-0123456789abcdef", header, body))
    assert.isTrue(verifyRecon("whsec-0123456789abcdef", header, Buffer.from(body)))
    assert.isFalse(verifyRecon("whsec-0123456789abcdef", header, body.replace("50000", "500000")))
    assert.isFalse(verifyRecon("another-secret-0123456789", header, body))
    assert.isFalse(verifyRecon("whsec-0123456789abcdef", signature("whsec-0123456789abcdef", now - 3600, body), body))
    assert.isFalse(verifyRecon("whsec-0123456789abcdef", undefined, body))
  })
})

describe("retries", () => {
  it("10 s, doubling, capped at 1 h", () => {
    assert.deepStrictEqual([1, 2, 3, 4, 9, 10, 11, 30].map(retryDelayMillis), [10_000, 20_000, 40_000, 80_000, 2_560_000, 3_600_000, 3_600_000, 3_600_000])
  })

  it("a day of failures: attempts on that schedule, the last exactly 24 h after the first, then failed", () => {
    const first = 1_000
    let now = first
    const attempts: Array<number> = []
    for (let attempt = 1; ; attempt++) {
      attempts.push(now - first)
      const next = afterAttempt({ delivered: false, attempt, firstAttemptAt: first, now })
      if (next.status === "failed") break
      assert.strictEqual(next.status, "retrying")
      now = next.nextAt!
    }
    assert.deepStrictEqual(attempts.slice(0, 10), [0, 10_000, 30_000, 70_000, 150_000, 310_000, 630_000, 1_270_000, 2_550_000, 5_110_000])
    assert.strictEqual(attempts[10]! - attempts[9]!, 3_600_000)
    assert.strictEqual(attempts[attempts.length - 1], RETRY_FOR_MS)
    assert.strictEqual(attempts.length, 33)
  })

  it("a 2xx is delivered whenever it comes", () => {
    assert.deepStrictEqual(afterAttempt({ delivered: true, attempt: 30, firstAttemptAt: 0, now: RETRY_FOR_MS + 5 }), { status: "delivered", nextAt: null })
  })
})

describe("webhook URLs", () => {
  const refused = (url: string) => {
    const checked = checkWebhookUrl(url)
    return Result.isFailure(checked) ? checked.failure.status : undefined
  }

  it("http and https, on a public, private or loopback address", () => {
    for (const url of ["https://merchant.example/hooks/recon", "http://10.0.3.7:8080/recon", "http://127.0.0.1:9000/", "http://[::1]:8080/x", "https://192.168.1.20/hook"]) {
      assert.isUndefined(refused(url), url)
    }
    assert.deepStrictEqual(checkWebhookUrl("https://merchant.example"), Result.succeed("https://merchant.example/"))
  })

  it("400 for what is no usable http(s) URL, or carries credentials; 422 for link-local, unspecified, multicast and metadata targets", () => {
    for (const url of ["not a url", "ftp://merchant.example/", "file:///etc/passwd", "https://user:pw@merchant.example/"]) assert.strictEqual(refused(url), 400, url)
    for (const url of ["http://169.254.169.254/latest/meta-data", "http://2852039166/", "http://0.0.0.0:8080/", "http://[fe80::1]/", "http://[::ffff:169.254.169.254]/",
      "http://224.0.0.1/", "http://metadata.google.internal/computeMetadata/v1/", "http://[::]/"]) assert.strictEqual(refused(url), 422, url)
  })
})
