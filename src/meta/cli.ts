// `node dist/main.js meta …`: the doctor's commands on effect/cli (subcommands, flags, help), their
// configuration checks and output. Exit codes: 0 clean/success, 1 findings/stale/failure, 2 usage or configuration.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Console, Effect, Exit, Layer, Logger, Option, Redacted, Ref, Result, Schema } from "effect"
import { Argument, CliConfig, CliError, CliOutput, Command as Cli, Flag, GlobalFlag } from "effect/cli"
import { FetchHttpClient } from "effect/http"
import { SqlClient, SqlError } from "effect/sql"
import { readDatabaseUrl } from "../config/AppConfig.ts"
import { fromEnv } from "../config/Keys.ts"
import { pgLayer } from "../db/Database.ts"
import { applyRepairs, auditReport, checklist, collectionExists, latestRun, planRepairs, RepairConflict, UndoFailed, undoRepairs } from "./Doctor.ts"
import { parseJson, isJsonObject } from "./Json.ts"
import { pageJson, planCollectionPage, writePage } from "./Page.ts"
import { prettyNodeFor } from "./PrettyField.ts"
import { NocoBaseError } from "./NocoBaseApi.ts"
import { refresh } from "./Refresh.ts"
import { formatChanges, formatChecklist, formatFindings, formatSkipped, summariseChanges } from "./Report.ts"
import { isSchemaName, MetaTablesMissing, pluginState, requireMetadataTables } from "./Snapshot.ts"

/** The synopsis printed with a usage problem (the full help is `meta [<subcommand>] --help`). */
export const USAGE = [
  "usage: meta audit [--collection C] [--json] [--schema S]",
  "       meta repair [--apply | --undo RUN_ID] [--schema S]",
  "       meta refresh --url U [--restart] [--schema S]   (NOCOBASE_ACCOUNT, NOCOBASE_PASSWORD)",
  "       meta pretty-node COLLECTION FIELD [--schema S]",
  "       meta page --collection C [--apply] [--schema S]"
] as const

export type Command =
  | { readonly _tag: "help" }
  | { readonly _tag: "audit"; readonly schema: string; readonly collection: string | undefined; readonly json: boolean }
  | { readonly _tag: "repair"; readonly schema: string; readonly mode: "dry-run" | "apply"; readonly undo: string | undefined }
  | { readonly _tag: "refresh"; readonly schema: string; readonly url: string | undefined; readonly restart: boolean }
  | { readonly _tag: "pretty-node"; readonly schema: string; readonly collection: string; readonly field: string }
  | { readonly _tag: "page"; readonly schema: string; readonly collection: string; readonly mode: "dry-run" | "apply" }

type Runnable = Exclude<Command, { readonly _tag: "help" }>

/** `--name V` or `--name=V`, never empty. */
const valueFlag = (name: string, metavar: string, description: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(description),
    Flag.withMetavar(metavar),
    Flag.filter((value) => value !== "", () => `--${name} needs a value`)
  )

/** `--name`, off unless given. */
const switchFlag = (name: string, description: string) => Flag.Boolean(name).pipe(Flag.withDescription(description), Flag.withDefault(false))

const schemaFlag = Flag.String("schema").pipe(
  Flag.withDescription("the PostgreSQL schema of NocoBase's metadata tables"),
  Flag.withMetavar("S"),
  Flag.withDefault("svc"),
  Flag.filter(isSchemaName, (schema) => `--schema ${JSON.stringify(schema)} is not a schema name`)
)

