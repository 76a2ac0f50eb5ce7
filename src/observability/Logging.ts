// The JSON log line (LOG_FORMAT=json): effect's structured line, plus `trace_id` and `span_id`
// when it is written inside a span, so a line leads to its trace and back (DESIGN section 11).
import { Formatter, Logger } from "effect"

export const jsonLogger = Logger.make((options) => {
  const line = Logger.formatStructured.log(options)
  const span = options.fiber.cache.span
  return Formatter.formatJson(span === undefined || !span.sampled ? line : { ...line, trace_id: span.traceId, span_id: span.spanId })
})
