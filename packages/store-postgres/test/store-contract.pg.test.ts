import { describe } from "@effect/vitest"
import { runStoreContract } from "@accord/test-support"
import { databaseUrl, skipReason, storeInFreshSchema } from "./postgres-helpers.js"

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `postgres (skipped: ${skipReason})` : "postgres",
  () => {
    runStoreContract("postgres (node-postgres pool, fresh schema)", storeInFreshSchema(databaseUrl ?? "").layer)
  }
)
