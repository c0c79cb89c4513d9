import { startFastifyServer } from "@accord/adapter-fastify"
import { startKoaServer } from "@accord/adapter-koa"
import { startExpressServer } from "@accord/adapter-express"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { runHttpConformance, startOnRuntime, startWith } from "@accord/test-support"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { PgliteStoreLive } from "@accord/store-postgres"
import { afterAll, beforeAll, describe } from "@effect/vitest"
import { Layer, ManagedRuntime } from "effect"
import { databaseUrl, skipReason, storeInFreshSchema } from "./postgres-helpers.js"

// The contract's black-box suite, for every adapter, on store-postgres: the same SQL on PGlite (always) and on a
// PostgreSQL server (when DATABASE_URL is set).

// CORS on for any origin, so that the CORS audits run (makeAuditFixture).
const CORS = { corsOrigins: "*" } as const

// One PGlite database for every adapter: it takes seconds to start, and the suite's ids and tokens are random per
// run, so the four runs do not see each other's rows.
const pglite = ManagedRuntime.make(Layer.merge(PgliteStoreLive(), ScryptPasswordHasherLive(testScryptCost)))
// Built here, with room for a busy machine, rather than inside the suite's own 30 s start-up hook.
beforeAll(() => pglite.context(), 120_000)
afterAll(() => pglite.dispose())

runHttpConformance("fastify on PGlite", startOnRuntime(startFastifyServer, pglite, CORS))
runHttpConformance("koa on PGlite", startOnRuntime(startKoaServer, pglite, CORS))
runHttpConformance("express on PGlite", startOnRuntime(startExpressServer, pglite, CORS))
runHttpConformance("fetch on PGlite", startOnRuntime(startFetchServer, pglite, CORS))

// On the server, each run gets a schema of its own, dropped when its server closes.
describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `on a PostgreSQL server (${skipReason})` : "on a PostgreSQL server",
  () => {
    const url = databaseUrl ?? ""
    runHttpConformance(
      "fastify on postgres",
      startWith(startFastifyServer, { ...CORS, store: storeInFreshSchema(url) })
    )
    runHttpConformance("koa on postgres", startWith(startKoaServer, { ...CORS, store: storeInFreshSchema(url) }))
    runHttpConformance(
      "express on postgres",
      startWith(startExpressServer, { ...CORS, store: storeInFreshSchema(url) })
    )
    runHttpConformance("fetch on postgres", startWith(startFetchServer, { ...CORS, store: storeInFreshSchema(url) }))
  }
)
