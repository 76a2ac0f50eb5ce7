// SIGTERM during a webhook burst, against `node src/main.ts worker` as a real process: the
// heartbeat says ready:false at once, keep-alive connections stop being served (in-flight
// answers carry `Connection: close`, later requests are refused), and the process exits 0. Every
// SMS answered 200 is stored. (How long the stop takes is no assertion here: the process's own
// 10 s grace bounds it, and a late exit fails the test's time limit.)
import { assert, describe, it } from "@effect/vitest"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { connect } from "node:net"
import { join } from "node:path"
import { freePort } from "../../src/db/EmbeddedPostgres.ts"
import { createMigratedDatabase } from "../support/database.ts"
import { spawnCommand, waitForUrl } from "../support/process.ts"
import { smsForwarderFormBody } from "../../src/domain/SmsForwarder.ts"
import { eventuallyAsync } from "../support/time.ts"
import { register, smsRows } from "../support/worker.ts"

const readHeartbeat = (path: string): { ready: boolean; written_at: string } | undefined => {
  try {
    return JSON.parse(readFileSync(path, "utf8"))
  } catch {
    return undefined
  }
}

describe("worker shutdown under load", () => {
  it("on SIGTERM mid-burst: heartbeat ready:false first, nothing accepted after it, exit 0", async () => {
    const db = await createMigratedDatabase("wterm")
    await register(db, { deviceId: "term-1", format: "smsforwarder" })
    const heartbeat = join(mkdtempSync(join(tmpdir(), "recon-term-")), "worker.heartbeat")
    const port = await freePort()
    const worker = spawnCommand(["worker"], {
      DATABASE_URL: db,
      SVC_PUSH_PORT: String(port),
      SVC_WORKER_HEARTBEAT_FILE: heartbeat,
      SVC_BIND_HOST: "127.0.0.1",
      SVC_INTERNAL_SERVICE_TOKEN_RECON: "test-recon-token-0123456789",
      LOG_FORMAT: "json",
      LOG_LEVEL: "warn"
    })
    const base = `http://127.0.0.1:${port}`
    assert.isTrue(await waitForUrl(`${base}/health/live`, 60_000), worker.output())
    // Ready before the burst, so the first ready:false seen after the signal is the stop's.
    await eventuallyAsync("the heartbeat saying ready", async () => readHeartbeat(heartbeat)?.ready === true, { timeoutMs: 60_000, detail: worker.output })
    let exitedAt: number | undefined
    void worker.exited.then(() => (exitedAt = Date.now()))

    let signalAt: number | undefined
    let readyFalseAt: number | undefined
    const answers: Array<{ readonly startedAt: number; readonly status: number; readonly text: string; readonly close: boolean }> = []
    let i = 0
    const onAnswer = () => {
      if (signalAt !== undefined || answers.filter((a) => a.status === 200).length < 150) return
      signalAt = Date.now()
      worker.child.kill("SIGTERM")
      // Watch the heartbeat file from the moment of the signal (readyFalseAt stays undefined if the
      // process exits first, which the assertions below refuse).
      void eventuallyAsync("the heartbeat saying ready:false, or the exit", async () => {
        if (exitedAt === undefined && readHeartbeat(heartbeat)?.ready === false) readyFalseAt ??= Date.now()
        return readyFalseAt !== undefined || exitedAt !== undefined
      }, { timeoutMs: 60_000, everyMs: 2 }).catch(() => {})
    }
    // A keep-alive connection that is never idle: two requests always outstanding (pipelined),
    // as a busy forwarder fleet behind a proxy would keep it. Reconnects until the process is gone.
    const connection = () =>
      new Promise<void>((done) => {
        const socket = connect(port, "127.0.0.1")
        const outstanding: Array<{ startedAt: number; text: string }> = []
        let buffer = Buffer.alloc(0)
        const send = () => {
          const n = i++
          const text = `[Web발신]\n신한 11/22 09:15\n입금 ${10_000 + n}원\n김철수\n잔액 ${5_000_000 + n}`
          const body = smsForwarderFormBody({ from: "15778000", content: text, orgContent: text, timestamp: Date.now() })
          outstanding.push({ startedAt: Date.now(), text })
          socket.write(`POST /push/term-1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
        }
        socket.on("connect", () => {
          send()
          send()
        })
        socket.on("data", (chunk) => {
          buffer = Buffer.concat([buffer, chunk])
          while (true) {
            const headerEnd = buffer.indexOf("\r\n\r\n")
            if (headerEnd < 0) return
            const head = buffer.subarray(0, headerEnd).toString("latin1")
            const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0)
            if (buffer.length < headerEnd + 4 + length) return
            buffer = buffer.subarray(headerEnd + 4 + length)
            const request = outstanding.shift()!
            answers.push({ ...request, status: Number(head.slice(9, 12)), close: /connection: *close/i.test(head) })
            onAnswer()
            if (!socket.destroyed && !/connection: *close/i.test(head)) send()
          }
        })
        socket.on("error", () => {})
        socket.on("close", () => done())
      })
    const client = async () => {
      while (exitedAt === undefined) {
        await connection()
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    }
    await Promise.all(Array.from({ length: 16 }, client))
    assert.strictEqual(await worker.exited, 0, worker.output())
    assert.isDefined(signalAt)
    if (process.env.SHOW_FIGURES) console.log(JSON.stringify({ afterSignal: answers.filter((a) => a.status === 200 && a.startedAt > signalAt!).length, afterReadyFalse: answers.filter((a) => a.status === 200 && a.startedAt > readyFalseAt!).length, statuses: [...new Set(answers.map((a) => a.status))], closeHeaders: answers.filter((a) => a.close).length, total: answers.length }))

    // The heartbeat said ready:false while the process was still stopping, not at its very end.
    assert.isTrue(existsSync(heartbeat))
    assert.isFalse(readHeartbeat(heartbeat)!.ready)
    assert.isDefined(readyFalseAt, "ready:false seen before the exit")
    assert.isBelow(readyFalseAt!, exitedAt!)
    // Nothing new accepted: ready:false is written at the signal in the same step that closes the
    // doors, so a request begun after the file said so is not answered 200 (503 or no answer).
    const lateAccepted = answers.filter((a) => a.status === 200 && a.startedAt > readyFalseAt!)
    assert.strictEqual(lateAccepted.length, 0, `accepted after ready:false: ${lateAccepted.length}`)
    assert.isTrue(answers.filter((a) => a.startedAt > readyFalseAt!).every((a) => a.status === 503), "refused after ready:false")
    // Every SMS acknowledged is stored.
    const stored = new Set((await smsRows(db, ["term-1"])).map((row) => row.body))
    for (const answer of answers) if (answer.status === 200) assert.isTrue(stored.has(answer.text))
  }, 150_000)
})
