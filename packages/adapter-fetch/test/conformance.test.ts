import { startFetchServer } from "@accord/adapter-fetch/node"
import { runHttpConformance, startWith } from "@accord/test-support"

// The contract's black-box suite against the standalone server: the fetch handler's translation on @hono/node-server,
// CORS on for any origin (the CORS audits call from the fixture's origin).
runHttpConformance("fetch", startWith(startFetchServer, { corsOrigins: "*" }))
