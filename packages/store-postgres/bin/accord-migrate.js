#!/usr/bin/env node
// A committed entry point, so that npm links the command at install time, before `prepare` has built dist/.
// The Node.js check comes first and imports nothing else: effect 4 needs a newer Node.js than some machines have.
import { requireSupportedNode } from "@accord/cli-options/node-version"

requireSupportedNode("accord-migrate")
await import("../dist/cli.js")
