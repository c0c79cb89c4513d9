import { defineConfig } from "@hey-api/openapi-ts"

// Paths are relative to where `openapi-ts` runs: this directory (the test runs it in a copy of it).
export default defineConfig({
  input: "./openapi.json",
  // hey-api looks for a tsconfig from its own install directory, not from here, so it cannot see that this code is
  // compiled under NodeNext: the `.js` extension of its relative imports is said explicitly.
  output: { path: "./generated/hey-api", module: { extension: ".js" } },
  plugins: ["@hey-api/client-fetch"]
})
