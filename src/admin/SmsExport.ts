// GET /api/sms/export.csv (DESIGN section 11): the SMS the console's search finds (the same
// filters, as query parameters) as CSV for Excel: UTF-8 with a BOM, CRLF, one row per SMS, streamed
// in batches so a month of SMS is never held in memory. A cell a spreadsheet would take for a
// formula (starting with =, +, -, @, a tab or a carriage return) is written as text with a
// leading apostrophe. The operator's session is checked first, as on every operator route.
import { DateTime, Effect, Layer, Schema, Stream } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { readFileSync } from "node:fs"
import { SmsSearchStore, waitingSeconds } from "./SmsSearchStore.ts"
import { seoulIso } from "../parse/TransactionTime.ts"
import { fail } from "../api/Envelope.ts"
import { answered } from "./Failures.ts"
import { opt } from "../api/ReconApi.ts"
import { SmsQueryFields } from "../api/AdminApi.ts"
import { authenticate, refreshSession } from "./AdminAuth.ts"
import { readConsole } from "./Console.ts"
import { queryOf } from "../http/Query.ts"
import { SessionTokens } from "./SessionTokens.ts"
import { ConsoleSmsRow } from "../api/ConsoleRecords.ts"

export const EXPORT_PATH = "/api/sms/export.csv"

const Query = Schema.Struct({ ...SmsQueryFields, lang: opt(Schema.Literals(["ko", "en"])) })
const decodeQuery = Schema.decodeUnknownEffect(Query, { onExcessProperty: "error", errors: "all" })

/** The status words of the console (web/console/words.json), for the `status_label` column. */
type Words = Record<"ko" | "en", Record<string, string>>

const COLUMNS = ["id", "received_at", "status", "status_label", "bank", "sender", "device_id", "payer_name", "amount", "deposit_id", "waiting_s", "reason", "body"] as const

/** One CSV cell: never a formula, quoted when it holds a quote, a separator, a line break or edge spaces. */
export const csvCell = (value: string | number | null): string => {
  if (value === null) return ""
  const text = typeof value === "number" ? String(value) : /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replaceAll("\"", "\"\"")}"` : text
}

const line = (cells: ReadonlyArray<string | number | null>) => `${cells.map(csvCell).join(",")}\r\n`

const row = (words: Words, sms: ConsoleSmsRow, lang: "ko" | "en", nowMs: number) =>
  line([
    sms.id,
    seoulIso(new Date(sms.received_at)),
    sms.status,
    words[lang][`s_${sms.status}`] ?? sms.status,
    sms.bank,
    sms.sender,
    sms.device_id,
    sms.payer_name,
    sms.amount,
    sms.deposit_id,
    waitingSeconds(sms, nowMs),
    sms.reason,
    sms.body
  ])

const bearer = (request: HttpServerRequest.HttpServerRequest) => (request.headers.authorization ?? "").replace(/^bearer\s+/i, "").trim()

export const SmsExportRoute = Layer.unwrap(Effect.gen(function*() {
  const search = yield* SmsSearchStore
  const tokens = yield* SessionTokens
  const encoder = new TextEncoder()
  const words = yield* readConsole("words.json", (url) => JSON.parse(readFileSync(url, "utf8")) as Words)
  return HttpRouter.add("GET", EXPORT_PATH, (request) =>
    Effect.gen(function*() {
      const session = yield* authenticate(bearer(request))
      yield* refreshSession(session)
      const { lang, ...filter } = yield* decodeQuery(Object.fromEntries(queryOf(request))).pipe(
        Effect.mapError((error) => fail(400, `the query does not match the filters: ${error.message}`))
      )
      const nowMs = DateTime.toEpochMillis(yield* DateTime.now)
      const at = seoulIso(new Date(nowMs)).slice(0, 16).replace(/[-:]/g, "").replace("T", "-")
      yield* Effect.logInfo("SMS exported").pipe(Effect.annotateLogs({ operator: session.account, filter: JSON.stringify(filter) }))
      const body = Stream.concat(
        Stream.make(`\uFEFF${line(COLUMNS)}`),
        search.export(filter).pipe(Stream.map((sms) => row(words, sms, lang ?? "ko", nowMs)))
      ).pipe(Stream.map((text) => encoder.encode(text)))
      return HttpServerResponse.stream(body, {
        contentType: "text/csv; charset=utf-8",
        headers: { "content-disposition": `attachment; filename="sms-${at}.csv"`, "cache-control": "no-store", "x-content-type-options": "nosniff" }
      })
    }).pipe(Effect.provideService(SessionTokens, tokens), answered))
}))