/** The command tree; each subcommand hands the `Command` it parsed to `handle`. */
const metaCommand = (handle: (command: Runnable) => Effect.Effect<void>) => {
  const audit = Cli.make("audit", {
    collection: valueFlag("collection", "C", "only the findings and checklist rows of this collection").pipe(Flag.optional),
    json: switchFlag("json", "one JSON document instead of tables"),
    schema: schemaFlag
  }, ({ collection, json, schema }) => handle({ _tag: "audit", schema, collection: Option.getOrUndefined(collection), json })).pipe(
    Cli.withDescription("List every finding and the checklist of the metadata (DATABASE_URL). Exit 1 when there is one.")
  )
  const repair = Cli.make("repair", {
    apply: switchFlag("apply", "write the repairs in one transaction (default: a dry run)"),
    undo: valueFlag("undo", "RUN_ID", "restore the before-images of repair run RUN_ID").pipe(
      Flag.filter((id) => /^[1-9][0-9]{0,17}$/.test(id), (id) => `--undo ${JSON.stringify(id)} is not a run id`),
      Flag.optional
    ),
    schema: schemaFlag
  }, ({ apply, schema, undo }) => handle({ _tag: "repair", schema, mode: apply ? "apply" : "dry-run", undo: Option.getOrUndefined(undo) })).pipe(
    Cli.validate(({ apply, undo }) =>
      apply && Option.isSome(undo) ? Effect.fail(new CliError.ValidationError({ message: "--apply and --undo exclude each other" })) : Effect.void
    ),
    Cli.withDescription("Show the repair plan (dry run), apply it, or undo an applied run (DATABASE_URL).")
  )
  const refreshCommand = Cli.make("refresh", {
    url: valueFlag("url", "U", "the NocoBase base URL (required), e.g. http://localhost:13000").pipe(Flag.optional),
    restart: switchFlag("restart", "clear NocoBase's cache and restart it when it serves stale metadata"),
    schema: schemaFlag
  }, ({ restart, schema, url }) => handle({ _tag: "refresh", schema, url: Option.getOrUndefined(url), restart })).pipe(
    Cli.withDescription(
      "Check that a running NocoBase serves the repaired metadata (NOCOBASE_ACCOUNT, NOCOBASE_PASSWORD; DATABASE_URL optional). Exit 1 when stale."
    )
  )
  const prettyNode = Cli.make("pretty-node", {
    collection: Argument.String("COLLECTION").pipe(Argument.withDescription("the collection of the field")),
    field: Argument.String("FIELD").pipe(Argument.withDescription("the field to display with SvcPrettyField")),
    schema: schemaFlag
  }, ({ collection, field, schema }) => handle({ _tag: "pretty-node", schema, collection, field })).pipe(
    Cli.withDescription("Print the SvcPrettyField page node of a field, from its svcMeta (DATABASE_URL).")
  )
  const page = Cli.make("page", {
    collection: valueFlag("collection", "C", "the collection to build a list page for"),
    apply: switchFlag("apply", "write the page into uiSchemas in one transaction (default: a dry run)"),
    schema: schemaFlag
  }, ({ apply, collection, schema }) => handle({ _tag: "page", schema, collection, mode: apply ? "apply" : "dry-run" })).pipe(
    Cli.withDescription(
      "Build a list page of a collection (TableV2 keyed by filterTargetKey, SvcPrettyField for fields with svcMeta) and print it (dry run) or write it into uiSchemas (DATABASE_URL); then `meta refresh`. Needs plugin-svc-preset-actions on the server."
    )
  )
  return Cli.make("meta").pipe(
    Cli.withDescription("The metadata doctor for NocoBase. Exit codes: 0 clean or done, 1 findings, stale or failed, 2 usage or configuration."),
    Cli.withSubcommands([audit, repair, refreshCommand, prettyNode, page])
  )
}

/** A usage problem as one line, in the words of the hand-written parser this replaced. */
const usageProblem = (error: CliError.CliError): string => {
  if (!(error instanceof CliError.ShowHelp)) return error.message
  const [first] = error.errors
  if (first === undefined) return "missing subcommand"
  if (first instanceof CliError.UnrecognizedOption) {
    return `unknown flag ${first.option}${first.command === undefined ? "" : ` for ${first.command.join(" ")}`}`
  }
  if (first instanceof CliError.UnknownSubcommand) return `unknown subcommand ${JSON.stringify(first.subcommand)}`
  // only pretty-node takes arguments
  if (first instanceof CliError.MissingArgument) return `${error.commandPath.join(" ")} needs COLLECTION and FIELD`
  if (first instanceof CliError.UnexpectedArgument) return `unexpected argument ${JSON.stringify(first.arguments[0])}`
  if (first instanceof CliError.InvalidValue) {
    const name = first.kind === "flag" ? `--${first.option}` : first.option
    if (first.value.endsWith(" occurrences")) return `${name} given twice`
    if (first.message.startsWith("Missing value")) return `${name} needs a value`
    return first.expected
  }
  return first.message
}

