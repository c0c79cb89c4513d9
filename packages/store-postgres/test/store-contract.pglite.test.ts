import { runStoreContract } from "@accord/test-support"
import { PgliteStoreLive } from "@accord/store-postgres"

runStoreContract("pglite (in memory)", PgliteStoreLive())
