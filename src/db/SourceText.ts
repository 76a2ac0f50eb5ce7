// Text files that ship with the code (stored functions in .sql, data in .json), read once when the
// module that names them loads, by a path relative to that module: `sourceText(import.meta.url,
// "./x.sql")`. From src/ (tests, benches, `node` on a .ts file) the file is read from disk; the
// build (build.ts) writes each such call's file into the bundle as a string literal, so dist/ and
// the container image carry the text and read no file. Only this literal form is allowed: the
// build refuses any other call (a computed path it could not inline).
import { readFileSync } from "node:fs"

/** The text of the file at `path` (relative to the module at `base`, its `import.meta.url`). */
export const sourceText = (base: string, path: string): string => readFileSync(new URL(path, base), "utf8")