// The doctor's reading of DATABASE_URL: the services' reader (config/AppConfig.ts), required here
// (the doctor works on NocoBase's database, never on an embedded one), in the doctor's own words.
const databaseUrlProblem = (value: string | undefined): string | undefined => {
  const read = Effect.runSync(Effect.result(fromEnv({ DATABASE_URL: value }, readDatabaseUrl)))
  if (Result.isFailure(read)) return "DATABASE_URL is not a postgres:// URL"
  if (read.success === undefined) return "DATABASE_URL is not set (expected postgres://user:password@host:port/database)"
  try {
    if (new URL(Redacted.value(read.success)).hostname === "") return "DATABASE_URL has no host"
  } catch {
    return "DATABASE_URL is not a postgres:// URL"
  }
  return undefined
}

/** The configuration problems of a command, one line each (empty when it may run). */
export const configProblems = (command: Command, env: Readonly<Record<string, string | undefined>>): Array<string> => {
  if (command._tag === "help") return []
  if (command._tag !== "refresh") {
    const problem = databaseUrlProblem(env["DATABASE_URL"])
    return problem === undefined ? [] : [problem]
  }
  const problems: Array<string> = []
  if (command.url === undefined) problems.push("--url is required (the NocoBase base URL, e.g. http://localhost:13000)")
  else {
    try {
      const url = new URL(command.url)
      if (url.protocol !== "http:" && url.protocol !== "https:") problems.push("--url is not an http(s) URL")
    } catch {
      problems.push("--url is not an http(s) URL")
    }
  }
  if ((env["NOCOBASE_ACCOUNT"] ?? "") === "") problems.push("NOCOBASE_ACCOUNT is not set (the NocoBase account to sign in with)")
  if ((env["NOCOBASE_PASSWORD"] ?? "") === "") problems.push("NOCOBASE_PASSWORD is not set (the password of NOCOBASE_ACCOUNT)")
  const database = env["DATABASE_URL"]
  if (database !== undefined && database !== "") {
    const problem = databaseUrlProblem(database)
    if (problem !== undefined) problems.push(`${problem} (optional for refresh; unset it or fix it)`)
  }
  return problems
}

const lines = (items: ReadonlyArray<string>) => Effect.forEach(items, (line) => Console.log(line), { discard: true })

const FieldRowSql = Schema.Struct({ interface: Schema.NullOr(Schema.String), options_text: Schema.NullOr(Schema.String) })

