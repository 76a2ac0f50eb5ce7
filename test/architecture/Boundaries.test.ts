// The import rules docs/ARCHITECTURE.md states, read from the tree: each src/ file's imports are
// parsed (TypeScript's own parser), resolved to files, and held to the rules below. A failure names
// the file, the line and the import.
import { describe, expect, it } from "vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import ts from "typescript"

const root = join(import.meta.dirname, "..", "..")
const src = join(root, "src")

/** Each service's own folder: none imports another's. */
const services = ["recon", "worker", "loops", "admin", "wallet", "meta", "demo"]
/** recon_worker is two folders: the process (worker/) runs the loops (loops/), never the reverse. */
const serviceOf = (folder: string) => folder === "loops" ? "worker" : folder
/** What more than one service uses: imports no service folder (statically). */
const kernel = ["api", "db", "domain", "parse", "actors", "health", "http", "clients", "config", "commands", "observability"]

/**
 * The files commands/ may load, lazily (`import("…")`), and only commands/: each service's entries
 * (its server's layer, a command of its own) and its settings reader (read, with every problem
 * gathered, before anything starts).
 */
const entries = new Set([
  "src/recon/ReconServer.ts", "src/recon/Settings.ts",
  "src/worker/Runtime.ts", "src/worker/Settings.ts",
  "src/admin/AdminServer.ts", "src/admin/Settings.ts", "src/admin/CreateUser.ts",
  "src/wallet/WalletServer.ts", "src/wallet/Settings.ts", "src/wallet/DepositCli.ts",
  "src/meta/cli.ts",
  "src/demo/Demo.ts", "src/demo/Settings.ts",
  "src/health/probe.ts"
])

/**
 * The modules src/api (the HttpApi definitions every server and client derives from) may reach
 * beside its own files and `effect`: schemas and constants, no I/O, no `node:` module.
 */
const apiMay = new Set([
  "src/domain/Records.ts",
  "src/domain/PgValues.ts",
  "src/domain/Money.ts",
  "src/domain/Suggestions.ts",
  "src/domain/HeartbeatJson.ts"
])

type Kind = "value" | "type" | "dynamic"
interface Import {
  readonly from: string
  readonly line: number
  readonly spec: string
  /** A src/ file (relative to the repository), or the package's name. */
  readonly to: string
  readonly local: boolean
  readonly kind: Kind
}

