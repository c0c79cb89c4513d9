import { runStoreContract } from "@accord/conformance"
import { PgliteStoreLive } from "@accord/store-postgres"

runStoreContract("pglite (in memory)", PgliteStoreLive())
