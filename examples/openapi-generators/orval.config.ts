import { defineConfig } from "orval"

// Paths are relative to this file (the test runs orval in a copy of this directory).
export default defineConfig({
  accord: {
    input: "./openapi.json",
    output: {
      target: "./generated/orval/accord.ts",
      client: "fetch",
      // Read for its module resolution: under NodeNext orval writes the `.js` extension of the mutator's import.
      tsconfig: "./tsconfig.orval.json",
      // The document's server URL is relative (`/api`): the mutator adds the host (src/orval-fetch.ts).
      override: { mutator: { path: "./src/orval-fetch.ts", name: "orvalFetch" } }
    }
  }
})
