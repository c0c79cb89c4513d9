export { runStoreContract, type StoreServices } from "./store-contract.js"
