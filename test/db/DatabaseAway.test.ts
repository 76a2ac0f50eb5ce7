// "The database is away" is one classification of SqlError (db/Database.ts): the driver's
// connection errors and the SQLSTATEs of a server going or full, never a wrong query.
import { assert, describe, it } from "@effect/vitest"
import { SqlError } from "effect/sql"
import { isDatabaseAway } from "../../src/db/Database.ts"

const serverError = (code: string, Reason: typeof SqlError.UnknownError | typeof SqlError.SqlSyntaxError = SqlError.UnknownError) =>
  new SqlError.SqlError({ reason: new Reason({ cause: Object.assign(new Error(`server said ${code}`), { code }), message: "query failed" }) })

describe("isDatabaseAway", () => {
  it("a refused, reset or closed connection is away", () => {
    assert.isTrue(isDatabaseAway(new SqlError.SqlError({ reason: new SqlError.ConnectionError({ cause: new Error("connect ECONNREFUSED") }) })))
  })

  it("a server going, starting, crashed or full is away (57P01 pg_terminate_backend, 57P02, 57P03, class 08, 53300)", () => {
    for (const code of ["57P01", "57P02", "57P03", "08006", "08001", "53300", "53100"]) assert.isTrue(isDatabaseAway(serverError(code)), code)
  })

  it("a wrong query or schema is not, whatever its message says", () => {
    assert.isFalse(isDatabaseAway(serverError("42P01", SqlError.SqlSyntaxError)))
    assert.isFalse(isDatabaseAway(serverError("23505")))
    const misleading = new SqlError.SqlError({ reason: new SqlError.UnknownError({ cause: new Error("the database system is starting up (in a column value)"), message: "x" }) })
    assert.isFalse(isDatabaseAway(misleading), "no message regex")
  })
})
