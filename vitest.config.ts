import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: a few files at a time keeps PostgreSQL and the servers responsive.
    maxWorkers: 3,
    // Files share their worker processes instead of each loading effect and the project again
    // (~55 s of the suite's ~300 s of CPU). Each file makes its own databases, ports and files;
    // none may rely on module state another left (docs/TESTING.md).
    isolate: false,
    reporters: process.env.CI ? ["default"] : ["default"],
    // The tests provoke failures on purpose (database stopped, bad tokens, dying loops), and the
    // services log them: a green run prints only the results. The logs of a failing test are
    // still shown; \`LOG_LEVEL=debug npm test\` (any LOG_LEVEL) shows every test's.
    silent: process.env.LOG_LEVEL !== undefined && process.env.LOG_LEVEL !== "" ? false : "passed-only"
  }
})
