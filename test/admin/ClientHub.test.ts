// The hub's bound on a real websocket: a peer that stops reading is dropped once its socket holds
// more than the bound, while every healthy peer gets every message and no send waits for it.
// Messages of 1 MiB fill the kernel's buffers (several MiB on loopback) in a few sends; with
// top-info's 300-byte messages the same takes thousands of syncs, so the bound is tested here.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { makeClientHub } from "../../src/admin/ClientHub.ts"
import { serveUpgraded } from "../../src/admin/TopInfoSocket.ts"
import { serveLayer } from "../support/recon.ts"
import { stalledClient } from "./wire.ts"

interface Peer {
  readonly next: () => Promise<string>
  readonly close: () => void
}

const healthyPeer = (url: string): Promise<Peer> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    const queue: Array<string> = []
    const waiters: Array<(text: string) => void> = []
    ws.onmessage = (event) => {
      const text = String(event.data)
      const waiter = waiters.shift()
      if (waiter) waiter(text)
      else queue.push(text)
    }
    ws.onerror = () => reject(new Error("websocket error"))
    ws.onopen = () =>
      resolve({
        next: () => queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((res) => waiters.push(res)),
        close: () => ws.close()
      })
  })

describe("ClientHub", () => {
  it("drops the peer that stopped reading, without delaying the healthy ones", async () => {
    const hub = makeClientHub({ maxBuffered: 64 * 1024 })
    const server = await serveLayer(HttpRouter.add("GET", "/ws", (request) =>
      serveUpgraded(request, (connection, reading) =>
        hub.serve(connection, Effect.succeed({ seq: 0, text: "hello" }), reading)).pipe(Effect.as(HttpServerResponse.empty()))))
    try {
      const url = `${server.url.replace(/^http/, "ws")}/ws`
      const healthy = await Promise.all([1, 2, 3].map(() => healthyPeer(url)))
      for (const peer of healthy) assert.strictEqual(await peer.next(), "hello")
      const stalled = await stalledClient(`${server.url}/ws`)
      let closedByServer = false
      stalled.on("close", () => (closedByServer = true))
      assert.strictEqual(hub.size(), 4)

      const big = "x".repeat(1024 * 1024)
      const reached: Array<number> = []
      for (let seq = 1; seq <= 40 && hub.size() === 4; seq++) {
        // Handing 1 MiB to four sockets: a broadcast that waited for the stalled peer would not
        // return, since it never reads (timing it against 250 ms was a wall-clock assertion).
        reached.push(await Effect.runPromise(hub.broadcast({ seq, text: `${seq}:${big}` })))
        for (const peer of healthy) assert.isTrue((await peer.next()).startsWith(`${seq}:`))
      }
      // A few sends fill the stalled peer's kernel buffers; the next over the bound drops it.
      assert.strictEqual(hub.size(), 3, `still 4 clients after ${reached.length} messages`)
      console.log(`stalled peer dropped at message ${reached.length} (1 MiB each)`)
      assert.strictEqual(reached.at(-1), 3)
      assert.isTrue(reached.slice(0, -1).every((n) => n === 4))
      stalled.resume()
      await new Promise((resolve) => stalled.once("close", resolve).once("error", resolve))
      assert.isTrue(closedByServer || stalled.destroyed)

      // The healthy peers go on as before.
      assert.strictEqual(await Effect.runPromise(hub.broadcast({ seq: 1000, text: "after" })), 3)
      for (const peer of healthy) assert.strictEqual(await peer.next(), "after")
      for (const peer of healthy) peer.close()
    } finally {
      await server.close()
    }
  })

  it.effect("a late initial snapshot never overwrites a newer broadcast", () =>
    Effect.gen(function*() {
      const hub = makeClientHub()
      const sent: Array<string> = []
      const connection = { send: (text: string) => Effect.sync(() => void sent.push(text)), buffered: () => 0, drop: () => {}, goingAway: Effect.void }
      const gate = yield* Deferred.make<void>()
      // The initial read started first (seq 1) but finishes after the broadcast of seq 2.
      const serving = yield* Effect.forkChild(hub.serve(connection, Deferred.await(gate).pipe(Effect.as({ seq: 1, text: "initial" })), Effect.never))
      yield* Effect.yieldNow
      assert.strictEqual(yield* hub.broadcast({ seq: 2, text: "newer" }), 1)
      yield* Deferred.succeed(gate, undefined)
      yield* Effect.yieldNow
      yield* Effect.yieldNow
      assert.deepStrictEqual(sent, ["newer"])
      yield* hub.closeAll
      yield* Fiber.join(serving)
      assert.strictEqual(hub.size(), 0)
    }))
})
