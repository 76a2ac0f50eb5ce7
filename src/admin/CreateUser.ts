// `admin --create-user NAME`: adds a back-office operator. The password comes from a prompt with
// echo off when stdin is a terminal, else from ADMIN_PASSWORD. Exit 0 created, 1 refused (the
// account exists, the database failed), 2 bad usage or configuration. Never prints the password.
import { Cause, Config, Effect, Exit, Option, Redacted } from "effect"
import { Command, Flag } from "effect/cli"
import { SqlError } from "effect/sql"
import { runCli } from "../commands/Cli.ts"
import { find } from "../commands/Commands.ts"
import { readDatabaseUrl, readLogSettings } from "../config/AppConfig.ts"
import { all, problem, read } from "../config/Keys.ts"
import { readConfigOrExit, runOnDatabase, userMessage } from "../commands/Lifecycle.ts"
import { AccountExists, AdminStore } from "./AdminStore.ts"
import { isDatabaseAway } from "../db/Database.ts"
import { hashPassword, passwordProblem } from "../domain/Passwords.ts"
import { promptHidden } from "./PasswordPrompt.ts"

const USAGE = "usage: admin --create-user NAME   (password prompted, or ADMIN_PASSWORD when stdin is not a terminal)"
/** Letters, digits and . _ @ -: an account shows up in logs and on the console as is. */
const ACCOUNT = /^[A-Za-z0-9._@-]{1,64}$/

const exit = (code: 0 | 1 | 2, line: string): never => {
  ;(code === 0 ? process.stdout : process.stderr).write(`${line}\n`)
  process.exit(code)
}

/** ADMIN_PASSWORD, when no prompt is possible: Redacted from the environment on, used only to hash it. */
const adminPassword = read(Config.Redacted("ADMIN_PASSWORD").pipe(Config.option)).pipe(Effect.flatMap(Option.match({
  onNone: () => problem("ADMIN_PASSWORD: required when stdin is not a terminal (no prompt is possible)"),
  onSome: (password) => {
    const found = passwordProblem(Redacted.value(password))
    return found === undefined ? Effect.succeed(password) : problem(`ADMIN_PASSWORD: ${found}`)
  }
})))

// The hand-written prompt stays: effect/cli's Prompt.Hidden re-renders its line at every key and
// leaves the terminal echoing between and after its prompts, so typed-ahead input would show.
const promptPassword = async (): Promise<Redacted.Redacted<string>> => {
  const first = await promptHidden("Password: ")
  const found = passwordProblem(first)
  if (found !== undefined) return exit(2, `admin --create-user: ${found}`)
  if (await promptHidden("Repeat password: ") !== first) return exit(2, "admin --create-user: the passwords do not match")
  return Redacted.make(first)
}

const createUser = async (account: string) => {
  if (!ACCOUNT.test(account)) return exit(2, `admin --create-user: "${account}" is not an account name (1-64 of A-Z a-z 0-9 . _ @ -)`)
  // Without a terminal the password is configuration: its problems are reported with the others.
  const { password: configured, ...settings } = readConfigOrExit(process.env, all({
    databaseUrl: readDatabaseUrl,
    log: readLogSettings,
    password: process.stdin.isTTY ? Effect.undefined : adminPassword
  }))
  const password = configured ?? await promptPassword()

  const result = await runOnDatabase(settings, Effect.gen(function*() {
    const store = yield* AdminStore
    return yield* store.createOperator(account, yield* hashPassword(Redacted.value(password)))
  }).pipe(Effect.provide(AdminStore.layer)))
  if (Exit.isSuccess(result)) return exit(0, `operator "${account}" created (id ${result.value})`)
  const failure = Option.getOrUndefined(Cause.findErrorOption(result.cause))
  if (failure instanceof AccountExists) return exit(1, `admin --create-user: account "${account}" already exists`)
  const line = userMessage(failure)
  if (line !== undefined) return exit(1, `admin --create-user: failed: ${line}`)
  if (SqlError.isSqlError(failure) && isDatabaseAway(failure)) return exit(1, "admin --create-user: the database is unreachable")
  const squashed = Cause.squash(result.cause)
  return exit(1, `admin --create-user: failed: ${squashed instanceof Error ? squashed.message : "unknown error"}`)
}

const command = Command.make("admin", {
  account: Flag.String("create-user").pipe(
    Flag.withMetavar("NAME"),
    Flag.withDescription("the operator's account: 1-64 of A-Z a-z 0-9 . _ @ -")
  )
}, ({ account }) => Effect.promise(() => createUser(account)))

/** `args`: the command line after `admin` (`--create-user NAME`). */
export const main = (args: ReadonlyArray<string>) => runCli(command, args, { help: find("admin")!.help!, invalid: () => USAGE })
