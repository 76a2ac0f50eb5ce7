import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import {
  commaSeparated,
  formatUnixTimestamp,
  htmlToPlainText,
  parseSeoulDateTime,
  prettyDisplay,
  prettyNodeFor,
  rewriteInsertAdjacentRowKey,
  type SvcPrettyFieldProps
} from "../../src/meta/PrettyField.ts"

const props = (uiKind: SvcPrettyFieldProps["uiKind"], extra: Partial<SvcPrettyFieldProps> = {}): SvcPrettyFieldProps => ({
  fieldName: "f",
  uiKind,
  preview: "none",
  copyable: false,
  validator: "none",
  ellipsis: false,
  ...extra
})

describe("SvcPrettyField display rules", () => {
  it("attachment_url with preview image is an image preview; unsafe sources are plain text", () => {
    assert.deepStrictEqual(prettyDisplay("https://cdn.example.com/a.png", props("attachment_url", { preview: "image" })), {
      kind: "image",
      src: "https://cdn.example.com/a.png"
    })
    assert.deepStrictEqual(prettyDisplay("cdn.example.com/a.png", props("attachment_url", { preview: "image" })), {
      kind: "image",
      src: "https://cdn.example.com/a.png"
    })
    const dataUri = "data:image/png;base64,iVBORw0KGgo="
    assert.deepStrictEqual(prettyDisplay(dataUri, props("attachment_url", { preview: "image" })), { kind: "image", src: dataUri })
    assert.strictEqual(prettyDisplay("javascript:alert(1)", props("attachment_url", { preview: "image" })).kind, "text")
    assert.deepStrictEqual(prettyDisplay("https://x.test/f.pdf", props("attachment_url", { preview: "download" })), {
      kind: "link",
      href: "https://x.test/f.pdf",
      text: "https://x.test/f.pdf",
      download: true
    })
  })

  it("url, email, phone and domain are links with the right scheme", () => {
    const href = (value: string, kind: SvcPrettyFieldProps["uiKind"]) => {
      const shown = prettyDisplay(value, props(kind))
      return shown.kind === "link" ? shown.href : `(${shown.kind})`
    }
    assert.strictEqual(href("https://example.com/a?b=1", "url"), "https://example.com/a?b=1")
    assert.strictEqual(href("HTTP://example.com", "url"), "HTTP://example.com")
    assert.strictEqual(href("example.com/path", "url"), "https://example.com/path")
    assert.strictEqual(href("//cdn.example.com/x", "url"), "https://cdn.example.com/x")
    assert.strictEqual(href("localhost:8080/admin", "url"), "https://localhost:8080/admin")
    assert.strictEqual(href("javascript:alert(1)", "url"), "(text)")
    assert.strictEqual(href("data:text/html,hi", "url"), "(text)")
    assert.strictEqual(href("ops@example.co.kr", "email"), "mailto:ops@example.co.kr")
    assert.strictEqual(href("mailto:ops@example.com", "email"), "mailto:ops@example.com")
    assert.strictEqual(href("not an email", "email"), "(text)")
    assert.strictEqual(href("+82 10-1234-5678", "phone"), "tel:+821012345678")
    assert.strictEqual(href("010-1234-5678", "phone"), "tel:01012345678")
    assert.strictEqual(href("call me", "phone"), "(text)")
    assert.strictEqual(href("Shop.Example.COM", "domain"), "https://shop.example.com")
    assert.strictEqual(href("https://example.com/", "domain"), "https://example.com")
    assert.strictEqual(href("not a domain", "domain"), "(text)")
    // the text shown is the value as stored
    assert.deepStrictEqual(prettyDisplay("010-1234-5678", props("phone")), { kind: "link", href: "tel:01012345678", text: "010-1234-5678", download: false })
  })

  it("unix_timestamp is always Asia/Seoul, in seconds or milliseconds, whatever svcMeta.timezone says", () => {
    const expected = { kind: "time", text: "2024-03-01 09:00:00", iso: "2024-03-01T09:00:00+09:00", timeZone: "Asia/Seoul" } as const
    assert.deepStrictEqual(prettyDisplay(1709251200, props("unix_timestamp")), expected)
    assert.deepStrictEqual(prettyDisplay("1709251200", props("unix_timestamp")), expected)
    assert.deepStrictEqual(prettyDisplay(1709251200000n, props("unix_timestamp")), expected)
    assert.deepStrictEqual(prettyDisplay(0, props("unix_timestamp")), { ...expected, text: "1970-01-01 09:00:00", iso: "1970-01-01T09:00:00+09:00" })
    assert.deepStrictEqual(prettyDisplay(null, props("unix_timestamp")), { kind: "empty" })
    assert.strictEqual(prettyDisplay("soon", props("unix_timestamp")).kind, "text")
    // a node built from a field whose svcMeta asks for UTC still shows Seoul time
    const built = prettyNodeFor("customers", { name: "joined_ts", interface: "unixTimestamp", options: { svcMeta: { uiKind: "unix_timestamp", timezone: "UTC" } } })
    assert.strictEqual(built._tag, "ok")
    if (built._tag === "ok") assert.deepStrictEqual(prettyDisplay(1709251200, built.node["x-component-props"]), expected)
  })

  it("the edit drawer writes Seoul wall time back as the same timestamp", () => {
    assert.strictEqual(parseSeoulDateTime("2024-03-01 09:00:00"), 1709251200)
    assert.strictEqual(parseSeoulDateTime("2024-03-01T09:00"), 1709251200)
    assert.strictEqual(parseSeoulDateTime("2024-03-01"), 1709218800)
    assert.strictEqual(parseSeoulDateTime("2024-03-01T00:00:00Z"), 1709251200)
    assert.strictEqual(parseSeoulDateTime("2024-02-31 00:00"), undefined)
    assert.strictEqual(parseSeoulDateTime("yesterday"), undefined)
    fc.assert(fc.property(fc.integer({ min: 631_152_000, max: 4_102_444_800 }), (seconds) => {
      const shown = formatUnixTimestamp(seconds)
      return shown !== undefined && parseSeoulDateTime(shown.text) === seconds && shown.iso.endsWith("+09:00")
    }))
  })

  it("richtext_html shows the plain text of the HTML", () => {
    const html = `<p>Hello&nbsp;<b>world</b> &amp; co</p><script>alert("x")</script><style>p{}</style><!-- note --><ul><li>one</li><li>two</li></ul>&#x1F600; &#65;&lt;tag&gt;`
    assert.strictEqual(htmlToPlainText(html), "Hello world & co one two 😀 A<tag>")
    assert.deepStrictEqual(prettyDisplay(html, props("richtext_html", { ellipsis: true })), {
      kind: "text",
      text: "Hello world & co one two 😀 A<tag>",
      ellipsis: true
    })
    assert.deepStrictEqual(prettyDisplay("<p> </p>", props("richtext_html")), { kind: "empty" })
  })

  it("m2m_array and multi_select are comma-separated text", () => {
    assert.strictEqual(commaSeparated(["a", "b", "c"]), "a, b, c")
    assert.strictEqual(commaSeparated([{ label: "Red" }, { name: "Blue" }, { value: 3 }, 4]), "Red, Blue, 3, 4")
    assert.strictEqual(commaSeparated(`["x","y"]`), "x, y")
    assert.deepStrictEqual(prettyDisplay(["vip", "new"], props("multi_select")), { kind: "text", text: "vip, new", ellipsis: false })
    assert.deepStrictEqual(prettyDisplay([], props("m2m_array")), { kind: "empty" })
  })

  it("copyable adds a copy action with the text a person would paste", () => {
    assert.deepStrictEqual(prettyDisplay("ops@example.com", props("email", { copyable: true })), {
      kind: "link",
      href: "mailto:ops@example.com",
      text: "ops@example.com",
      download: false,
      copy: "ops@example.com"
    })
    const time = prettyDisplay(1709251200, props("unix_timestamp", { copyable: true }))
    assert.strictEqual(time.kind === "time" ? time.copy : undefined, "2024-03-01 09:00:00")
    assert.notProperty(prettyDisplay("12.5", props("money")), "copy")
    assert.deepStrictEqual(prettyDisplay("12.5", props("money", { copyable: true })), { kind: "text", text: "12.5", ellipsis: false, copy: "12.5" })
    assert.deepStrictEqual(prettyDisplay("", props("url", { copyable: true })), { kind: "empty" })
  })
})

