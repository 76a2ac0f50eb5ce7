import { defineConfig } from "vitest/config"

// `npm run test:nocobase`: the metadata doctor against a real NocoBase server (test/**/*.nocobase.ts),
// apart from `npm test`. The server is installed once into ~/.cache/recon-nocobase ($RECON_NOCOBASE_CACHE).
export default defineConfig({
  test: {
    include: ["test/**/*.nocobase.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 600_000,
    hookTimeout: 1_200_000,
    maxWorkers: 1
  }
})
