// The console's search over every SMS: POST /api/sms/list (q as payer name, amount, account
// digits or SMS id; status, bank, device, period; paging; waiting_s) and GET /api/sms/export.csv
// (the same filters as query parameters; UTF-8 with BOM; quoting; no cell a spreadsheet would run
// as a formula; every row however many batches it takes), through HTTP on a real database.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { csvCell } from "../../src/admin/SmsExport.ts"
import type { Running } from "../support/recon.ts"
import { consoleBed, request, sql } from "./support.ts"

let db: string
let admin: Running
let token: string

interface NewSms {
  readonly status: string
  readonly body?: string
  readonly payer?: string | null
  readonly amount?: string | null
  readonly bank?: string | null
  readonly device?: string
  readonly receivedAt?: string
}

const addSms = (s: NewSms) =>
  sql(db, (sql) => Effect.map(sql<{ id: bigint }>`INSERT INTO recon.shooter_sms
      (device_id, sender, body, normalized_body, received_at, status, bank, payer_name, amount, parse_detail)
    VALUES (${s.device ?? "phone-a"}, '15882100', ${s.body ?? `body ${Math.random()}`}, ${`n${Math.random()}`},
      ${s.receivedAt === undefined ? new Date() : new Date(s.receivedAt)}, ${s.status}, ${s.bank ?? null}, ${s.payer ?? null}, ${s.amount ?? null},
      ${s.status === "ignored" ? JSON.stringify({ kind: "outgoing", reason: "출금 (withdrawal)" }) : null}::jsonb)
    RETURNING id`, (rows) => Number(rows[0]!.id)))

const ids: Record<string, number> = {}

let close: () => Promise<void>

beforeAll(async () => {
  ({ admin, close, db, token } = await consoleBed("admin_search"))
  ids["kim"] = await addSms({ status: "approved", payer: "김민준", amount: "50000", bank: "KB국민", body: "[KB]834702**717 김민준 입금 50,000", receivedAt: "2026-03-01T10:00:00+09:00" })
  ids["lee"] = await addSms({ status: "manual_review", payer: "이서연", amount: "12.50", bank: "NH농협", body: "농협 입금12.50원 352-****-4273-63 이서연", receivedAt: "2026-03-02T10:00:00+09:00" })
  ids["held"] = await addSms({ status: "need_check", body: "신한 입금 70,000 박서연", device: "phone-b", receivedAt: "2026-03-03T10:00:00+09:00" })
  ids["out"] = await addSms({ status: "ignored", body: "[KB] 출금 8,110 쿠팡", receivedAt: "2026-03-04T10:00:00+09:00" })
  ids["failed"] = await addSms({ status: "parse_failed", body: "신협 이체입금 / 의뢰인 최윤서 금액(30,000)", receivedAt: "2026-03-05T10:00:00+09:00" })
})
afterAll(async () => {
  await close()
})

const list = (body: unknown, as: string | null = token) => request(admin.url, "/api/sms/list", { ...(as === null ? {} : { token: as }), body })
const found = async (body: unknown) => {
  const answer = await list(body)
  assert.strictEqual(answer.http, 200, JSON.stringify(answer.body))
  return (answer.body.data.items as Array<{ id: number }>).map((i) => i.id).filter((id) => Object.values(ids).includes(id)).sort((a, b) => a - b)
}

