// phone_whitelist_loop: moves on the need_check SMS that were held only because their sender was
// not yet whitelisted (or their device not yet trusted), once both hold.
import { Effect } from "effect"
import { WhitelistStore } from "./WhitelistStore.ts"
import { Kicks, simple } from "./Loop.ts"

const BATCH = 500

export const PhoneWhitelistLoop = simple({
  name: "phone_whitelist_loop",
  ttl: "30 seconds",
  every: "10 seconds",
  kickedBy: ["shooter_phone", "shooter_device"],
  pass: Effect.gen(function*() {
    const store = yield* WhitelistStore
    const kicks = yield* Kicks
    let moved = 0
    while (true) {
      const batch = yield* store.moveOn(BATCH)
      moved += batch
      if (batch < BATCH) break
    }
    if (moved > 0) {
      yield* Effect.logInfo(`${moved} need_check SMS moved on: sender whitelisted and device trusted`)
      yield* kicks.kick("parse_loop")
    }
  })
})
