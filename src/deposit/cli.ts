// `deposit create --player NAME --amount N [--owner NAME]` and `deposit list [--status S] [--limit N]`:
// pending deposits for people and scripts, written as the platform writes them (README). `create`
// prints only the new deposit's id on stdout. Exit 0 done, 1 refused or the database failed, 2 bad
// usage or configuration (one line).
import { Cause, Effect, Exit } from "effect"
import { SqlError } from "effect/sql"
import { readDatabaseCommandSettings, runOnDatabase } from "../config/Runner.ts"
import { AmbiguousPlayer, DEPOSIT_STATUSES, type DepositRow, type DepositStatus, DepositStore } from "../db/DepositStore.ts"
import { parseAmount } from "../domain/Money.ts"

const USAGE = "usage: deposit create --player NAME --amount N [--owner NAME] | deposit list [--status pending|approved|rejected|expired] [--limit N]"

const exit = (code: 0 | 1 | 2, text: string): never => {
  ;(code === 0 ? process.stdout : process.stderr).write(text === "" ? "" : `${text}\n`)
  process.exit(code)
}

/** `--key value` / `--key=value` pairs of the allowed keys, each at most once; a problem line otherwise. */
export const parseOptions = (args: ReadonlyArray<string>, allowed: ReadonlyArray<string>): Record<string, string> | string => {
  const options: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const match = /^--([a-z]+)(?:=(.*))?$/s.exec(arg)
    if (match === null) return `unexpected argument "${arg}"`
    const key = match[1]!
    if (!allowed.includes(key)) return `unknown option --${key}`
    if (key in options) return `--${key} given twice`
    const value = match[2] ?? args[++i]
    if (value === undefined) return `--${key} needs a value`
    options[key] = value
  }
  return options
}

/** A person's name as a bank SMS shows it: 1-200 characters, no control characters, trimmed. */
const nameProblem = (key: string, value: string): string | undefined =>
  value.trim() === ""
    ? `--${key}: must not be empty`
    : value.trim().length > 200
    ? `--${key}: at most 200 characters`
    : /\p{Cc}/u.test(value)
    ? `--${key}: must not contain control characters`
    : undefined

type Parsed =
  | { readonly _tag: "Create"; readonly player: string; readonly amount: string; readonly owner: string | undefined }
  | { readonly _tag: "List"; readonly status: DepositStatus | undefined; readonly limit: number }

/** The command line as a request, or the one line saying what is wrong with it. */
export const parseArgs = (args: ReadonlyArray<string>): Parsed | string => {
  const [sub, ...rest] = args
  if (sub === "create") {
    const options = parseOptions(rest, ["player", "amount", "owner"])
    if (typeof options === "string") return options
    if (options.player === undefined) return "--player is required"
    if (options.amount === undefined) return "--amount is required"
    const problem = nameProblem("player", options.player) ?? (options.owner === undefined ? undefined : nameProblem("owner", options.owner))
    if (problem !== undefined) return problem
    const amount = parseAmount(options.amount)
    if (amount === undefined || /^0+(\.0+)?$/.test(amount)) {
      return `--amount: expected a positive amount such as 50000 or 12.50, got "${options.amount}"`
    }
    return { _tag: "Create", player: options.player.trim(), amount, owner: options.owner?.trim() }
  }
  if (sub === "list") {
    const options = parseOptions(rest, ["status", "limit"])
    if (typeof options === "string") return options
    const status = options.status
    if (status !== undefined && !(DEPOSIT_STATUSES as ReadonlyArray<string>).includes(status)) {
      return `--status: expected one of ${DEPOSIT_STATUSES.join(", ")}, got "${status}"`
    }
    const limit = options.limit === undefined ? 50 : Number(options.limit)
    if (!/^\d+$/.test(options.limit ?? "50") || limit < 1 || limit > 10_000) return `--limit: expected a number from 1 to 10000, got "${options.limit}"`
    return { _tag: "List", status: status as DepositStatus | undefined, limit }
  }
  return sub === undefined ? "a subcommand is required" : `unknown subcommand "${sub}"`
}

const COLUMNS = ["id", "player_id", "player", "from_bank_owner", "amount", "status", "task_status", "sms_id", "created_at", "approved_at"] as const

/** One tab-separated line per deposit under a header line. */
export const formatList = (rows: ReadonlyArray<DepositRow>): string =>
  [COLUMNS.join("\t"), ...rows.map((row) => COLUMNS.map((c) => String(row[c] ?? "-")).join("\t"))].join("\n")

export const main = async (args: ReadonlyArray<string>) => {
  const parsed = parseArgs(args)
  if (typeof parsed === "string") return exit(2, `deposit: ${parsed}\n${USAGE}`)
  // Logs below warnings would mix with the id a script reads from stdout.
  const settings = readDatabaseCommandSettings({ LOG_LEVEL: "warn", ...process.env })
  const result = await runOnDatabase(settings, Effect.gen(function*() {
    const store = yield* DepositStore
    if (parsed._tag === "List") return formatList(yield* store.list(parsed))
    const created = yield* store.create(parsed)
    if (created.playerCreated) process.stderr.write(`player "${parsed.player}" created (id ${created.playerId})\n`)
    return String(created.depositId)
  }).pipe(Effect.provide(DepositStore.layer)))
  if (Exit.isSuccess(result)) return exit(0, result.value)
  const failure = Cause.findErrorOption(result.cause)
  const error = failure._tag === "Some" ? failure.value : undefined
  if (error instanceof AmbiguousPlayer) {
    return exit(1, `deposit create: ${error.count} players are named "${error.name}"; create this deposit in the platform, which knows which one`)
  }
  if (SqlError.isSqlError(error)) return exit(1, `deposit: the database failed (${error.reason._tag})`)
  return exit(1, "deposit: failed unexpectedly")
}
