export { makeMemoryStore, MemoryStoreLive } from "./memory-store.js"
