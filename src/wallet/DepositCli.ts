// `deposit create --player NAME --amount N [--owner NAME]` and `deposit list [--status S] [--limit N]`:
// pending deposits for people and scripts, written as the platform writes them (docs/API.md). `create`
// prints only the new deposit's id on stdout. Exit 0 done, 1 refused or the database failed, 2 bad
// usage or configuration (one line).
import { Cause, Effect, Exit, Option } from "effect"
import { CliError, Command, Flag } from "effect/cli"
import { outcome } from "../commands/Cli.ts"
import { find } from "../commands/Commands.ts"
import { SqlError } from "effect/sql"
import { readDatabaseCommandSettings, runOnDatabase, userMessage } from "../commands/Lifecycle.ts"
import { AmbiguousPlayer, DEPOSIT_STATUSES, type DepositRow, type DepositStatus, DepositStore } from "../db/DepositStore.ts"
import { parseAmount } from "../domain/Money.ts"

const USAGE = "usage: deposit create --player NAME --amount N [--owner NAME] | deposit list [--status pending|approved|rejected|expired] [--limit N]"

const exit = (code: 0 | 1 | 2, text: string): never => {
  ;(code === 0 ? process.stdout : process.stderr).write(text === "" ? "" : `${text}\n`)
  process.exit(code)
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
  | { readonly _tag: "Help" }

const checkCreate = (options: { readonly player: string; readonly amount: string; readonly owner: Option.Option<string> }): Parsed | string => {
  const owner = Option.getOrUndefined(options.owner)
  const problem = nameProblem("player", options.player) ?? (owner === undefined ? undefined : nameProblem("owner", owner))
  if (problem !== undefined) return problem
  const amount = parseAmount(options.amount)
  if (amount === undefined || /^0+(\.0+)?$/.test(amount)) {
    return `--amount: expected a positive amount such as 50000 or 12.50, got "${options.amount}"`
  }
  return { _tag: "Create", player: options.player.trim(), amount, owner: owner?.trim() }
}

const checkList = (options: { readonly status: Option.Option<string>; readonly limit: Option.Option<string> }): Parsed | string => {
  const status = Option.getOrUndefined(options.status)
  if (status !== undefined && !(DEPOSIT_STATUSES as ReadonlyArray<string>).includes(status)) {
    return `--status: expected one of ${DEPOSIT_STATUSES.join(", ")}, got "${status}"`
  }
  const raw = Option.getOrElse(options.limit, () => "50")
  const limit = Number(raw)
  if (!/^\d+$/.test(raw) || limit < 1 || limit > 10_000) return `--limit: expected a number from 1 to 10000, got "${raw}"`
  return { _tag: "List", status: status as DepositStatus | undefined, limit }
}

/** `deposit create|list` on effect/cli; each handler hands its request (or problem) to `done`. */
const depositCommand = (done: (parsed: Parsed | string) => void) =>
  Command.make("deposit").pipe(Command.withSubcommands([
    Command.make("create", {
      player: Flag.String("player").pipe(Flag.withMetavar("NAME"), Flag.withDescription("the player, as the bank SMS names them")),
      amount: Flag.String("amount").pipe(Flag.withMetavar("N"), Flag.withDescription("a positive amount such as 50000 or 12.50")),
      owner: Flag.String("owner").pipe(Flag.withMetavar("NAME"), Flag.withDescription("the bank account's owner (default: the player)"), Flag.optional)
    }, (options) => Effect.sync(() => done(checkCreate(options)))),
    Command.make("list", {
      status: Flag.String("status").pipe(Flag.withDescription(DEPOSIT_STATUSES.join("|")), Flag.optional),
      limit: Flag.String("limit").pipe(Flag.withMetavar("N"), Flag.withDescription("1-10000 (default 50)"), Flag.optional)
    }, (options) => Effect.sync(() => done(checkList(options))))
  ]))

/** effect/cli's parse error in this command's words. */
const problemOf = (error: CliError.CliError | undefined): string => {
  // No subcommand: effect/cli asks for help with no error.
  if (error === undefined) return "a subcommand is required"
  switch (error._tag) {
    case "UnknownSubcommand":
      return `unknown subcommand "${error.subcommand}"`
    case "MissingOption":
      return `--${error.option} is required`
    case "UnrecognizedOption":
      return `unknown option ${error.option}`
    case "UnexpectedArgument":
      return `unexpected argument "${error.arguments[0] ?? ""}"`
    case "InvalidValue":
      return error.value === "" ? `--${error.option} needs a value` : `--${error.option} given twice`
    default:
      return error.message
  }
}

/** The command line as a request, or the one line saying what is wrong with it. */
export const parseArgs = (args: ReadonlyArray<string>): Parsed | string => {
  let parsed: Parsed | string = "a subcommand is required"
  const result = Effect.runSync(outcome(depositCommand((p) => (parsed = p)), args))
  if (result._tag === "Help") return { _tag: "Help" }
  if (result._tag === "Invalid") return problemOf(result.errors[0])
  return parsed
}

const COLUMNS = ["id", "player_id", "player", "from_bank_owner", "amount", "status", "task_status", "sms_id", "created_at", "approved_at"] as const

/** One tab-separated line per deposit under a header line. */
export const formatList = (rows: ReadonlyArray<DepositRow>): string =>
  [COLUMNS.join("\t"), ...rows.map((row) => COLUMNS.map((c) => String(row[c] ?? "-")).join("\t"))].join("\n")

export const main = async (args: ReadonlyArray<string>) => {
  const parsed = parseArgs(args)
  if (typeof parsed === "string") return exit(2, `deposit: ${parsed}\n${USAGE}`)
  if (parsed._tag === "Help") return exit(0, find("deposit")!.help!)
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
  const line = userMessage(error)
  if (line !== undefined) return exit(1, `deposit: ${line}`)
  if (SqlError.isSqlError(error)) return exit(1, `deposit: the database failed (${error.reason._tag})`)
  return exit(1, "deposit: failed unexpectedly")
}
