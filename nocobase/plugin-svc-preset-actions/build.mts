// Builds the plugin into dist/ (`npm run build:plugin` at the repository root): dist/server/index.js
// (CommonJS, as NocoBase's server requires plugins) and dist/client/index.js (UMD, as NocoBase's
// client loads plugins with requirejs), both with recon's rules (src/meta/PrettyField.ts) bundled
// in and NocoBase's own packages, React, antd and Formily left to the host.
import { rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"

const root = dirname(fileURLToPath(import.meta.url))
const started = performance.now()
rmSync(join(root, "dist"), { recursive: true, force: true })
await build({
  input: join(root, "src/server/plugin.ts"),
  platform: "node",
  external: [/^@nocobase\//],
  output: { file: join(root, "dist/server/index.js"), format: "cjs", exports: "named", comments: { legal: false, annotation: false, jsdoc: false } }
})
const globals: Record<string, string> = { react: "React", antd: "antd", "@nocobase/client": "@nocobase/client", "@formily/react": "@formily/react" }
await build({
  input: join(root, "src/client/index.ts"),
  platform: "browser",
  external: Object.keys(globals),
  output: {
    file: join(root, "dist/client/index.js"),
    format: "umd",
    name: "@recon/plugin-svc-preset-actions",
    exports: "named",
    globals,
    comments: { legal: false, annotation: false, jsdoc: false }
  }
})
// The components alone (React left to the host page), for a page that draws them without NocoBase.
await build({
  input: join(root, "src/client/components.ts"),
  platform: "browser",
  external: ["react"],
  output: { file: join(root, "dist/components/index.js"), format: "umd", name: "SvcComponents", exports: "named", globals: { react: "React" } }
})
console.log(`built ${root}/dist in ${Math.round(performance.now() - started)} ms`)
