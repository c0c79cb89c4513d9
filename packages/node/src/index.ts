// @accord/node: the union of its five roles, for a host that wants one import. Accord's own packages import the role
// they use (lint: eslint.config.js), so that a store loads no HTTP server and a host that only hashes passwords no
// node:http.

export * from "./bridge/index.js"
export * from "./server/index.js"
export * from "./scrypt-hasher.js"
export * from "./stop-signals.js"
export * from "./token-digest.js"