const runDatabaseCommand = (command: Exclude<Runnable, { _tag: "refresh" }>) =>
  Effect.gen(function*() {
    switch (command._tag) {
      case "audit": {
        if (command.collection !== undefined && !(yield* collectionExists(command.schema, command.collection))) {
          yield* Console.error(`--collection: no collection named ${JSON.stringify(command.collection)} in schema ${command.schema}`)
          return 2
        }
        const { findings, skipped } = yield* auditReport(command.schema, command.collection)
        const only = command.collection
        const items = (yield* checklist(command.schema)).map((item) =>
          only === undefined ? item : { ...item, rows: item.rows.filter((row) => row === only || row.startsWith(`${only}.`)) }
        )
        if (command.json) {
          yield* Console.log(JSON.stringify({ schema: command.schema, collection: only ?? null, findings, skipped, checklist: items }, null, 2))
        } else {
          yield* lines([...formatFindings(findings, command.schema), ...formatSkipped(skipped), "", ...formatChecklist(items)])
        }
        return findings.length > 0 || items.some((item) => item.rows.length > 0) ? 1 : 0
      }
      case "repair": {
        if (command.undo !== undefined) {
          const undone = yield* undoRepairs(command.undo)
          yield* Console.log(`restored ${undone.restored} column value${undone.restored === 1 ? "" : "s"} of run ${undone.runId} in schema ${undone.schema}`)
          return 0
        }
        if (command.mode === "dry-run") {
          const changes = yield* planRepairs(command.schema)
          yield* lines(formatChanges(changes))
          yield* Console.log(
            changes.length === 0
              ? `dry run: nothing to repair in schema ${command.schema}`
              : `dry run: ${summariseChanges(changes)} would change in schema ${command.schema}; nothing was written (use --apply)`
          )
          return 0
        }
        const applied = yield* applyRepairs(command.schema)
        yield* lines(formatChanges(applied.changes))
        yield* Console.log(
          applied.changes.length === 0
            ? `nothing to repair in schema ${command.schema}`
            : `applied: ${summariseChanges(applied.changes)} changed in one transaction; before-images in meta_doctor.repair_row (undo: meta repair --undo ${applied.runId})`
        )
        yield* Console.log(`run ${applied.runId}`)
        return 0
      }
      case "pretty-node": {
        const sql = yield* SqlClient.SqlClient
        yield* requireMetadataTables(command.schema)
        const [row] = yield* sql`SELECT interface, options::text AS options_text FROM ${sql(`${command.schema}.fields`)}
          WHERE "collectionName" = ${command.collection} AND name = ${command.field}`.pipe(
          Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(FieldRowSql)))
        )
        if (row === undefined) {
          yield* Console.error(`no field ${command.field} in collection ${command.collection} (schema ${command.schema})`)
          return 1
        }
        const options = row.options_text === null ? {} : parseJson(row.options_text)
        const built = prettyNodeFor(command.collection, {
          name: command.field,
          interface: row.interface,
          options: isJsonObject(options) ? options : {}
        })
        if (built._tag === "error") {
          for (const problem of built.problems) yield* Console.error(`${command.collection}.${command.field}: ${problem}`)
          return 1
        }
        yield* Console.log(JSON.stringify(built.node, null, 2))
        return 0
      }
      case "page": {
        const plan = yield* planCollectionPage(command.schema, command.collection).pipe(
          Effect.catchTag("PageProblem", (problem) => Effect.as(lines(problem.problems.map((line) => `meta page: ${line}`)), undefined))
        )
        if (plan === undefined) return 1
        const columns = plan.columns.map((column) => `${column.field} (${column.component})`).join(", ")
        const plugin = yield* pluginState(command.schema)
        const warning = plugin === "absent" && plan.columns.some((column) => column.component === "SvcPrettyField")
          ? ["warning: plugin-svc-preset-actions is not enabled on this NocoBase: SvcPrettyField cells will render #130 until it is"]
          : []
        if (command.mode === "dry-run") {
          yield* lines([
            `dry run: page ${plan.page["x-uid"]} for ${plan.collection} (rowKey ${plan.key}): ${columns}`,
            JSON.stringify(pageJson(plan.page), null, 2),
            ...warning,
            "nothing was written (use --apply)"
          ])
          return 0
        }
        const written = yield* writePage(command.schema, plan)
        yield* lines([
          `applied: page ${plan.page["x-uid"]} for ${plan.collection} (rowKey ${plan.key}), ${written} uiSchemas rows: ${columns}`,
          `menu: add a desktop route of type "page" with schemaUid ${plan.page["x-uid"]} and a hidden "tabs" child with schemaUid ${plan.tab.uid}, tabSchemaName ${plan.tab.name}`,
          ...warning,
          "then: meta refresh --url U --restart (NocoBase caches page schemas)"
        ])
        return 0
      }
    }
  })

const scrub = (text: string, secrets: ReadonlyArray<string | undefined>) =>
  secrets.reduce<string>((out, secret) => secret === undefined || secret.length < 3 ? out : out.split(secret).join("***"), text)

/** The exit code and stderr line of a failed command. */
const failureLine = (error: unknown): { readonly code: 1 | 2; readonly line: string } => {
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof MetaTablesMissing) return { code: 2, line: message }
  if (error instanceof NocoBaseError && error.step === "auth:signIn" && error.status === 401) {
    return { code: 2, line: `NOCOBASE_ACCOUNT / NOCOBASE_PASSWORD rejected by the server: ${message}` }
  }
  if (SqlError.isSqlError(error)) return { code: 1, line: `database error: ${message}` }
  if (error instanceof RepairConflict || error instanceof UndoFailed || error instanceof NocoBaseError) return { code: 1, line: `error: ${message}` }
  return { code: 1, line: `unexpected error: ${message}` }
}

