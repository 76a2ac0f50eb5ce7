// What the worker says about each SMS status change it makes (DESIGN section 11): counted in
// recon_sms_status_changes, one debug line with the SMS's id, written inside that SMS's trace
// (a span `sms.<status>`) when traces are exported.
import { Effect, LogLevel } from "effect"
import type { SqlClient } from "effect/sql"
import type { SmsStatus } from "../domain/Records.ts"
import { countStatusChanges } from "./Metrics.ts"
import { isTracing, smsTraces } from "./Tracing.ts"

export interface SmsChange {
  readonly id: number
  readonly status: SmsStatus
}

const report = (sql: SqlClient.SqlClient, changes: ReadonlyArray<SmsChange>) =>
  Effect.gen(function*() {
    yield* countStatusChanges(changes.map((change) => change.status))
    const traced = yield* isTracing
    if (!traced && !(yield* LogLevel.isEnabled("Debug"))) return
    const within = yield* smsTraces(sql, changes.map((change) => change.id))
    yield* Effect.forEach(changes, ({ id, status }) => {
      const line = Effect.logDebug(`SMS ${id}: ${status}`).pipe(Effect.annotateLogs({ sms_id: id, sms_status: status }))
      return within(id)(traced ? Effect.withSpan(line, `sms.${status}`, { attributes: { "sms.id": id, "sms.status": status } }) : line)
    }, { discard: true })
  })

/**
 * Reports status changes once they are committed: inside a transaction, after its commit (never
 * for one rolled back); outside any, at once.
 */
export const reportSmsChanges = (sql: SqlClient.SqlClient, changes: ReadonlyArray<SmsChange>): Effect.Effect<void> =>
  changes.length === 0 ? Effect.void : sql.afterCommit(report(sql, changes))