describe("POST /api/sms/list", () => {
  it("answers the envelope of SMS records with waiting_s, newest first, paged", async () => {
    const answer = await list({ page_size: 2 })
    assert.strictEqual(answer.http, 200)
    assert.deepInclude(answer.body, { status: 200, msg: "success" })
    assert.match(answer.headers.get("authorization") ?? "", /^Bearer /)
    const data = answer.body.data
    assert.deepStrictEqual([data.total, data.page, data.page_size, data.items.length], [5, 1, 2, 2])
    assert.deepStrictEqual(Object.keys(data.items[0]).sort(), [
      "amount", "bank", "body", "created_at", "deposit_id", "device_id", "id", "payer_name", "reason", "received_at", "sender", "status", "waiting_s"
    ])
    const second = await list({ page: 2, page_size: 2 })
    const third = await list({ page: 3, page_size: 2 })
    const all = [...data.items, ...second.body.data.items, ...third.body.data.items].map((i: any) => i.id)
    assert.deepStrictEqual(all, [...Object.values(ids)].sort((a, b) => b - a))
    // waiting_s while a person's action is awaited (need_check, manual_review, unmatched, parse_failed), null otherwise.
    const byId = new Map([...data.items, ...second.body.data.items, ...third.body.data.items].map((i: any) => [i.id, i]))
    for (const key of ["held", "lee", "failed"]) assert.isAbove(byId.get(ids[key])!.waiting_s, 86_400, key)
    for (const key of ["kim", "out"]) assert.isNull(byId.get(ids[key])!.waiting_s, key)
    assert.strictEqual(byId.get(ids["out"])!.reason, "출금 (withdrawal)")
  })

  it("finds by payer name, amount (as written), account digits, SMS id and words of the text", async () => {
    assert.deepStrictEqual(await found({ q: "민준" }), [ids["kim"]])
    assert.deepStrictEqual(await found({ q: "50,000원" }), [ids["kim"]])
    assert.deepStrictEqual(await found({ q: "12.50" }), [ids["lee"]])
    assert.deepStrictEqual(await found({ q: "4273-63" }), [ids["lee"]])
    assert.deepStrictEqual(await found({ q: "834702" }), [ids["kim"]])
    assert.deepStrictEqual(await found({ q: `#${ids["held"]}` }), [ids["held"]])
    assert.deepStrictEqual(await found({ q: "의뢰인 최윤서" }), [ids["failed"]])
    assert.deepStrictEqual(await found({ q: "%" }), [])
    assert.deepStrictEqual(await found({ q: "   " }), Object.values(ids).sort((a, b) => a - b))
  })

  it("filters by every status, bank, device and period", async () => {
    for (const [key, status] of [["kim", "approved"], ["lee", "manual_review"], ["held", "need_check"], ["out", "ignored"], ["failed", "parse_failed"]]) {
      assert.deepStrictEqual(await found({ status }), [ids[key!]], status)
    }
    assert.deepStrictEqual(await found({ status: "duplicate" }), [])
    assert.deepStrictEqual(await found({ bank: "NH농협" }), [ids["lee"]])
    assert.deepStrictEqual(await found({ device_id: "phone-b" }), [ids["held"]])
    assert.deepStrictEqual(await found({ since: "2026-03-02T10:00:00+09:00", until: "2026-03-04T10:00:00+09:00" }), [ids["lee"], ids["held"]])
    assert.deepStrictEqual(await found({ q: "입금", since: "2026-03-03T00:00:00+09:00" }), [ids["held"], ids["failed"]])
  })

  it("refuses bad input with 400, and anyone without a session with 401 before reading the body", async () => {
    for (const body of [{ status: "pending" }, { page_size: 201 }, { page: 0 }, { since: "yesterday" }, { q: 5 }, { q: "x".repeat(201) }, { color: "red" }]) {
      const answer = await list(body)
      assert.strictEqual(answer.http, 400, JSON.stringify(body))
      assert.strictEqual(answer.body.msg, "bad_request")
    }
    assert.strictEqual((await list({}, null)).http, 401)
    assert.strictEqual((await list("{not json", null)).http, 401)
    assert.strictEqual((await list({}, "forged")).http, 401)
  })
})

const exportCsv = (query: string, as: string | null = token) =>
  fetch(`${admin.url}/api/sms/export.csv${query}`, { headers: as === null ? {} : { authorization: `Bearer ${as}` } })

/** A CSV text as rows of cells (RFC 4180: quoted cells may hold commas, quotes and line breaks). */
const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let cell = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === "\"" && text[i + 1] === "\"") (cell += "\"", i++)
      else if (c === "\"") quoted = false
      else cell += c
    } else if (c === "\"") quoted = true
    else if (c === ",") (row.push(cell), cell = "")
    else if (c === "\r" && text[i + 1] === "\n") (row.push(cell), rows.push(row), row = [], cell = "", i++)
    else cell += c
  }
  return rows
}

