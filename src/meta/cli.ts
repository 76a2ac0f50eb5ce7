// `node dist/main.js meta …`: argument parsing, configuration checks and output of the metadata
// doctor. Exit codes: 0 clean/success, 1 findings/stale/failure, 2 usage or configuration.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect, Exit, Layer, Logger, Redacted, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import { SqlClient } from "effect/sql"
import { pgLayer } from "../db/Database.ts"
import { applyRepairs, auditReport, checklist, collectionExists, latestRun, planRepairs, undoRepairs } from "./Doctor.ts"
import { parseJson, isJsonObject } from "./Json.ts"
import { prettyNodeFor } from "./PrettyField.ts"
import { refresh } from "./Refresh.ts"
import { formatChanges, formatChecklist, formatFindings, formatSkipped, summariseChanges } from "./Report.ts"
import { isSchemaName, requireMetadataTables } from "./Snapshot.ts"

export const USAGE = [
  "usage: meta audit [--collection C] [--json] [--schema S]",
  "       meta repair [--apply | --undo RUN_ID] [--schema S]",
  "       meta refresh --url U [--restart] [--schema S]   (NOCOBASE_ACCOUNT, NOCOBASE_PASSWORD)",
  "       meta pretty-node COLLECTION FIELD [--schema S]"
] as const

export type Command =
  | { readonly _tag: "help" }
  | { readonly _tag: "audit"; readonly schema: string; readonly collection: string | undefined; readonly json: boolean }
  | { readonly _tag: "repair"; readonly schema: string; readonly mode: "dry-run" | "apply"; readonly undo: string | undefined }
  | { readonly _tag: "refresh"; readonly schema: string; readonly url: string | undefined; readonly restart: boolean }
  | { readonly _tag: "pretty-node"; readonly schema: string; readonly collection: string; readonly field: string }

const FLAGS: Readonly<Record<string, ReadonlyArray<string>>> = {
  audit: ["--collection", "--json", "--schema"],
  repair: ["--apply", "--undo", "--schema"],
  refresh: ["--url", "--restart", "--schema"],
  "pretty-node": ["--schema"]
}
const VALUED = new Set(["--collection", "--schema", "--undo", "--url"])

/** Parses the words after `meta`; a string is a usage problem. */
export const parseArgs = (args: ReadonlyArray<string>): Command | string => {
  const [sub, ...rest] = args
  if (sub === undefined) return "missing subcommand"
  if (sub === "--help" || sub === "-h" || sub === "help") return { _tag: "help" }
  const allowed = FLAGS[sub]
  if (allowed === undefined) return `unknown subcommand ${JSON.stringify(sub)}`
  const values = new Map<string, string>()
  const switches = new Set<string>()
  const positional: Array<string> = []
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!
    if (!word.startsWith("--")) {
      positional.push(word)
      continue
    }
    const eq = word.indexOf("=")
    const flag = eq === -1 ? word : word.slice(0, eq)
    if (flag === "--help") return { _tag: "help" }
    if (!allowed.includes(flag)) return `unknown flag ${flag} for meta ${sub}`
    if (values.has(flag) || switches.has(flag)) return `${flag} given twice`
    if (VALUED.has(flag)) {
      const value = eq === -1 ? rest[++i] : word.slice(eq + 1)
      if (value === undefined || value === "" || (eq === -1 && value.startsWith("--"))) return `${flag} needs a value`
      values.set(flag, value)
    } else {
      if (eq !== -1) return `${flag} takes no value`
      switches.add(flag)
    }
  }
  const schema = values.get("--schema") ?? "svc"
  if (!isSchemaName(schema)) return `--schema ${JSON.stringify(schema)} is not a schema name`
  switch (sub) {
    case "pretty-node":
      if (positional.length !== 2) return "meta pretty-node needs COLLECTION and FIELD"
      return { _tag: "pretty-node", schema, collection: positional[0]!, field: positional[1]! }
    case "audit":
      if (positional.length > 0) return `unexpected argument ${JSON.stringify(positional[0])}`
      return { _tag: "audit", schema, collection: values.get("--collection"), json: switches.has("--json") }
    case "repair": {
      if (positional.length > 0) return `unexpected argument ${JSON.stringify(positional[0])}`
      const undo = values.get("--undo")
      if (undo !== undefined && switches.has("--apply")) return "--apply and --undo exclude each other"
      if (undo !== undefined && !/^[1-9][0-9]{0,17}$/.test(undo)) return `--undo ${JSON.stringify(undo)} is not a run id`
      return { _tag: "repair", schema, mode: switches.has("--apply") ? "apply" : "dry-run", undo }
    }
    default:
      if (positional.length > 0) return `unexpected argument ${JSON.stringify(positional[0])}`
      return { _tag: "refresh", schema, url: values.get("--url"), restart: switches.has("--restart") }
  }
}

const databaseUrlProblem = (value: string | undefined): string | undefined => {
  if (value === undefined || value === "") return "DATABASE_URL is not set (expected postgres://user:password@host:port/database)"
  try {
    const url = new URL(value)
    if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") return "DATABASE_URL is not a postgres:// URL"
    if (url.hostname === "") return "DATABASE_URL has no host"
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

const runDatabaseCommand = (command: Exclude<Command, { _tag: "help" | "refresh" }>) =>
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
    }
  })

const scrub = (text: string, secrets: ReadonlyArray<string | undefined>) =>
  secrets.reduce<string>((out, secret) => secret === undefined || secret.length < 3 ? out : out.split(secret).join("***"), text)

/** Runs a parsed command; answers the exit code. Every failure is reported on stderr here. */
export const runCommand = (command: Command, env: Readonly<Record<string, string | undefined>>): Effect.Effect<number> => {
  const secrets = [env["NOCOBASE_PASSWORD"], (() => {
    try {
      return decodeURIComponent(new URL(env["DATABASE_URL"] ?? "").password) || undefined
    } catch {
      return undefined
    }
  })()]
  const program: Effect.Effect<number, unknown> = Effect.gen(function*() {
    if (command._tag === "help") {
      yield* lines(USAGE)
      return 0
    }
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
      const error = Cause.squash(cause)
      const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : ""
      const message = error instanceof Error ? error.message : String(error)
      if (tag === "MetaTablesMissing") return Console.error(scrub(message, secrets)).pipe(Effect.as(2))
      if (tag === "NocoBaseError" && "step" in (error as object) && (error as { step: string }).step === "auth:signIn" &&
        (error as { status: number | null }).status === 401) {
        return Console.error(`NOCOBASE_ACCOUNT / NOCOBASE_PASSWORD rejected by the server: ${scrub(message, secrets)}`).pipe(Effect.as(2))
      }
      const prefix = tag === "SqlError" ? "database error" : tag === "RepairConflict" || tag === "UndoFailed" || tag === "NocoBaseError" ? "error" : "unexpected error"
      const rolledBack = command._tag === "repair" && command.undo === undefined && command.mode === "apply" ? " (the repair was rolled back; nothing was changed)" : ""
      return Console.error(`${prefix}: ${scrub(message, secrets)}${rolledBack}`).pipe(Effect.as(1))
    })
  )
}

/** Parses and runs; answers the exit code. */
export const run = (args: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): Effect.Effect<number> => {
  const command = parseArgs(args)
  if (typeof command === "string") {
    return Console.error(`meta: ${command}`).pipe(Effect.andThen(Effect.forEach(USAGE, (line) => Console.error(line))), Effect.as(2))
  }
  return runCommand(command, env)
}

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
