import { startExpressServer } from "@accord/adapter-express"
import { runHttpConformance, startWith } from "@accord/test-support"

// The contract's black-box suite against the standalone Express server on a fresh memory store, with CORS on for any
// origin (the CORS audits call from the fixture's origin).
runHttpConformance("express", startWith(startExpressServer, { corsOrigins: "*" }))
