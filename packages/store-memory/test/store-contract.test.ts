import { runStoreContract } from "@accord/conformance"
import { MemoryStoreLive } from "@accord/store-memory"

runStoreContract("memory", MemoryStoreLive)
