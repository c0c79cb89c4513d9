import { startFastifyServer } from "@accord/adapter-fastify"
import { runHttpConformance, startWith } from "@accord/conformance"

// The contract's black-box suite against the standalone Fastify server on a fresh memory store.
runHttpConformance("fastify", startWith(startFastifyServer))
