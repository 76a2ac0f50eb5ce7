// The bank corpus (test/corpus/bank-sms.tsv: real messages of the banks, card companies and pay
// apps, and deposits on their real layouts) through the guard, the built-in templates and the
// built-in reader, as parse_loop reads them: every deposit read exactly, every trap (withdrawals,
// card texts, notices) refused by the guard. `CORPUS_REPORT=1 LOG_LEVEL=info` prints the result
// per bank and kind (a green run is silent otherwise).
import { assert, describe, it } from "@effect/vitest"
import { parseSms } from "../../src/parse/SmsParse.ts"
import { templateSet } from "../../src/parse/Templates.ts"
import { bankCorpus, type CorpusRow, devCorpus } from "../support/corpus.ts"
import { builtinTemplates } from "../support/parse.ts"

const templates = templateSet(builtinTemplates)
const receivedAt = new Date("2026-11-23T12:00:00+09:00")

/** What went wrong with one row, or nothing. */
const judgeRow = (row: CorpusRow): string | undefined => {
  const outcome = parseSms({ body: row.text, sender: "01012345678", receivedAt }, templates)
  if (row.kind === "dep") {
    if (outcome.status !== "parsed") return `${outcome.status}: ${outcome.detail.reason}`
    if (outcome.amount !== row.amount || !row.names.includes(outcome.payerName)) return `read ${outcome.payerName} ${outcome.amount} (${outcome.detail.reader})`
    return undefined
  }
  if (outcome.status === "parsed") return `read as a deposit of ${outcome.payerName} ${outcome.amount}`
  // Refused by the guard, not merely unread: a trap never reaches the templates.
  return outcome.status === "ignored" ? undefined : `${outcome.status}: ${outcome.detail.reason}`
}

describe("the bank corpus", () => {
  it("has the rows the issue asks for", () => {
    assert.isAtLeast(bankCorpus.length, 200)
    assert.isAtLeast(bankCorpus.filter((r) => r.kind !== "dep").length, 150)
  })

  it("every deposit read exactly, every trap refused by the guard", () => {
    const failures = bankCorpus.flatMap((row) => {
      const wrong = judgeRow(row)
      return wrong === undefined ? [] : [`${row.kind} ${row.bank} ${JSON.stringify(row.text)}: ${wrong}`]
    })
    if (process.env["CORPUS_REPORT"] === "1") report()
    assert.deepStrictEqual(failures, [])
  })

  it("the development corpus too", () => {
    assert.deepStrictEqual(devCorpus.flatMap((row) => judgeRow(row) === undefined ? [] : [`${row.bank} ${row.text}: ${judgeRow(row)}`]), [])
  })
})

const report = () => {
  const groups = new Map<string, { read: number; total: number; reader: number; real: number }>()
  for (const row of bankCorpus) {
    const key = `${row.bank}\t${row.kind}`
    const group = groups.get(key) ?? { read: 0, total: 0, reader: 0, real: 0 }
    const outcome = parseSms({ body: row.text, sender: "01012345678", receivedAt }, templates)
    group.total++
    if (row.provenance.startsWith("real:")) group.real++
    if (judgeRow(row) === undefined) group.read++
    if (outcome.status === "parsed" && outcome.detail.reader === "reader") group.reader++
    groups.set(key, group)
  }
  console.log(["bank\tkind\tright/total\treal\tby the reader", ...[...groups].sort().map(([k, g]) => `${k}\t${g.read}/${g.total}\t${g.real}\t${g.reader}`)].join("\n"))
}
