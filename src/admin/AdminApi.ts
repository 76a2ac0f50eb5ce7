// The JSON routes of admin_service (DESIGN section 7) as a pure HttpApi definition: the sync
// endpoint for the recon worker, operator sign-in, the operator's top-info and worker health, and
// the review queue.
// The websocket and the dashboard page are plain routes beside it (TopInfoSocket, Dashboard).
import { Context, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { PgString } from "../domain/PgValues.ts"
import { ReviewStatuses } from "../db/AdminStore.ts"
import { ReviewItem, Sms } from "../domain/Records.ts"
import { HeartbeatJson } from "../health/Heartbeat.ts"
import { CallerAuth } from "../http/CallerAuth.ts"
import { ErrorEnvelopes, errorEnvelope, Ok } from "../http/Envelope.ts"
import { Id, opt, Page, Paging } from "../http/ReconApi.ts"
import type { Session } from "./SessionTokens.ts"

/** The operator a valid session token names, for the handlers behind OperatorAuth. */
export class CurrentOperator extends Context.Service<CurrentOperator, Session>()("recon/admin/CurrentOperator") {}

/** `Authorization: Bearer <session token>`; every answer it lets through carries a refreshed token. */
export class OperatorAuth extends HttpApiMiddleware.Service<OperatorAuth, { provides: CurrentOperator }>()("recon/admin/OperatorAuth", {
  security: { bearer: HttpApiSecurity.bearer },
  error: errorEnvelope(401)
}) {}

/** A public POST still takes only JSON of at most 64 KiB, checked before the body is read. */
export class JsonBody extends HttpApiMiddleware.Service<JsonBody>()("recon/admin/JsonBody", {
  error: [errorEnvelope(413), errorEnvelope(415)]
}) {}

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** The six counters; recon's four are null while recon_service is unavailable, and `recon` says why. */
export const TopInfoData = Schema.Struct({
  pending_deposit_cnt: Count,
  manual_review_cnt: Count,
  sms_need_check_cnt: Schema.NullOr(Count),
  parse_fail_cnt: Schema.NullOr(Count),
  unmatched_sms_cnt: Schema.NullOr(Count),
  duplicate_sms_cnt: Schema.NullOr(Count),
  recon: Schema.Struct({ available: Schema.Boolean, error: Schema.NullOr(Schema.String) })
})
export type TopInfoData = typeof TopInfoData.Type

/** The worker's `/health/ready` JSON as it answered, or why there is none. */
export const WorkerHealthData = Schema.Struct({
  status: Schema.Literals(["ok", "not_configured", "unreachable"]),
  detail: Schema.NullOr(Schema.String),
  health: Schema.NullOr(HeartbeatJson)
})
export type WorkerHealthData = typeof WorkerHealthData.Type

export class SyncGroup extends HttpApiGroup.make("sync").add(
  HttpApiEndpoint.post("sync", "/internal/meta/ws/sync", {
    // The body carries no meaning: any JSON object (the worker sends `{}`) triggers the push.
    payload: Schema.Struct({}).check(Schema.makeFilter((u) =>
      (typeof u === "object" && u !== null && !Array.isArray(u)) || "expected a JSON object")),
    success: Ok(Schema.Struct({ clients: Count })),
    error: ErrorEnvelopes
  }).annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "ignore" })
).middleware(CallerAuth) {}

export class AuthGroup extends HttpApiGroup.make("auth").add(
  HttpApiEndpoint.post("login", "/api/auth/login", {
    payload: Schema.Struct({
      account: PgString.check(Schema.isMinLength(1), Schema.isMaxLength(128)),
      password: PgString.check(Schema.isMinLength(1), Schema.isMaxLength(1024))
    }),
    success: Ok(Schema.Struct({ token: Schema.String })),
    // 429 with Retry-After: too many attempts for the account or the address (SignInLimits).
    error: [...ErrorEnvelopes, errorEnvelope(429)]
  })
).middleware(JsonBody) {}

export class OperatorGroup extends HttpApiGroup.make("operator").add(
  HttpApiEndpoint.get("topInfo", "/api/top-info", { success: Ok(TopInfoData), error: ErrorEnvelopes }),
  HttpApiEndpoint.get("workerHealth", "/api/worker-health", { success: Ok(WorkerHealthData), error: ErrorEnvelopes })
).middleware(OperatorAuth) {}

export const ReviewStatus = Schema.Literals(ReviewStatuses)

export const ReviewPageData = Schema.Struct({
  ...Page(ReviewItem).fields,
  counts: Schema.Struct({ need_check: Count, manual_review: Count, unmatched: Count })
})
export type ReviewPageData = typeof ReviewPageData.Type

/** The review queue: POSTs with JSON bodies, the operator's session checked first. */
export class ReviewGroup extends HttpApiGroup.make("review").add(
  HttpApiEndpoint.post("list", "/api/review/list", {
    payload: Schema.Struct({ ...Paging, status: opt(ReviewStatus) }),
    success: Ok(ReviewPageData),
    error: ErrorEnvelopes
  }),
  HttpApiEndpoint.post("resolve", "/api/review/resolve", {
    // pass/reject of a need_check SMS; approve (with deposit_id)/reject of a manual_review or unmatched one.
    payload: Schema.Struct({ sms_id: Id, action: Schema.Literals(["pass", "reject", "approve"]), deposit_id: opt(Id) }),
    success: Ok(Sms),
    error: ErrorEnvelopes
  })
).middleware(JsonBody).middleware(OperatorAuth) {}

export class AdminApi extends HttpApi.make("admin")
  .add(SyncGroup)
  .add(AuthGroup)
  .add(OperatorGroup)
  .add(ReviewGroup)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
{}
