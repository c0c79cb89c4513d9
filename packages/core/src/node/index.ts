export * from "./scrypt-hasher.js"
export * from "./token-digest.js"
