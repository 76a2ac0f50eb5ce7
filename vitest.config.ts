import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: a few files at a time keeps PostgreSQL and the servers responsive.
    maxWorkers: 3,
    reporters: process.env.CI ? ["default"] : ["default"]
  }
})
