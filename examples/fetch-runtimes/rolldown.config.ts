import type { BuildOptions } from "rolldown"

// The Worker's bundle: `node:crypto`, which the scrypt hasher and the token digests import, is left to workerd's
// `nodejs_compat`. test/runtimes.test.ts builds the same bundle in memory.
const workerBundle: BuildOptions = {
  input: new URL("src/worker.ts", import.meta.url).pathname,
  platform: "neutral",
  external: [/^node:/],
  logLevel: "silent",
  output: { file: new URL("dist/worker.js", import.meta.url).pathname, format: "esm" }
}
export default workerBundle
