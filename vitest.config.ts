import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

// Tests import workspace packages from their TypeScript sources (the "@accord/source" export condition), so
// `vitest` needs no build; `npm test` still builds first because some tests spawn the compiled server.
// A custom list replaces Vite's default server conditions; "module" is left out, as Node leaves it out: it selects
// bundler-only builds (OpenTelemetry's ESM files import paths without extensions, which Node cannot load).
const conditions = ["@accord/source", "node", "development|production"]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "docs/examples/**/*.test.ts"],
    // Vitest 5 clears every mock before each test by default; the README example tests record a call at import time
    // and assert it in a test, as they did under Vitest 3.
    clearMocks: false,
    // A database of the suites' own whose public schema already holds Accord's tables (see the file).
    globalSetup: ["./vitest.global-setup.ts"],
    // Most of the suite waits on servers, sockets and processes it starts, so two files run at once even on a 2-core
    // machine (Vitest's default, one core fewer than the machine has, ran the suite one file at a time there). No
    // test judges a duration, so the sharing makes a run shorter, never red.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