describe("SvcPrettyField node from svcMeta", () => {
  it("builds the read-only node with all six props", () => {
    assert.deepStrictEqual(
      prettyNodeFor("customers", { name: "homepage", interface: "url", options: { svcMeta: { uiKind: "url", copyable: true } } }),
      {
        _tag: "ok",
        node: {
          type: "string",
          name: "homepage",
          "x-collection-field": "customers.homepage",
          "x-component": "SvcPrettyField",
          "x-read-pretty": true,
          "x-component-props": { fieldName: "homepage", uiKind: "url", preview: "link", copyable: true, validator: "url", ellipsis: true }
        }
      }
    )
    const avatar = prettyNodeFor("customers", { name: "avatar_url", options: { svcMeta: { uiKind: "attachment_url", preview: "image", validator: "url" } } })
    assert.deepInclude(avatar._tag === "ok" ? avatar.node["x-component-props"] : {}, { preview: "image", validator: "url", copyable: false })
    // no svcMeta: the interface tells the kind
    const email = prettyNodeFor("customers", { name: "email", interface: "email", options: {} })
    assert.deepInclude(email._tag === "ok" ? email.node["x-component-props"] : {}, { uiKind: "email", preview: "link", validator: "none", ellipsis: false })
  })

  it("refuses malformed svcMeta and fields with no kind", () => {
    assert.deepStrictEqual(prettyNodeFor("products", { name: "bad", options: { svcMeta: { uiKind: "markdown", colour: "red" } } }), {
      _tag: "error",
      problems: [
        `svcMeta: uiKind "markdown" is not url, attachment_url, internal_path, domain, email, phone, richtext_html, unix_timestamp, money, percent, odds, m2m_array, multi_select`,
        `svcMeta: unknown key "colour"`
      ]
    })
    assert.strictEqual(prettyNodeFor("products", { name: "title", interface: "input", options: {} })._tag, "error")
    assert.strictEqual(prettyNodeFor("products", { name: "t", options: { svcMeta: "url" } })._tag, "error")
    assert.strictEqual(prettyNodeFor("products", { name: "t", options: { svcMeta: { uiKind: "url", timezone: "Mars/Base" } } })._tag, "error")
  })
})

