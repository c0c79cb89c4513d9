import { startFetchServer } from "@accord/adapter-fetch/node"
import { runHttpConformance, startWith } from "@accord/conformance"

// The contract's black-box suite against the standalone server: the fetch handler's translation on @hono/node-server.
runHttpConformance("fetch", startWith(startFetchServer))
