// Raw wire helpers for the websocket tests: an upgrade request whose HTTP answer the test can
// read (a browser's WebSocket hides the 401), and a client that completes the handshake and
// then never reads again, the way a stalled or vanished peer behaves.
import { randomBytes } from "node:crypto"
import { request } from "node:http"
import { connect, type Socket } from "node:net"

export interface UpgradeAnswer {
  readonly status: number
  readonly body: any
}

/** Sends a websocket upgrade to `url`; answers 101, or the HTTP status and envelope it got instead. */
export const upgrade = (url: string, headers: Record<string, string> = {}): Promise<UpgradeAnswer> =>
  new Promise((resolve, reject) => {
    const req = request(url, {
      agent: false,
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-key": randomBytes(16).toString("base64"),
        "sec-websocket-version": "13",
        ...headers
      }
    })
    req.on("upgrade", (_response, socket) => {
      socket.destroy()
      resolve({ status: 101, body: null })
    })
    req.on("response", (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text === "" ? null : JSON.parse(text) }))
    })
    req.on("error", reject)
    req.end()
  })

/** A websocket client that stops reading right after the handshake. */
export const stalledClient = (url: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write([
        `GET ${target.pathname}${target.search} HTTP/1.1`,
        `Host: ${target.host}`,
        "Connection: Upgrade",
        "Upgrade: websocket",
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}`,
        "Sec-WebSocket-Version: 13",
        "",
        ""
      ].join("\r\n"))
    })
    socket.once("data", (chunk: Buffer) => {
      if (!chunk.toString("latin1").startsWith("HTTP/1.1 101")) return reject(new Error(chunk.toString("latin1")))
      // From here on nothing is read: the kernel's buffers fill, then the server's.
      socket.pause()
      resolve(socket)
    })
    socket.on("error", () => {})
  })