describe("uiSchemas:insertAdjacent rowKey rewrite", () => {
  const keys: Record<string, string> = { orders: "guid", users: "id" }
  const keyOf = (collection: string, dataSource: string) => dataSource === "main" ? keys[collection] : undefined
  const block = (collection: string, dataSource = "main") => ({
    schema: {
      type: "void",
      "x-decorator": "TableBlockProvider",
      "x-decorator-props": { collection, dataSource, action: "list", rowKey: "id" },
      "x-component": "CardItem",
      properties: {
        actions: { type: "void", "x-component": "ActionBar", properties: {} },
        k3w9: { type: "array", "x-component": "TableV2", "x-component-props": { rowKey: "id", rowSelection: { type: "checkbox" } } }
      }
    },
    wrap: null
  })

  it("rewrites rowKey id to the collection's filterTargetKey in the decorator and TableV2, without touching the input", () => {
    const payload = block("orders")
    const copy = JSON.parse(JSON.stringify(payload))
    const out = rewriteInsertAdjacentRowKey(payload, keyOf)
    assert.deepStrictEqual(payload, copy)
    assert.strictEqual(out.payload.schema["x-decorator-props"].rowKey, "guid")
    assert.strictEqual(out.payload.schema.properties.k3w9["x-component-props"].rowKey, "guid")
    assert.deepStrictEqual(out.payload.schema.properties.k3w9["x-component-props"].rowSelection, { type: "checkbox" })
    assert.deepStrictEqual(out.rewrites, [
      { path: "schema.x-decorator-props.rowKey", collection: "orders", from: "id", to: "guid" },
      { path: "schema.properties.k3w9.x-component-props.rowKey", collection: "orders", from: "id", to: "guid" }
    ])
  })

  it("leaves collections keyed by id, unknown collections and other data sources alone", () => {
    for (const payload of [block("users"), block("nothing"), block("orders", "external")]) {
      const out = rewriteInsertAdjacentRowKey(payload, keyOf)
      assert.deepStrictEqual(out.payload, payload)
      assert.deepStrictEqual(out.rewrites, [])
    }
    const plain = { schema: { type: "array", "x-component": "TableV2", "x-component-props": { rowKey: "id" } } }
    assert.deepStrictEqual(rewriteInsertAdjacentRowKey(plain, keyOf).rewrites, [])
  })
})
