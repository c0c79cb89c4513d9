import { runStoreContract } from "@accord/test-support"
import { PgliteStoreLive } from "@accord/store-postgres"

runStoreContract("pglite (in memory)", PgliteStoreLive(), { eventsPending: "the SQL outbox is phase B of issue 31" })
