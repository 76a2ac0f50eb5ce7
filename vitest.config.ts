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
    // The test workers run the services in-process (loops, servers, pools) and allocate a lot of
    // short-lived objects: a 32 MB young generation instead of V8's default scavenges less often
    // (the suite's CPU ~223 → ~205 s, alternated; 64 MB measured no better).
    execArgv: ["--max-semi-space-size=32"],
    reporters: process.env.CI ? ["default"] : ["default"],
    // The tests provoke failures on purpose (database stopped, bad tokens, dying loops), and the
    // services log them: a green run prints only the results. The logs of a failing test are
    // still shown; \`LOG_LEVEL=debug npm test\` (any LOG_LEVEL) shows every test's.
    silent: process.env.LOG_LEVEL !== undefined && process.env.LOG_LEVEL !== "" ? false : "passed-only"
  }
})