describe("GET /api/sms/export.csv", () => {
  it("is UTF-8 with a BOM, a header, one row per SMS the filter finds, in Seoul time", async () => {
    const response = await exportCsv("?status=manual_review")
    assert.strictEqual(response.status, 200)
    assert.match(response.headers.get("content-type") ?? "", /^text\/csv; charset=utf-8/)
    assert.match(response.headers.get("content-disposition") ?? "", /^attachment; filename="sms-\d{8}-\d{4}\.csv"$/)
    const bytes = new Uint8Array(await response.arrayBuffer())
    assert.deepStrictEqual([...bytes.slice(0, 3)], [0xef, 0xbb, 0xbf])
    const rows = parseCsv(new TextDecoder().decode(bytes.slice(3)))
    assert.deepStrictEqual(rows[0], ["id", "received_at", "status", "status_label", "bank", "sender", "device_id", "payer_name", "amount", "deposit_id", "waiting_s", "reason", "body"])
    assert.strictEqual(rows.length, 2)
    const [id, receivedAt, status, label, bank, , , payer, amount] = rows[1]!
    assert.deepStrictEqual([Number(id), receivedAt, status, label, bank, payer, amount], [ids["lee"], "2026-03-02T10:00:00+09:00", "manual_review", "수동 검토", "NH농협", "이서연", "12.50"])
    const english = parseCsv((await (await exportCsv("?status=manual_review&lang=en")).text()).slice(1))
    assert.strictEqual(english[1]![3], "Manual review")
  })

  it("quotes what needs quoting and never lets a cell become a formula", async () => {
    const evil = await addSms({ status: "unmatched", payer: "=HYPERLINK(\"http://x\")", amount: "1000", body: "+1 line\n\"two\", three", bank: "@bank" })
    const minus = await addSms({ status: "unmatched", payer: "-2+3", amount: "1001", body: "\tTAB" })
    const rows = parseCsv((await (await exportCsv(`?q=${encodeURIComponent("#")}${evil}`)).text()).slice(1))
    assert.strictEqual(rows.length, 2)
    const row = rows[1]!
    assert.strictEqual(row[7], "'=HYPERLINK(\"http://x\")")
    assert.strictEqual(row[4], "'@bank")
    assert.strictEqual(row[12], "'+1 line\n\"two\", three")
    const other = parseCsv((await (await exportCsv(`?q=${minus}`)).text()).slice(1))[1]!
    assert.deepStrictEqual([other[7], other[12]], ["'-2+3", "'\tTAB"])
    assert.deepStrictEqual([csvCell(null), csvCell(12), csvCell("a,b"), csvCell(" x"), csvCell("plain 한글")], ["", "12", "\"a,b\"", "\" x\"", "plain 한글"])
  })

  it("streams every row across batches, newest first, none twice", async () => {
    await sql(db, (sql) => sql`INSERT INTO recon.shooter_sms (device_id, sender, body, normalized_body, received_at, status, created_at)
      SELECT 'bulk', '15882100', 'bulk ' || g, 'bulk' || g, now(), 'duplicate', now() - (g % 7) * interval '1 microsecond'
      FROM generate_series(1, 1234) AS g`)
    const rows = parseCsv((await (await exportCsv("?device_id=bulk")).text()).slice(1)).slice(1)
    assert.strictEqual(rows.length, 1234)
    assert.strictEqual(new Set(rows.map((r) => r[0])).size, 1234)
    const listed = await list({ device_id: "bulk", page_size: 200 })
    assert.deepStrictEqual(rows.slice(0, 200).map((r) => Number(r[0])), listed.body.data.items.map((i: any) => i.id))
  })

  it("needs the session (401), takes only the filters (400)", async () => {
    const none = await exportCsv("", null)
    assert.strictEqual(none.status, 401)
    assert.deepInclude((await none.json()) as object, { status: 401, msg: "unauthorized" })
    assert.strictEqual((await exportCsv("", "forged")).status, 401)
    for (const query of ["?status=pending", "?since=yesterday", "?color=red", "?lang=fr"]) {
      const answer = await exportCsv(query)
      assert.strictEqual(answer.status, 400, query)
      assert.strictEqual(((await answer.json()) as { msg: string }).msg, "bad_request")
    }
  })
})
