// A merchant's webhook receiver on loopback: records every request (headers and raw body),
// verifies X-Recon-Signature as docs/WEBHOOKS.md tells receivers to (HMAC-SHA256 over `t.body`,
// constant-time), and answers as the test says: 200, an error status, not at all (held until
// released), or by dropping the connection.
import { Effect } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { callLog, serveLoopback } from "./fakeServer.ts"

export type Answer = { readonly status: number } | "hold" | "drop"

export interface Delivery {
  readonly eventId: string | undefined
  readonly body: string
  readonly event: { readonly id: number; readonly type: string; readonly created_at: string; readonly data: any }
  /** The signature's `t` (unix seconds). */
  readonly t: number
  readonly verified: boolean
  readonly answer: Answer
}

/** The receiver's check: `t=<seconds>,v1=<hex>` over `${t}.${body}` with the shared secret. */
export const verify = (secret: string, header: string | undefined, body: string): { readonly ok: boolean; readonly t: number } => {
  const parts = Object.fromEntries((header ?? "").split(",").map((p) => p.split("=", 2) as [string, string]))
  const t = Number(parts.t)
  const expected = createHmac("sha256", secret).update(`${parts.t}.${body}`).digest()
  const given = Buffer.from(parts.v1 ?? "", "hex")
  return { ok: Number.isInteger(t) && given.length === expected.length && timingSafeEqual(given, expected), t }
}

/** Serves until the scope closes; `answer(n)` decides the n-th request's fate (0-based). */
export const webhookReceiver = (secret: string, initial: (n: number, event: Delivery["event"]) => Answer = () => ({ status: 200 })) =>
  Effect.gen(function*() {
    const log = callLog<Delivery>()
    let answer = initial
    let held: Array<() => void> = []
    const url = yield* serveLoopback((req, res, body) => {
      const event = JSON.parse(body)
      const chosen = answer(log.calls.length, event)
      const signature = verify(secret, req.headers["x-recon-signature"] as string | undefined, body)
      log.record({ eventId: req.headers["x-recon-event-id"] as string | undefined, body, event, t: signature.t, verified: signature.ok, answer: chosen })
      if (chosen === "drop") return void req.socket.destroy()
      const send = () => res.writeHead(chosen === "hold" ? 200 : chosen.status, { "content-type": "application/json" }).end("{}")
      if (chosen === "hold") held.push(send)
      else send()
    })
    return {
      url: `${url}/hooks/recon`,
      received: log.calls,
      arrived: log.arrived,
      setAnswer: (f: typeof answer) => {
        answer = f
      },
      held: () => held.length,
      releaseHeld: () => {
        const waiting = held
        held = []
        for (const send of waiting) send()
      }
    }
  })
