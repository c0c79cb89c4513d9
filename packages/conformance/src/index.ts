export { runStoreContract } from "./store-contract.js"
