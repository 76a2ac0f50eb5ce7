// The HTTP edge's mapping of the stores' errors: each error answers the status, message word and
// detail the routes gave before the stores had errors of their own; a SqlError is the 503 while
// the database is away and a defect otherwise (nothing of it reaches the caller).
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { SqlError } from "effect/sql"
import { WrongCredentials } from "../../src/admin/Operators.ts"
import { toApiFailure as adminFailure } from "../../src/admin/Failures.ts"
import { ReconRefused, ReconUnavailable } from "../../src/clients/ReconClient.ts"
import { DepositNotFound } from "../../src/db/DepositStore.ts"
import { DeviceNotFound, DuplicatePhone, PhoneNotFound, RegistrationExists, RegistrationNotFound } from "../../src/recon/DeviceStore.ts"
import { AmountMismatch, DepositNotPending, DepositTaken, SmsMoneyMoved, SmsNotFound, SmsStatusConflict } from "../../src/recon/SmsStore.ts"
import { TemplateExists, TemplateNotFound } from "../../src/recon/TemplateStore.ts"
import { AgreeConflict, PlayerNotFound } from "../../src/wallet/WalletStore.ts"
import { type ApiFailure, fail } from "../../src/api/Envelope.ts"
import { answered, toApiFailure } from "../../src/recon/Failures.ts"
import { toApiFailure as walletFailure } from "../../src/wallet/Failures.ts"

const envelope = (failure: ApiFailure) => ({ status: failure.status, msg: failure.msg, detail: failure.data?.detail })

describe("toApiFailure", () => {
  it("answers each store error with its status and the detail the routes give", () => {
    const cases: ReadonlyArray<readonly [Parameters<typeof toApiFailure>[0], 404 | 409, string]> = [
      [new SmsNotFound({ smsId: 7 }), 404, "sms 7 not found"],
      [new SmsStatusConflict({ smsId: 7, status: "parsed", expected: ["need_check"] }), 409, "sms 7 is parsed, not need_check"],
      [
        new SmsStatusConflict({ smsId: 7, status: "approved", expected: ["manual_review", "unmatched"] }),
        409,
        "sms 7 is approved, not manual_review or unmatched"
      ],
      [new SmsMoneyMoved({ smsId: 7, status: "approving" }), 409, "sms 7 is approving: money has moved or is moving, it cannot be reset"],
      [new DepositNotFound({ depositId: 3 }), 404, "deposit 3 not found"],
      [new DepositNotPending({ depositId: 3, status: "approved" }), 409, "deposit 3 is approved, not pending"],
      [new AmountMismatch({ depositId: 3, depositAmount: "50000", smsAmount: "12.50" }), 409, "deposit 3 is for 50000, the SMS for 12.50"],
      [new AmountMismatch({ depositId: 3, depositAmount: "50000", smsAmount: null }), 409, "deposit 3 is for 50000, the SMS for no amount"],
      [new DepositTaken({ depositId: 3, smsId: 9 }), 409, "deposit 3 is already being approved with sms 9"],
      [new RegistrationNotFound({ id: 4 }), 404, "registration 4 not found"],
      [new RegistrationExists({ deviceId: "phone-1" }), 409, "device phone-1 already has a registration"],
      [new TemplateNotFound({ id: 4 }), 404, "template 4 not found"],
      [new TemplateExists({ bank: "KB" }), 409, "bank KB already has a template with this rule"],
      [new PhoneNotFound({ id: 4 }), 404, "phone 4 not found"],
      [new DuplicatePhone({ phone: "01012345678" }), 409, "phone 01012345678 is already whitelisted"],
      [new DeviceNotFound({ id: 4 }), 404, "device 4 not found"],
    ]
    for (const [error, status, detail] of cases) {
      assert.deepStrictEqual(envelope(toApiFailure(error)), { status, msg: status === 404 ? "not_found" : "conflict", detail }, error._tag)
    }
    const walletCases: ReadonlyArray<readonly [Parameters<typeof walletFailure>[0], 404 | 409, string]> = [
      [new DepositNotFound({ depositId: 3 }), 404, "deposit 3 not found"],
      [new PlayerNotFound({ playerId: 5 }), 404, "player 5 not found"],
      [new AgreeConflict({ detail: "SMS 9 already funds another deposit" }), 409, "SMS 9 already funds another deposit"]
    ]
    for (const [error, status, detail] of walletCases) {
      assert.deepStrictEqual(envelope(walletFailure(error)), { status, msg: status === 404 ? "not_found" : "conflict", detail }, error._tag)
    }
  })

  it("answers admin's own errors: a wrong password 401, recon's refusal as it gave it, recon away 502", () => {
    assert.deepStrictEqual(envelope(adminFailure(new WrongCredentials())), { status: 401, msg: "unauthorized", detail: "wrong account or password" })
    assert.deepStrictEqual(envelope(adminFailure(new ReconRefused({ status: 409, detail: "sms 7 is parsed, not need_check" }))), {
      status: 409,
      msg: "conflict",
      detail: "sms 7 is parsed, not need_check"
    })
    assert.deepStrictEqual(envelope(adminFailure(new ReconUnavailable({ detail: "recon_service is unreachable" }))), {
      status: 502,
      msg: "bad_gateway",
      detail: "recon_service is unreachable"
    })
  })
})

describe("answered", () => {
  const away = new SqlError.SqlError({ reason: new SqlError.ConnectionError({ cause: new Error("connect ECONNREFUSED 127.0.0.1:5432") }) })
  const broken = new SqlError.SqlError({ reason: new SqlError.SqlSyntaxError({ cause: new Error("syntax error at or near \"SELEC\"") }) })

  it.effect("answers the database away with the 503 envelope", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(answered(Effect.fail(away)))
      assert.deepStrictEqual(envelope(failure), { status: 503, msg: "unavailable", detail: "the database is unreachable" })
    }))

  it.effect("makes any other SqlError a defect, so the middleware answers a bare 500", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(answered(Effect.fail(broken)))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause) && !Cause.hasFails(exit.cause))
    }))

  it.effect("passes the handler's own envelopes through and maps the store's", () =>
    Effect.gen(function*() {
      const own = fail(422, "the rule does not match the sample")
      assert.strictEqual(yield* Effect.flip(answered(Effect.fail(own))), own)
      const mapped = yield* Effect.flip(answered(Effect.fail(new DeviceNotFound({ id: 4 }))))
      assert.deepStrictEqual(envelope(mapped), { status: 404, msg: "not_found", detail: "device 4 not found" })
    }))
})
