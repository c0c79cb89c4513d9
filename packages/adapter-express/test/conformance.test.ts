import { startExpressServer } from "@accord/adapter-express"
import { runHttpConformance, startWith } from "@accord/conformance"

// The contract's black-box suite against the standalone Express server on a fresh memory store.
runHttpConformance("express", startWith(startExpressServer))
