// Every fiber a loop or component in src/ starts goes through one helper, Supervisor.fork, which
// says who answers for its unexpected end (its owner's supervisor, a restart, a reconcile): read
// from the tree, so a plain fork added anywhere fails here.
import { describe, expect, it } from "vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"

const root = join(import.meta.dirname, "..", "..")
const src = join(root, "src")

/** The only files that may start a fiber by hand, and why. */
const allowed: Record<string, string> = {
  "src/actors/Supervisor.ts":
    "the helper itself (Supervisor.fork), and the supervisor whose keepers and children it forks: each child is restarted, each keeper's end escalates"
}

/**
 * Ways for an effect to start a fiber that outlives the expression starting it: Effect's fork
 * family and the fiber collections' run and runtime. Not listed: structured combinators (race,
 * all or forEach with concurrency), which join their fibers; and Effect.run* (runFork, runPromise,
 * runSync), which start a program from outside Effect (a command's main, a signal handler's log
 * line in commands/Lifecycle.ts), not a fiber of a loop or a component.
 */
const forks = /\b(?:Effect\.fork\w*|fork(?:Scoped|Daemon|Child|In|Detach)\b|Fiber(?:Set|Map|Handle)\.(?:run|runtime|makeRuntime|runtimePromise)\b)/g

const files = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/** The source without its comments (a comment may name a fork), line breaks kept for the line numbers. */
const code = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, " ")).replace(/(^|[^:"'`])\/\/.*$/gm, "$1")

describe("forks in src/", () => {
  it("start only through Supervisor.fork (the one place a fiber's unexpected end is answered for)", () => {
    const found: Array<string> = []
    for (const file of files(src)) {
      const path = relative(root, file)
      if (path in allowed) continue
      code(readFileSync(file, "utf8")).split("\n").forEach((line, i) => {
        for (const match of line.matchAll(forks)) found.push(`${path}:${i + 1}: ${match[0]}`)
      })
    }
    expect(found).toEqual([])
  })

  it("the helper's file is in the tree and forks (the allow-list names a real place)", () => {
    for (const path of Object.keys(allowed)) {
      expect(code(readFileSync(join(root, path), "utf8"))).toMatch(forks)
    }
  })

  it("the check sees a plain fork, and not one named in a comment", () => {
    const plain = "  yield* Effect.forkScoped(loop)\n  yield* FiberSet.run(set, x)\n  // Effect.forkDaemon in a comment\n"
    const hits = code(plain).split("\n").flatMap((line) => [...line.matchAll(forks)].map((m) => m[0]))
    expect(hits).toEqual(["Effect.forkScoped", "FiberSet.run"])
  })
})