/** Runs a parsed command; answers the exit code. Every failure is reported on stderr here. */
export const runCommand = (command: Runnable, env: Readonly<Record<string, string | undefined>>): Effect.Effect<number> => {
  const secrets = [env["NOCOBASE_PASSWORD"], (() => {
    try {
      return decodeURIComponent(new URL(env["DATABASE_URL"] ?? "").password) || undefined
    } catch {
      return undefined
    }
  })()]
  const program: Effect.Effect<number, unknown> = Effect.gen(function*() {
    const problems = configProblems(command, env)
    if (problems.length > 0) {
      for (const problem of problems) yield* Console.error(problem)
      return 2
    }
    if (command._tag === "refresh") {
      const database = env["DATABASE_URL"]
      // the repair log tells which collections and whether page schemas changed; refresh works without it
      const run = database === undefined || database === ""
        ? undefined
        : yield* latestRun(command.schema).pipe(
          Effect.provide(Layer.orDie(pgLayer(Redacted.make(database), { maxConnections: 1 }))),
          Effect.catchCause((cause) =>
            Console.error(`note: repair log not readable (${scrub(String(Cause.squash(cause)), secrets)}); checking every synchronised collection`).pipe(
              Effect.as(undefined)
            )
          )
        )
      if (run !== undefined) {
        const rows = (table: string) => new Set(run.rows.filter((row) => row.table === table).map((row) => row.key)).size
        yield* Console.log(
          `latest repair: run ${run.runId} (${rows("collections")} collections, ${rows("fields")} fields, ${rows("uiSchemas")} page nodes; ${run.rows.length} column values)`
        )
      }
      const report = yield* refresh({
        baseUrl: command.url!,
        account: env["NOCOBASE_ACCOUNT"]!,
        password: Redacted.make(env["NOCOBASE_PASSWORD"]!),
        restart: command.restart,
        run
      }).pipe(Effect.provide(FetchHttpClient.layer))
      return report.fresh ? 0 : 1
    }
    return yield* runDatabaseCommand(command).pipe(
      Effect.provide(Layer.orDie(pgLayer(Redacted.make(env["DATABASE_URL"]!), { maxConnections: 2 })))
    )
  })
  return program.pipe(
    Effect.catchCause((cause) => {
      const { code, line } = failureLine(Cause.squash(cause))
      const rolledBack = code === 1 && command._tag === "repair" && command.undo === undefined && command.mode === "apply"
        ? " (the repair was rolled back; nothing was changed)"
        : ""
      return Console.error(`${scrub(line, secrets)}${rolledBack}`).pipe(Effect.as(code))
    })
  )
}

/** Help shows only when asked for (`--help`); a usage problem is our own line and the synopsis. */
const presenter = (show: boolean) =>
  CliOutput.layerPresenter({
    present: (event) => show && event._tag === "Help" && event.reason === "Requested" ? CliOutput.defaultPresenter.present(event) : Effect.void
  })

/**
 * effect/cli's reading of the words after `meta`: the command, `help` once the help was shown
 * (when `showHelp`), or a usage problem.
 */
const parse = (args: ReadonlyArray<string>, showHelp: boolean): Effect.Effect<Command | string> =>
  Effect.gen(function*() {
    const chosen = yield* Ref.make<Command>({ _tag: "help" })
    const words = args[0] === "help" ? ["--help", ...args.slice(1)] : args
    yield* Cli.runWith(metaCommand((command) => Ref.set(chosen, command)), { version: "", renderErrors: false })(words)
    return yield* Ref.get(chosen)
  }).pipe(
    Effect.catch((error) => Effect.succeed(usageProblem(error))),
    Effect.provide([presenter(showHelp), CliConfig.layer({ builtIns: [GlobalFlag.Help] }), NodeServices.layer])
  )

/** Parses the words after `meta` (without output); a string is a usage problem. */
export const parseArgs = (args: ReadonlyArray<string>): Command | string => Effect.runSync(parse(args, false))

/** Parses and runs; answers the exit code. */
export const run = (args: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): Effect.Effect<number> =>
  parse(args, true).pipe(
    Effect.flatMap((command) => {
      if (typeof command === "string") {
        return Console.error(`meta: ${command}`).pipe(Effect.andThen(Effect.forEach(USAGE, (line) => Console.error(line))), Effect.as(2))
      }
      return command._tag === "help" ? Effect.succeed(0) : runCommand(command, env)
    })
  )

/** Entry point: `args` are the words after `meta`; sets the process exit code. */
export const main = (args: ReadonlyArray<string>): void => {
  // Its answers are on stdout; anything logged goes to stderr.
  NodeRuntime.runMain(run(args).pipe(Effect.provideService(Logger.LogToStderr, true)), {
    disableErrorReporting: true,
    teardown: (exit, onExit) => {
      const code = Exit.isSuccess(exit) ? Number(exit.value) : 1
      process.exitCode = code
      onExit(code)
    }
  })
}
