export * from "./create-public-plan-entry.js"
export * from "./language-preferences.js"
export * from "./payment-methods.js"
