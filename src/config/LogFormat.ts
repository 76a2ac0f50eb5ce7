// How log lines look on stderr (LOG_FORMAT): `pretty`, one line per entry (time, level, log spans,
// message, annotations as key=value) with a cause's trace on the lines after; `json`, one object per
// line (with `trace_id`/`span_id` inside a span). Fiber ids are for debugging: only at LOG_LEVEL debug or trace.
import { Array, Cause, Formatter, Logger, References } from "effect"

const pad = (n: number, width = 2) => String(n).padStart(width, "0")
const clock = (date: Date) =>
  `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`

/** A value as it reads after `key=`: plain text bare, anything with spaces or quotes as a JSON string. */
const valueText = (value: unknown): string => {
  const text = typeof value === "string" ? value : Formatter.format(value)
  return /^[^\s"=]*$/.test(text) ? text : JSON.stringify(text)
}

const prettyLine = (withFiber: boolean) =>
  Logger.make<unknown, string>(({ cause, date, fiber, logLevel, message }) => {
    let line = `[${clock(date)}] ${logLevel.toUpperCase()}${withFiber ? ` (#${fiber.id})` : ""}`
    const now = date.getTime()
    for (const [label, start] of fiber.getRef(References.CurrentLogSpans)) line += ` ${label}=${now - start}ms`
    line += `: ${Array.ensure(message).map((part) => (typeof part === "string" ? part : Formatter.format(part))).join(" ")}`
    for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) line += ` ${key}=${valueText(value)}`
    return cause.reasons.length > 0 ? `${line}\n${Cause.pretty(cause)}` : line
  })

// Inside a sampled span the line carries `trace_id` and `span_id`, so a line leads to its trace and
// back (DESIGN section 11).
const jsonLine = (withFiber: boolean) =>
  Logger.make((options) => {
    const { fiberId, ...entry } = Logger.formatStructured.log(options)
    const span = options.fiber.cache.span
    const traced = span === undefined || !span.sampled ? entry : { ...entry, trace_id: span.traceId, span_id: span.spanId }
    return Formatter.formatJson(withFiber ? { ...traced, fiberId } : traced)
  })

/** The logger of LOG_FORMAT, writing to stderr; `debugging` (LOG_LEVEL debug or trace) adds fiber ids. */
export const stderrLogger = (format: "json" | "pretty", debugging: boolean) =>
  Logger.withConsoleError(format === "json" ? jsonLine(debugging) : prettyLine(debugging))
