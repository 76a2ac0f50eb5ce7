// The worker's health as JSON (DESIGN section 8): what its heartbeat file and `GET /health/ready`
// carry (health/Heartbeat.ts writes it) and admin_service reads back (api/AdminApi.ts,
// admin/WorkerHealth.ts). Schemas only, so that the API definitions need nothing of the writer.
import { Schema } from "effect"

/** A loop's or component's state in the health registry (health/HealthRegistry.ts). */
export const LoopState = Schema.Literals(["starting", "running", "stale", "exited", "restarting"])
export type LoopState = typeof LoopState.Type

export const HeartbeatLoop = Schema.Struct({
  state: LoopState,
  last_success_at: Schema.NullOr(Schema.String),
  ttl_s: Schema.Number,
  fresh: Schema.Boolean,
  restarts: Schema.Number
})

/** A component (the LISTEN fiber, the heartbeat writer, the ingest batchers): up or not, no TTL. */
export const HeartbeatComponent = Schema.Struct({
  state: LoopState,
  restarts: Schema.Number,
  /** A component with a work rule (stale when work waits `stale_after_s` without progress; idle is never stale). */
  waiting: Schema.optionalKey(Schema.Boolean),
  stale_after_s: Schema.optionalKey(Schema.Number),
  last_progress_at: Schema.optionalKey(Schema.NullOr(Schema.String))
})

export const HeartbeatJson = Schema.Struct({
  ready: Schema.Boolean,
  pid: Schema.Number,
  written_at: Schema.String,
  loops: Schema.Record(Schema.String, HeartbeatLoop),
  /** Beside the contract's fields: which of the worker's other fibers is down when it is not ready. */
  components: Schema.optionalKey(Schema.Record(Schema.String, HeartbeatComponent))
})
export type HeartbeatJson = typeof HeartbeatJson.Type
