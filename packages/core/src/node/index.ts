export * from "./scrypt-hasher.js"
export * from "./token-digest.js"
export * from "./docs-assets.js"
