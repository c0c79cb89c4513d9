export * from "./domain/index.js"
export * from "./ports/index.js"
export * from "./use-cases/index.js"
export * from "./http/index.js"
