// Bytes on a socket, for requests no HTTP client would send (an unknown method, a control
// character in the path, headers over Node's limit, a hand-made websocket handshake): what the
// server answered, read until it closed the connection or a deadline passed.
import { connect } from "node:net"

export interface RawAnswer {
  /** Everything the server sent, as Latin-1 text (what an HTTP head is). */
  readonly raw: string
  readonly status: number
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>
  /** The body as UTF-8 text. */
  readonly body: string
}

const parse = (bytes: Buffer): RawAnswer => {
  const raw = bytes.toString("latin1")
  const end = raw.indexOf("\r\n\r\n")
  const head = end === -1 ? raw : raw.slice(0, end)
  const [statusLine = "", ...lines] = head.split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return {
    raw,
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0),
    headers,
    body: end === -1 ? "" : bytes.subarray(Buffer.byteLength(raw.slice(0, end + 4), "latin1")).toString("utf8")
  }
}

/**
 * Sends `request` (a string as Latin-1 bytes, or bytes) to the server at `base` and answers what
 * came back once the server closed the connection, or after `quietMs` without a new byte once
 * an answer has begun (a server that keeps the connection open, such as a 101). `trickle`: one
 * byte more every 100 ms until then, a client that is slow but never idle.
 */
export const exchange = (base: string, request: string | Uint8Array, options: { readonly quietMs?: number; readonly trickle?: boolean } = {}): Promise<RawAnswer> => {
  const { hostname, port } = new URL(base)
  return new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let quiet: NodeJS.Timeout | undefined
    let trickling: NodeJS.Timeout | undefined
    const socket = connect(Number(port), hostname, () => {
      socket.write(typeof request === "string" ? Buffer.from(request, "latin1") : request)
      if (options.trickle === true) trickling = setInterval(() => socket.writable && socket.write("a"), 100)
    })
    const done = () => {
      clearTimeout(quiet)
      clearInterval(trickling)
      socket.destroy()
      resolve(parse(Buffer.concat(chunks)))
    }
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk)
      clearTimeout(quiet)
      quiet = setTimeout(done, options.quietMs ?? 500)
    })
    // A reset after the answer (the server closed while the client still wrote) keeps what arrived.
    socket.on("error", (error) => (chunks.length > 0 ? done() : reject(error)))
    socket.on("close", done)
  })
}
