import { runStoreContract } from "@accord/test-support"
import { MemoryStoreLive } from "@accord/store-memory"

runStoreContract("memory", MemoryStoreLive, { prunes: false })
