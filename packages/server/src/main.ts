#!/usr/bin/env node
// The process's entry point (`accord`, `node dist/main.js`, each cluster worker): the Node.js check comes before
// the program is loaded, since effect 4 would fail obscurely on an older Node.js (README, "Deploying").
import { requireSupportedNode } from "@accord/cli-options/node-version"

requireSupportedNode("accord")
await import("./cli.js")
