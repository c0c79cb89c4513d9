#!/usr/bin/env node
// A committed entry point, so that npm links the command at install time, before `prepare` has built dist/.
// dist/main.js checks the Node.js version before it loads anything (@accord/cli-options/node-version).
await import("../dist/main.js")
