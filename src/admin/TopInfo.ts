// The six top-info counters as admin answers them: its own two from the database, merged with
// recon_service's four. recon being down or slow costs only its four (null, with the reason);
// the database failing fails the whole read with its SqlError.
import { Context, Effect, Layer } from "effect"
import type { SqlError } from "effect/sql"
import { ReconClient } from "../clients/ReconClient.ts"
import { AdminStore } from "./AdminStore.ts"
import type { TopInfoData } from "../api/AdminApi.ts"

export class TopInfo extends Context.Service<TopInfo, {
  readonly read: Effect.Effect<TopInfoData, SqlError.SqlError>
}>()("recon/admin/TopInfo") {
  static readonly layer = Layer.effect(
    TopInfo,
    Effect.gen(function*() {
      const store = yield* AdminStore
      const recon = yield* ReconClient
      return {
        // Both at once: the answer takes as long as the slower of the two, bounded by recon's timeout.
        read: Effect.all([store.counters(), Effect.result(recon.topInfo)], { concurrency: 2 }).pipe(
          Effect.map(([own, remote]) =>
            remote._tag === "Success"
              ? { ...own, ...remote.success, recon: { available: true, error: null } }
              : {
                ...own,
                sms_need_check_cnt: null,
                parse_fail_cnt: null,
                unmatched_sms_cnt: null,
                duplicate_sms_cnt: null,
                recon: { available: false, error: remote.failure.detail }
              }
          )
        )
      }
    })
  )
}
