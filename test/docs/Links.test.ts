// The documentation holds together: every relative link of README.md, BENCHMARKS.md and docs/*.md
// reaches a file, and a `#anchor` a heading of the page it names (GitHub's heading ids); the README
// stays a front door (at most 150 lines) that links each page of docs/ exactly once.
import { assert, describe, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))
const pages = ["README.md", "BENCHMARKS.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]

/** The text outside fenced code blocks (a link inside one is an example, not a link). */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, "")

/** GitHub's ids of a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
const anchors = (text: string) => {
  const seen = new Map<string, number>()
  const ids = new Set<string>()
  for (const [, heading] of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading!.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M} _-]/gu, "").replaceAll(" ", "-")
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    ids.add(n === 0 ? base : `${base}-${n}`)
  }
  return ids
}

/** Relative link targets of a page (`[text](target)` and images), without web and mail addresses. */
const links = (text: string) =>
  [...prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))

describe("the documentation's links", () => {
  it("every relative link reaches a file, and every anchor a heading of its page", () => {
    const broken: Array<string> = []
    for (const page of pages) {
      const text = readFileSync(join(root, page), "utf8")
      for (const target of links(text)) {
        const [path, anchor] = target.split("#", 2) as [string, string | undefined]
        const file = path === "" ? join(root, page) : join(root, dirname(page), decodeURIComponent(path))
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no file ${relative(root, file)})`)
        } else if (anchor !== undefined && file.endsWith(".md") && !anchors(readFileSync(file, "utf8")).has(anchor)) {
          broken.push(`${page}: ${target} (no heading #${anchor} in ${relative(root, file)})`)
        }
      }
    }
    assert.deepStrictEqual(broken, [])
  })

  it("the README is at most 150 lines and links each page of docs/ exactly once", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8")
    assert.isAtMost(readme.split("\n").length, 150)
    const linked = links(readme).map((target) => target.split("#", 1)[0]!)
    for (const page of pages.filter((p) => p.startsWith("docs/"))) {
      assert.strictEqual(linked.filter((target) => target === page).length, 1, `${page} linked once from the README`)
    }
  })
})