/** Every import of a file: static value and type-only imports and re-exports, and `import("…")`. */
const importsOf = (path: string, text: string): Array<Import> => {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const found: Array<Import> = []
  const add = (node: ts.Node, specifier: ts.Expression, kind: Kind) => {
    if (!ts.isStringLiteralLike(specifier)) return
    const spec = specifier.text
    const local = spec.startsWith(".")
    const to = local
      ? relative(root, join(dirname(join(root, path)), spec)).split("\\").join("/")
      : spec.startsWith("node:") ? spec : spec.split("/").slice(0, spec.startsWith("@") ? 2 : 1).join("/")
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
    found.push({ from: path, line, spec, to, local, kind })
  }
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      // `import { type A }` is a type import too: nothing of the module is used at run time.
      const clause = node.importClause
      const typeOnly = clause !== undefined && (clause.isTypeOnly || (clause.name === undefined &&
        clause.namedBindings !== undefined && ts.isNamedImports(clause.namedBindings) &&
        clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((e) => e.isTypeOnly)))
      add(node, node.moduleSpecifier, typeOnly ? "type" : "value")
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
      add(node, node.moduleSpecifier, node.isTypeOnly ? "type" : "value")
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal, "type")
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments.length > 0) {
      add(node, node.arguments[0]!, "dynamic")
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const files = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

const tree = new Map(files(src).map((file) => {
  const path = relative(root, file).split("\\").join("/")
  return [path, importsOf(path, readFileSync(file, "utf8"))] as const
}))

/** The folder under src/ a file is in (`main` for src/main.ts). */
const folder = (path: string) => {
  const parts = path.split("/")
  return parts.length > 2 ? parts[1]! : "main"
}
const say = (i: Import) => `${i.from}:${i.line} imports ${i.kind === "type" ? "type " : ""}${i.kind === "dynamic" ? `import("${i.spec}")` : `"${i.spec}"`}`
const all = [...tree.values()].flat()
const localImports = all.filter((i) => i.local && i.to.startsWith("src/"))

/** Strongly connected components of a graph with more than one member (Tarjan). */
const cycles = (nodes: Iterable<string>, next: (node: string) => Iterable<string>): Array<Array<string>> => {
  let index = 0
  const order = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const on = new Set<string>()
  const found: Array<Array<string>> = []
  const connect = (node: string) => {
    order.set(node, index)
    low.set(node, index++)
    stack.push(node)
    on.add(node)
    for (const to of next(node)) {
      if (!order.has(to)) {
        connect(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (on.has(to)) low.set(node, Math.min(low.get(node)!, order.get(to)!))
    }
    if (low.get(node) === order.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        on.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const node of nodes) if (!order.has(node)) connect(node)
  return found
}

describe("import boundaries (docs/ARCHITECTURE.md)", () => {
  it("every local import resolves to a file of the tree", () => {
    expect(localImports.filter((i) => !tree.has(i.to)).map(say)).toEqual([])
  })

  it("no service folder imports another service's folder", () => {
    const found = localImports.filter((i) =>
      services.includes(folder(i.from)) && services.includes(folder(i.to)) && serviceOf(folder(i.from)) !== serviceOf(folder(i.to)))
    expect(found.map(say)).toEqual([])
  })

  it("loops/ imports nothing of worker/ (the worker process imports the loops, not the reverse)", () => {
    expect(localImports.filter((i) => folder(i.from) === "loops" && folder(i.to) === "worker").map(say)).toEqual([])
  })

  it("the kernel imports no service folder; only commands/ loads a service, lazily, through its entries", () => {
    const found = localImports.filter((i) => {
      if (!services.includes(folder(i.to)) || folder(i.from) === folder(i.to)) return false
      if (i.kind === "dynamic") return !(folder(i.from) === "commands" && entries.has(i.to))
      return kernel.includes(folder(i.from))
    })
    expect(found.map(say)).toEqual([])
  })

  it("no file but commands/ imports a module lazily, and commands/ only an entry or its own file", () => {
    const found = all.filter((i) => i.kind === "dynamic" && i.local).filter((i) =>
      !(folder(i.from) === "commands" && (entries.has(i.to) || folder(i.to) === "commands")))
    expect(found.map(say)).toEqual([])
  })

  it("src/api reaches only effect, its own files and the pure schema modules (no node: module, no I/O)", () => {
    const found: Array<string> = []
    const seen = new Set<string>()
    const reach = (path: string) => {
      if (seen.has(path)) return
      seen.add(path)
      for (const i of tree.get(path) ?? []) {
        if (i.kind === "dynamic") found.push(say(i))
        else if (!i.local) {
          if (i.to !== "effect") found.push(say(i))
        } else if (folder(i.to) === "api" || apiMay.has(i.to)) reach(i.to)
        else found.push(say(i))
      }
    }
    for (const path of tree.keys()) if (folder(path) === "api") reach(path)
    expect(found).toEqual([])
  })

  it("no cycle between folders (type imports count: a folder's types are part of its surface)", () => {
    // commands/ loading a service's entry lazily is not an edge: nothing of the service is read
    // when commands/ is, and the service may use commands/' life cycle.
    const edges = new Map<string, Map<string, Array<Import>>>()
    for (const i of localImports) {
      if (i.kind === "dynamic" || folder(i.from) === folder(i.to)) continue
      const out = edges.get(folder(i.from)) ?? new Map<string, Array<Import>>()
      out.set(folder(i.to), [...(out.get(folder(i.to)) ?? []), i])
      edges.set(folder(i.from), out)
    }
    const found = cycles(edges.keys(), (node) => edges.get(node)?.keys() ?? []).map((members) =>
      `${members.join(" <-> ")}: ` + members.flatMap((from) =>
        [...(edges.get(from) ?? [])].filter(([to]) => members.includes(to)).map(([, imports]) => say(imports[0]!) +
          (imports.length > 1 ? ` (+${imports.length - 1} more ${from} -> ${folder(imports[0]!.to)})` : ""))).join("; "))
    expect(found).toEqual([])
  })

  it("no cycle between files at run time (value imports)", () => {
    const next = (path: string) => (tree.get(path) ?? []).filter((i) => i.local && i.kind === "value").map((i) => i.to)
    const found = cycles(tree.keys(), next).map((members) =>
      members.flatMap((from) => (tree.get(from) ?? []).filter((i) => i.local && i.kind === "value" && members.includes(i.to)).map(say)).join("; "))
    expect(found).toEqual([])
  })

  it("no migration imports another (a released one is frozen: its text may not depend on a later edit of another)", () => {
    // Released before this rule, frozen (test/db/FrozenMigrations.test.ts), so kept: 0020 built its
    // function from 0017's text; migration 0024 carries the function whole.
    const released = new Set(["src/db/migrations/0020_match_pass.ts -> src/db/migrations/0017_pipeline.ts"])
    const migration = /^src\/db\/migrations\/\d{4}_/
    const found = localImports.filter((i) => migration.test(i.from) && migration.test(i.to) && !released.has(`${i.from} -> ${i.to}`))
    expect(found.map(say)).toEqual([])
    for (const pair of released) expect(localImports.some((i) => `${i.from} -> ${i.to}` === pair)).toBe(true)
  })

  it("the reader sees value, type and lazy imports, and re-exports", () => {
    const text = [
      `import { a } from "../domain/A.ts"`,
      `import type { B } from "../domain/B.ts"`,
      `import { type C } from "./C.ts"`,
      `export { D } from "../db/D.ts"`,
      `import { Schema } from "effect/schema"`,
      `const e = () => import("../worker/E.ts")`,
      `// import { f } from "../admin/F.ts"`
    ].join("\n")
    expect(importsOf("src/commands/X.ts", text).map((i) => [i.to, i.kind, i.line])).toEqual([
      ["src/domain/A.ts", "value", 1],
      ["src/domain/B.ts", "type", 2],
      ["src/commands/C.ts", "type", 3],
      ["src/db/D.ts", "value", 4],
      ["effect", "value", 5],
      ["src/worker/E.ts", "dynamic", 6]
    ])
  })
})
