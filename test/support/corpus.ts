// The SMS corpora as rows, both in the repository: `test/corpus/sms-dev.tsv` (development) and
// `test/corpus/bank-sms.tsv` (real bank messages and traps; see its README). Columns `bank kind
// provenance text payer_name amount`; `\n` in a text is a line break, `|` separates the accepted
// forms of a payer name.
import { readFileSync } from "node:fs"

export interface CorpusRow {
  readonly bank: string
  readonly kind: "dep" | "wd" | "other"
  readonly provenance: string
  readonly text: string
  readonly names: ReadonlyArray<string>
  readonly amount: string
}

const read = (url: URL): ReadonlyArray<CorpusRow> =>
  readFileSync(url, "utf8").trim().split("\n").slice(1).map((line) => {
    const [bank, kind, provenance, text, names, amount] = line.split("\t")
    return {
      bank: bank!,
      kind: kind as CorpusRow["kind"],
      provenance: provenance!,
      text: text!.replaceAll("\\n", "\n"),
      names: (names ?? "").split("|"),
      amount: amount ?? ""
    }
  })

export const devCorpus = read(new URL("../corpus/sms-dev.tsv", import.meta.url))
export const bankCorpus = read(new URL("../corpus/bank-sms.tsv", import.meta.url))
