// `deposit create` and `deposit list` as processes on a real database: the id on stdout, the
// player found or created, the owner defaulting to the player, the list filtered by status; bad
// input is exit 2 with the problem named, a name shared by two players exit 1; nothing written.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { parseArgs } from "../../src/wallet/DepositCli.ts"
import { DepositStore } from "../../src/db/DepositStore.ts"
import { createTestDatabase, runSql } from "../support/database.ts"
import { runCommandToEnd } from "../support/process.ts"
import { createDeposit, query } from "../support/wallet.ts"

const deposit = (databaseUrl: string, args: ReadonlyArray<string>) => runCommandToEnd(["deposit", ...args], { DATABASE_URL: databaseUrl })

let db: string
beforeAll(async () => {
  // Not migrated: the command migrates like every command that touches the database.
  db = await createTestDatabase("deposit_cmd")
})

const rows = () =>
  query(db, (sql) => sql<{ id: bigint; name: string; owner: string; amount: string; status: string }>`
    SELECT d.id, p.name, d.from_bank_owner AS owner, d.amount::text AS amount, d.status
    FROM recon.deposit AS d JOIN recon.player AS p ON p.id = d.player_id ORDER BY d.id`.pipe(Effect.map((r) => r.map((x) => ({ ...x, id: Number(x.id) })))))

describe("deposit create / list", () => {
  it("creates the player when absent and prints only the deposit id; the owner defaults to the player", async () => {
    const first = await deposit(db, ["create", "--player", "홍길동", "--amount", "50,000"])
    assert.strictEqual(first.status, 0, first.stderr)
    assert.match(first.stdout, /^\d+\n$/)
    assert.match(first.stderr, /^player "홍길동" created \(id \d+\)\n$/)
    const second = await deposit(db, ["create", "--player=홍길동", "--amount=12.50", "--owner", "홍 길동"])
    assert.strictEqual(second.status, 0, second.stderr)
    assert.strictEqual(second.stderr, "")
    assert.deepStrictEqual(await rows(), [
      { id: Number(first.stdout), name: "홍길동", owner: "홍길동", amount: "50000.00", status: "pending" },
      { id: Number(second.stdout), name: "홍길동", owner: "홍 길동", amount: "12.50", status: "pending" }
    ])
    const [{ n }] = await query(db, (sql) => sql<{ n: bigint }>`SELECT count(*) AS n FROM recon.player`.pipe(Effect.map((r) => r as ReadonlyArray<{ n: bigint }>)))
    assert.strictEqual(Number(n), 1)
  }, 180_000)

  it("lists newest first, filtered by status, as tab-separated lines under a header", async () => {
    const made = await createDeposit(db, "Lister", "7")
    await query(db, (sql) => sql`UPDATE recon.deposit SET status = 'expired' WHERE id = ${made.depositId}`)
    const [all, expired] = await Promise.all([deposit(db, ["list"]), deposit(db, ["list", "--status", "expired"])])
    assert.strictEqual(all.status, 0, all.stderr)
    const [header, ...lines] = all.stdout.trim().split("\n")
    assert.strictEqual(header, "id\tplayer_id\tplayer\tfrom_bank_owner\tamount\tstatus\ttask_status\tsms_id\tcreated_at\tapproved_at")
    assert.strictEqual(lines.length, 3)
    assert.match(lines[0]!, new RegExp(`^${made.depositId}\\t${made.playerId}\\tLister\\tLister\\t7\\texpired\\t-\\t-\\t\\d{4}-`))
    assert.deepStrictEqual(expired.stdout.trim().split("\n").slice(1).map((l) => Number(l.split("\t")[0])), [made.depositId])
    const pending = await runSql(db, Effect.gen(function*() {
      return yield* (yield* DepositStore).list({ status: "pending", limit: 1 })
    }).pipe(Effect.provide(DepositStore.layer)))
    assert.strictEqual(pending.length, 1)
    assert.strictEqual(pending[0]!.status, "pending")
  }, 180_000)

  it("bad input: exit 2 naming the problem, nothing written", async () => {
    const before = await rows()
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [[], "deposit: a subcommand is required"],
      [["delete"], 'deposit: unknown subcommand "delete"'],
      [["create", "--amount", "10"], "deposit: --player is required"],
      [["create", "--player", "Kim"], "deposit: --amount is required"],
      [["create", "--player", "Kim", "--amount", "0"], 'deposit: --amount: expected a positive amount such as 50000 or 12.50, got "0"'],
      [["create", "--player", "Kim", "--amount", "-5"], 'deposit: --amount: expected a positive amount such as 50000 or 12.50, got "-5"'],
      [["create", "--player", "Kim", "--amount", "1.234"], 'deposit: --amount: expected a positive amount such as 50000 or 12.50, got "1.234"'],
      [["create", "--player", "  ", "--amount", "10"], "deposit: --player: must not be empty"],
      [["create", "--player", "Kim", "--amount", "10", "--owner", "a\u0007b"], "deposit: --owner: must not contain control characters"],
      [["create", "--player", "Kim", "--amount", "10", "--player", "Lee"], "deposit: --player given twice"],
      [["create", "--player", "Kim", "--amount"], "deposit: --amount needs a value"],
      [["create", "--player", "Kim", "--amount", "10", "--bank", "x"], "deposit: unknown option --bank"],
      [["list", "--status", "done"], 'deposit: --status: expected one of pending, approved, rejected, expired, got "done"'],
      [["list", "--limit", "0"], 'deposit: --limit: expected a number from 1 to 10000, got "0"'],
      [["list", "extra"], 'deposit: unexpected argument "extra"']
    ]
    for (const [args, line] of cases) assert.strictEqual(`deposit: ${parseArgs(args)}`, line, args.join(" "))
    // As processes, a few of them: exit 2, the line, then the usage; nothing on stdout.
    const runs = await Promise.all([0, 4, 12].map((i) => deposit(db, cases[i]![0])))
    for (const [k, i] of [0, 4, 12].entries()) {
      assert.strictEqual(runs[k]!.status, 2, runs[k]!.stderr)
      const [line, usage] = runs[k]!.stderr.split("\n")
      assert.strictEqual(line, cases[i]![1])
      assert.match(usage!, /^usage: deposit create/)
      assert.strictEqual(runs[k]!.stdout, "")
    }
    assert.deepStrictEqual(await rows(), before)
  }, 180_000)

  it("a name two players share is exit 1: which player is meant is not clear", async () => {
    await query(db, (sql) => sql`INSERT INTO recon.player (name) VALUES ('Twin'), ('Twin')`)
    const before = await rows()
    const run = await deposit(db, ["create", "--player", "Twin", "--amount", "10"])
    assert.strictEqual(run.status, 1)
    assert.strictEqual(run.stderr.trim(), 'deposit create: 2 players are named "Twin"; create this deposit in the platform, which knows which one')
    assert.deepStrictEqual(await rows(), before)
  }, 180_000)

  it("parses amounts as the bank SMS writes them", () => {
    for (const [text, amount] of [["50000", "50000"], ["50,000원", "50000"], ["₩1,234.5", "1234.5"], ["０.５", "0.5"]]) {
      assert.deepStrictEqual(parseArgs(["create", "--player", "P", "--amount", text!]), { _tag: "Create", player: "P", amount: amount!, owner: undefined })
    }
  })
})
