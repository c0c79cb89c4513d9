import { startKoaServer } from "@accord/adapter-koa"
import { runHttpConformance, startWith } from "@accord/test-support"

// The contract's black-box suite against the standalone Koa server on a fresh memory store, with CORS on for any
// origin (the CORS audits call from the fixture's origin).
runHttpConformance("koa", startWith(startKoaServer, { corsOrigins: "*" }))
