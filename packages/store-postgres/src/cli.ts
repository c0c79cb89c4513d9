#!/usr/bin/env node
import { runMigrateCli } from "./migrate-cli.js"

process.exitCode = await runMigrateCli(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(line + "\n"),
  err: (line) => process.stderr.write(line + "\n")
})
