export { makeMemoryStore, MemoryStoreLive, type MemoryStoreServices } from "./memory-store.js"
