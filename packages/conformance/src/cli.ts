import { runCli } from "./audits/cli.js"

// The `accord-conformance` command (bin/accord-conformance.js imports this module): see src/audits/cli.ts.
process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text)
})
