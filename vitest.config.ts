import { defineConfig } from "vitest/config"

// Tests import workspace packages from their TypeScript sources (the "@accord/source" export condition), so
// `vitest` needs no build; `npm test` still builds first because some tests spawn the compiled server.
// The rest are Vite's default server conditions, which a custom list replaces.
const conditions = ["@accord/source", "module", "node", "development|production"]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "docs/examples/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
