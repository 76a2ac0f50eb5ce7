// The container health check (`recon probe`): reads the worker's heartbeat file and exits 0 when it
// is ready and fresh, 1 otherwise, printing one line. Imports only node:fs so it starts fast.
import { readFileSync } from "node:fs"

const defaultPath = "/tmp/recon-worker.heartbeat"
const maxAgeMillis = 15_000

interface Verdict {
  readonly ok: boolean
  readonly line: string
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const notReady = (reason: string): Verdict => ({ ok: false, line: `not ready: ${reason}` })

/** Judges the heartbeat file's text; pure, so the rules read in one place. */
export const judge = (path: string, text: string | undefined, nowMillis: number): Verdict => {
  if (text === undefined) return notReady(`heartbeat file ${path} missing`)
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return notReady(`heartbeat file ${path} is not JSON`)
  }
  const writtenAt = isRecord(json) && typeof json.written_at === "string" ? Date.parse(json.written_at) : NaN
  if (!isRecord(json) || typeof json.ready !== "boolean" || !isRecord(json.loops) || Number.isNaN(writtenAt)) {
    return notReady(`heartbeat file ${path} is not a heartbeat`)
  }
  const ageMillis = nowMillis - writtenAt
  const age = `${Math.max(0, Math.floor(ageMillis / 1000))}s`
  if (ageMillis > maxAgeMillis) return notReady(`heartbeat ${age} old`)
  const loops = Object.entries(json.loops)
  if (!json.ready) {
    const unwell = loops
      .filter(([, loop]) => !isRecord(loop) || loop.fresh !== true)
      .map(([name, loop]) => `${name} ${isRecord(loop) && typeof loop.state === "string" ? loop.state : "unknown"}`)
    if (unwell.length > 0) return notReady(`${unwell.length === 1 ? "loop" : "loops"} ${unwell.join(", ")}`)
    // The worker's other fibers (LISTEN, heartbeat writer, ingest batchers), when one of them is down.
    const down = Object.entries(isRecord(json.components) ? json.components : {})
      .filter(([, component]) => !isRecord(component) || component.state !== "running")
      .map(([name, component]) => `${name} ${isRecord(component) && typeof component.state === "string" ? component.state : "unknown"}`)
    if (down.length > 0) return notReady(`${down.length === 1 ? "component" : "components"} ${down.join(", ")}`)
    return notReady(`worker reports not ready, written ${age} ago`)
  }
  return { ok: true, line: `ready: ${loops.length} loops fresh, written ${age} ago` }
}

const errorCode = (error: unknown): string => isRecord(error) && typeof error.code === "string" ? error.code : String(error)

const check = (path: string, nowMillis: number): Verdict => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (error) {
    // Only a missing file counts as missing; anything else (permissions, a directory) is reported as is.
    const code = errorCode(error)
    return code === "ENOENT" ? judge(path, undefined, nowMillis) : notReady(`heartbeat file ${path} unreadable (${code})`)
  }
  return judge(path, text, nowMillis)
}

export const main = (_args: ReadonlyArray<string>): void => {
  const path = process.env.SVC_WORKER_HEARTBEAT_FILE || defaultPath
  const verdict = check(path, Date.now())
  console.log(verdict.line)
  process.exit(verdict.ok ? 0 : 1)
}

if (import.meta.main) main(process.argv.slice(2))
