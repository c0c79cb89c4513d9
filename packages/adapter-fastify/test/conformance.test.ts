import { startFastifyServer } from "@accord/adapter-fastify"
import { runHttpConformance, startWith } from "@accord/test-support"

// The contract's black-box suite against the standalone Fastify server on a fresh memory store, with CORS on for any
// origin (the CORS audits call from the fixture's origin).
runHttpConformance("fastify", startWith(startFastifyServer, { corsOrigins: "*" }))
