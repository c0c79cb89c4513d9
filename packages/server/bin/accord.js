#!/usr/bin/env node
// A committed entry point, so that npm links the command at install time, before `prepare` has built dist/.
// The Node.js check comes first and imports nothing: effect 4 needs Node 22.19 or newer ("engines" in package.json),
// and on an older one the program would fail later, obscurely, or not at all.
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(`accord: Node.js 22.19 or newer is required; this is ${process.version}\n`)
  process.exit(2)
}
await import("../dist/main.js")
